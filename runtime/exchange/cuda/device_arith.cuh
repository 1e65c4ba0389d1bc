// Arithmetic the exchange's kernels share, rounded as the CPU codecs round: one operation at a
// time, never fused into a multiply-add.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_DEVICE_ARITH_CUH_
#define COHORT_RUNTIME_EXCHANGE_CUDA_DEVICE_ARITH_CUH_

namespace cohort {

// value * scale, or value itself when scale is 1.
__device__ inline float Scaled(float value, float scale) {
  return scale == 1.0f ? value : __fmul_rn(value, scale);
}

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_DEVICE_ARITH_CUH_
