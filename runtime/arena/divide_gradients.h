// DivideGradients: every gradient of an arena divided by a whole number, as the average of
// gradients summed over an aggregation window (`optimizations.average_aggregated_gradients`)
// where no exchange did it.
//
//   absl::Status s = DivideGradients(arena, /*divisor=*/4, device_ops);
//
// Each value is multiplied by 1 / divisor computed in its own precision (float32 or float64),
// rounded once. Thread-safety: nothing else may use the gradients meanwhile.
#ifndef COHORT_RUNTIME_ARENA_DIVIDE_GRADIENTS_H_
#define COHORT_RUNTIME_ARENA_DIVIDE_GRADIENTS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "runtime/arena/device_gradient_ops.h"
#include "runtime/arena/tensor_arena.h"

namespace cohort {

// Blocks in device memory are divided there, enqueued through `device` when it is given, and in a
// host copy otherwise. UNIMPLEMENTED for a block of another dtype than float32 or float64.
absl::Status DivideGradients(TensorArena& arena, uint64_t divisor,
                             DeviceGradientOps* device = nullptr);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_DIVIDE_GRADIENTS_H_
