// The CUDA kernels of the exchange, behind host functions that enqueue them on a stream and return
// the launch error (cudaSuccess once enqueued; a fault inside a kernel shows at the next
// synchronization). Element conversions come from float_bits.h, so the device produces the bits
// the CPU codecs do; multiplications and additions are rounded one at a time (no fused
// multiply-add), as on the CPU.
//
//   EnqueueEncode(WireFormat::kFloat16, grad, n, 0.5f, wire, stream);   // wire = fp16(grad * 0.5)
//
// Thread-safety: the functions keep no state; a TopKScratch is used by one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_EXCHANGE_KERNELS_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_EXCHANGE_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace cohort {

enum class WireFormat { kFloat16, kBfloat16 };

// data[i] *= scale (nothing when scale is 1).
cudaError_t EnqueueScale(float* data, uint64_t count, float scale, cudaStream_t stream);

// out[i] = encoding of (in[i] * scale).
cudaError_t EnqueueEncode(WireFormat format, const float* in, uint64_t count, float scale,
                          uint16_t* out, cudaStream_t stream);

// out[i] = the float32 value of in[i].
cudaError_t EnqueueDecode(WireFormat format, const uint16_t* in, uint64_t count, float* out,
                          cudaStream_t stream);

// inout[i] += addend[i].
cudaError_t EnqueueAdd(float* inout, const float* addend, uint64_t count, cudaStream_t stream);

// Modified Gram-Schmidt over `rank` contiguous columns of `length` floats (as
// PowerSgdCompressor does it, with dot products in double): column j loses its components along
// columns 0..j-1, then is scaled to unit norm. A column left exactly zero is copied from column j
// of `redraw` and orthonormalized again when `redraw` is given, and stays zero otherwise.
cudaError_t EnqueueOrthonormalize(float* columns, uint64_t length, uint32_t rank,
                                  const float* redraw, cudaStream_t stream);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_EXCHANGE_KERNELS_H_
