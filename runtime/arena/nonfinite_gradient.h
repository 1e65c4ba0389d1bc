// FindNonFiniteGradient: the first NaN or infinity among an arena's float32 gradients, for the
// guard of `optimizations.nonfinite_gradients` (see docs/config.md).
//
//   absl::StatusOr<std::optional<NonFiniteGradient>> bad = FindNonFiniteGradient(arena, ops);
//   if (bad.ok() && *bad) Log(DescribeNonFiniteGradient(arena, **bad));  // "tensor 'w1' element 17
//   is nan"
//
// Blocks of another dtype are passed over. Thread-safety: reads the gradients; nothing may write
// them meanwhile.
#ifndef COHORT_RUNTIME_ARENA_NONFINITE_GRADIENT_H_
#define COHORT_RUNTIME_ARENA_NONFINITE_GRADIENT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/arena/arena_shard.h"
#include "runtime/arena/device_gradient_ops.h"
#include "runtime/arena/tensor_arena.h"

namespace cohort {

struct NonFiniteGradient {
  size_t tensor = 0;     // registration order
  uint64_t element = 0;  // within the tensor
  float value = 0;       // a NaN or an infinity
};

// The first non-finite element in block `block`, elements [offset, offset + count), if any; a
// block in device memory is passed over (nullopt), as the range is read in place.
std::optional<NonFiniteGradient> FindNonFiniteGradient(const TensorArena& arena, size_t block,
                                                       uint64_t offset, uint64_t count);

// The first non-finite element over every float32 block, in block order; with a `shard` of
// several ranks (ZeRO), over the shard's range of each block only. Blocks in device memory are
// checked there when `device` is given (its DeviceGradientOps, one flag read for all of them), and
// their range copied to the host only to find the element once that check says one is there;
// without `device` it is copied to be read. An error only when a check or a copy fails.
absl::StatusOr<std::optional<NonFiniteGradient>> FindNonFiniteGradient(
    const TensorArena& arena, DeviceGradientOps* device = nullptr, ArenaShard shard = {});

// "tensor 'w1' element 17 is nan" (or "inf", "-inf").
std::string DescribeNonFiniteGradient(const TensorArena& arena, const NonFiniteGradient& found);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_NONFINITE_GRADIENT_H_
