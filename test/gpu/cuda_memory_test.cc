// Tensor arenas on a CUDA device through DefaultMemoryProvider and the CUDA memory module.
// Exits 77 (skipped) where no CUDA device is usable.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "runtime/arena/default_memory_provider.h"
#include "runtime/arena/staged_host_copies.h"
#include "runtime/arena/tensor_arena.h"

namespace {

int failures = 0;

void Expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

std::vector<float> Download(const void* device, size_t count) {
  std::vector<float> host(count, -1.0f);
  cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost);
  return host;
}

}  // namespace

int main() {
  cohort::DefaultMemoryProvider memory;
  absl::StatusOr<cohort::DeviceMemory*> cuda = memory.For({COHORT_DEVICE_CUDA, 0});
  if (!cuda.ok()) {
    std::printf("skipped: %s\n", std::string(cuda.status().message()).c_str());
    return 77;
  }
  auto arena =
      cohort::TensorArena::Create({{"w", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CUDA, 0}, 1000},
                                   {"b", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CUDA, 0}, 10},
                                   {"host_side", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, 4}},
                                  memory);
  if (!arena.ok()) {
    std::fprintf(stderr, "FAILED: %s\n", std::string(arena.status().message()).c_str());
    return 1;
  }
  Expect((*arena)->blocks().size() == 2, "one block for cuda:0 and one for the CPU");
  cudaPointerAttributes attributes{};
  Expect(cudaPointerGetAttributes(&attributes, (*arena)->data(0)) == cudaSuccess &&
             attributes.type == cudaMemoryTypeDevice,
         "parameters of a CUDA tensor live in device memory");
  for (float v : Download((*arena)->data(0), 1010 + 6))
    Expect(v == 0.0f, "device parameters start zeroed");

  const std::vector<float> ones(1010 + 6, 1.0f);
  cudaMemcpy((*arena)->grad(0), ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice);
  Expect((*arena)->ZeroGradients().ok(), "ZeroGradients on the device");
  for (float v : Download((*arena)->grad(0), ones.size()))
    Expect(v == 0.0f, "device gradients zeroed");

  // Zeroing on a stream: ordered after the work already enqueued there, done once it is drained.
  {
    cudaStream_t stream = nullptr;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cohort::DefaultMemoryProvider on_stream;
    on_stream.ZeroOnStream(0, stream);
    auto streamed = cohort::TensorArena::Create(
        {{"w", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CUDA, 0}, 1 << 20}}, on_stream);
    Expect(streamed.ok(), "an arena whose memory zeroes on a stream");
    if (streamed.ok()) {
      for (float v : Download((*streamed)->data(0), 1 << 20)) {
        Expect(v == 0.0f, "memory zeroing on a stream still starts zeroed");
      }
      const std::vector<float> twos(1 << 20, 2.0f);
      void* pinned_memory = nullptr;
      cudaMallocHost(&pinned_memory, twos.size() * sizeof(float));
      float* pinned = static_cast<float*>(pinned_memory);
      std::copy(twos.begin(), twos.end(), pinned);
      cudaMemcpyAsync((*streamed)->grad(0), pinned, twos.size() * sizeof(float),
                      cudaMemcpyHostToDevice, stream);
      Expect((*streamed)->ZeroGradients().ok(), "ZeroGradients on a stream");
      cudaStreamSynchronize(stream);
      for (float v : Download((*streamed)->grad(0), twos.size())) {
        Expect(v == 0.0f, "the memset follows the copy enqueued before it");
      }
      cudaFreeHost(pinned);
    }
    streamed = absl::InternalError("released");  // the arena goes before its stream
    cudaStreamDestroy(stream);
  }

  // A checkpoint's staged copy: page-locked host memory from the module, filled from the device,
  // landed in pageable memory later.
  {
    const std::vector<float> threes(1000, 3.0f);
    cudaMemcpy((*arena)->data(0), threes.data(), threes.size() * sizeof(float),
               cudaMemcpyHostToDevice);
    absl::StatusOr<void*> pinned = (*cuda)->AllocatePinnedHost(4096);
    Expect(pinned.ok() && *pinned != nullptr, "the CUDA memory offers page-locked host memory");
    if (pinned.ok() && *pinned != nullptr) {
      cudaPointerAttributes host_attributes{};
      Expect(cudaPointerGetAttributes(&host_attributes, *pinned) == cudaSuccess &&
                 host_attributes.type == cudaMemoryTypeHost,
             "the memory is page-locked host memory");
      (*cuda)->FreePinnedHost(*pinned);
    }
    std::vector<float> landed(1000, -1.0f);
    {
      cohort::StagedHostCopies staged;
      // Taken on a thread of its own, whose current device is not set beforehand.
      const size_t reserved = cohort::StagedHostCopies::BytesFor(1000 * sizeof(float), 1);
      staged.Reserve(**cuda, reserved);
      Expect(staged.Copy(**cuda, landed.data(), (*arena)->data(0), 1000 * sizeof(float)).ok(),
             "a staged copy from the device");
      Expect(staged.pinning_error().ok(), "page-locked memory reserved");
      Expect(staged.staged() == 1 && staged.pinned_bytes() == reserved,
             "the copy went through the reserved page-locked memory");
      Expect(landed[0] == -1.0f, "nothing lands before Land");
      staged.Land();
    }
    Expect(landed == threes, "the device's values land");
  }

  std::printf("%s\n", failures == 0 ? "cuda arena: passed" : "cuda arena: FAILED");
  return failures == 0 ? 0 : 1;
}
