// The CUDA kernels of top-k compression, behind host functions that enqueue them on a stream and
// return the launch error (as exchange_kernels.h's): the selection of the k largest magnitudes,
// and the scatter-add of gathered pairs. They select what TopKCompressor selects on the host.
//
//   TopKScratchBytes(capacity, &bytes);  TopKScratchAt(memory, capacity, &scratch);
//   EnqueueTopKCompress(grad, n, scale, residual, k, scratch, indices, values, stream);
//
// Thread-safety: the functions keep no state; a TopKScratch is used by one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_TOPK_KERNELS_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_TOPK_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace cohort {

// Device scratch for top-k selection over at most `capacity` entries, carved by TopKScratchAt
// from one allocation of TopKScratchBytes(capacity) bytes.
struct TopKScratch {
  uint32_t* keys = nullptr;         // capacity: each entry's magnitude key
  uint32_t* histogram = nullptr;    // the counts of one radix digit of the keys
  uint32_t* scalars = nullptr;      // 2: the threshold's bits chosen so far, entries left to choose
  uint64_t* tile_counts = nullptr;  // per tile of entries: (keys above the threshold) << 32 | equal
  uint64_t* tile_offsets = nullptr;  // their exclusive prefix sums
  void* temp = nullptr;              // CUB's storage for that prefix sum
  size_t temp_bytes = 0;
};

// The bytes of top-k's scratch for `capacity` entries.
cudaError_t TopKScratchBytes(uint64_t capacity, size_t* bytes);

// The scratch for `capacity` entries in `memory` (TopKScratchBytes(capacity) bytes of device
// memory, 256-byte aligned).
cudaError_t TopKScratchAt(void* memory, uint64_t capacity, TopKScratch* scratch);

// TopKCompressor::Compress on the device: residual[i] += grad[i] * scale; the k entries of
// largest |residual| (ties to the lower index) go to indices[0, k) in ascending order and their
// values to values[0, k), and their residual becomes 0. Requires 1 <= k <= count <= capacity
// and count < 2^31.
//
// No sort: a radix select finds the k-th largest magnitude key in three histogram passes (11, 10
// and 10 bits of the 31-bit key, the first fused with the residual update), then two passes over
// tiles of the keys count and place the selected entries in index order. About 32 bytes of
// memory traffic per entry.
cudaError_t EnqueueTopKCompress(const float* grad, uint64_t count, float scale, float* residual,
                                uint64_t k, const TopKScratch& scratch, uint32_t* indices,
                                float* values, cudaStream_t stream);

// out[indices[j]] += values[j] for j in [0, k); the indices are distinct.
cudaError_t EnqueueScatterAdd(const uint32_t* indices, const float* values, uint64_t k, float* out,
                              cudaStream_t stream);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_TOPK_KERNELS_H_
