// How the exchange's element-wise kernels are launched: the grid comes from the device they run
// on, and the elements are read and written 16 bytes at a time where the pointers allow it.
//
//   const VectorSplit split = SplitForVectors(count, 4, {{data, sizeof(float)}});
//   ScaleKernel<<<ResidentBlocks<ScaleKernel>(split.items()), kThreads, 0, stream>>>(data, split);
//
// ResidentBlocks: a grid-stride kernel gets as many blocks as the current device keeps resident
// at once (its multiprocessors times the blocks of that kernel one holds, from the CUDA occupancy
// calculator), or fewer for a short pass. Asked once per kernel and device, then cached.
//
// VectorSplit: a pass over `count` elements as a scalar head, a body of whole vectors of `width`
// elements where every pointer sits on a boundary of its vector's size (width times its element
// size: 16 bytes for 4 floats, 8 for 4 halves), and a scalar tail. When no starting element within
// the first 16 aligns every pointer at once, the whole pass is the head. Each thread moves one
// vector per array per round, so every load and store instruction of a warp covers one contiguous
// stretch.
//
// Thread-safety: ResidentBlocks may be called from any thread (racing callers compute the same
// value); SplitForVectors is a pure function.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_LAUNCH_SHAPE_CUH_
#define COHORT_RUNTIME_EXCHANGE_CUDA_LAUNCH_SHAPE_CUH_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <utility>

namespace cohort {

inline constexpr unsigned kThreads = 256;  // threads per block of every element-wise kernel
inline constexpr int kMaxCachedDevices = 64;
inline constexpr uint64_t kMaxVectorBytes = 16;

// Blocks of `kKernel` (launched with kThreads threads and no dynamic shared memory) for a
// grid-stride pass over `items` work items, one per thread per round.
template <auto kKernel>
unsigned ResidentBlocks(uint64_t items) {
  static std::atomic<unsigned> cached[kMaxCachedDevices];  // 0: not asked yet
  int device = 0;
  cudaGetDevice(&device);
  unsigned resident = device >= 0 && device < kMaxCachedDevices ? cached[device].load() : 0;
  if (resident == 0) {
    int multiprocessors = 0;
    int per_multiprocessor = 0;
    cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, kKernel, kThreads, 0);
    resident =
        static_cast<unsigned>(std::max(1, multiprocessors * std::max(1, per_multiprocessor)));
    if (device >= 0 && device < kMaxCachedDevices) cached[device].store(resident);
  }
  const uint64_t needed = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(needed, resident)));
}

struct VectorSplit {
  uint64_t head = 0;     // scalar elements before the body
  uint64_t vectors = 0;  // vectors of `width` elements from element `head`
  uint64_t tail = 0;     // scalar elements after the body
  uint64_t width = 1;

  // Work items of a grid-stride pass: the larger of the body's vectors and the scalars.
  uint64_t items() const { return std::max(vectors, head + tail); }
  // The element a scalar item i (i < head + tail) stands for.
  __host__ __device__ uint64_t ScalarElement(uint64_t i) const {
    return i < head ? i : head + vectors * width + (i - head);
  }
};

// `pointers` pairs each array of the pass with its element size; width * size is at most
// kMaxVectorBytes for each (a CUDA vector type's size).
inline VectorSplit SplitForVectors(uint64_t count, uint64_t width,
                                   std::initializer_list<std::pair<const void*, size_t>> pointers) {
  VectorSplit split;
  split.width = width;
  split.head = count;
  for (uint64_t first = 0; first < kMaxVectorBytes && first < count; ++first) {
    const bool aligned =
        std::all_of(pointers.begin(), pointers.end(), [first, width](const auto& p) {
          return (reinterpret_cast<uintptr_t>(p.first) + first * p.second) % (width * p.second) ==
                 0;
        });
    if (!aligned) continue;
    split.head = first;
    split.vectors = (count - first) / width;
    split.tail = count - first - split.vectors * width;
    break;
  }
  return split;
}

// Grid-stride loop bounds.
__device__ inline uint64_t FirstIndex() { return uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; }
__device__ inline uint64_t Stride() { return uint64_t{gridDim.x} * blockDim.x; }

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_LAUNCH_SHAPE_CUH_
