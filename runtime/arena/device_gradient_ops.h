// DeviceGradientOps: what the training loop does to gradients in device memory between backward
// and the optimizer step (averaging an aggregation window, the guard of
// `optimizations.nonfinite_gradients`), done on the device, enqueued on the plugin's compute
// stream after the work already there, so no gradient is copied to the host and nothing waits for
// the whole device. The CUDA implementation comes with the CUDA exchange module
// (DeviceExchange::gradient_ops); tests give one that works on host memory posing as a device.
//
//   ops.Divide(block.grad, block.dtype, block.element_count, 4);        // enqueued
//   ops.CheckFinite(block.grad, block.dtype, block.element_count);      // enqueued
//   absl::StatusOr<bool> bad = ops.TakeNonFinite();                     // one flag read
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_ARENA_DEVICE_GRADIENT_OPS_H_
#define COHORT_RUNTIME_ARENA_DEVICE_GRADIENT_OPS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "cohort/plugin.h"

namespace cohort {

class DeviceGradientOps {
 public:
  virtual ~DeviceGradientOps() = default;

  // Enqueues grad[i] *= 1 / divisor over `count` elements of `dtype` (float32 or float64) at
  // `grad`: 1 / divisor computed in the dtype, each product rounded once, as the CPU does.
  // INVALID_ARGUMENT for another dtype or a divisor of 0.
  virtual absl::Status Divide(void* grad, cohort_dtype dtype, uint64_t count, uint64_t divisor) = 0;

  // Enqueues a check of `count` elements of `dtype` at `grad` for NaN or infinity; dtypes other
  // than float32 and float64 are not checked.
  virtual absl::Status CheckFinite(const void* grad, cohort_dtype dtype, uint64_t count) = 0;

  // Waits for the checks enqueued so far and says whether any of them, since the previous call,
  // met a value that is not finite.
  virtual absl::StatusOr<bool> TakeNonFinite() = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_DEVICE_GRADIENT_OPS_H_
