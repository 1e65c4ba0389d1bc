// The NCCL backend through CreateNcclBackend and the NCCL module, on CUDA devices. Exits 77
// (skipped) where no CUDA device is usable. Groups bigger than one rank need one device per rank
// (NCCL refuses two ranks on one device).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/collective/nccl_loader.h"
#include "test/collective/rank_threads.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

int DeviceCount() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

// A device buffer holding `host`, copied back by Download.
template <typename T>
T* Upload(const std::vector<T>& host) {
  void* device = nullptr;
  EXPECT_EQ(cudaMalloc(&device, host.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return static_cast<T*>(device);
}

template <typename T>
std::vector<T> Download(const T* device, size_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost),
            cudaSuccess);
  return host;
}

TEST(NcclBackendTest, SingleRankRunsEveryOperation) {
  InMemoryRendezvousStore store;
  NcclOptions options;
  options.prefix = "trial-1/attempt-0";
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
      CreateNcclBackend(0, 1, store, options);
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->name(), "nccl");
  EXPECT_TRUE(store.Get("trial-1/attempt-0/nccl-id", std::chrono::milliseconds(0)).ok());

  for (size_t count : {size_t{1}, size_t{1000}, size_t{3'000'017}}) {
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i % 7);
    float* data = Upload(values);
    ASSERT_TRUE((*backend)->AllreduceSum(data, count, COHORT_DTYPE_FLOAT32).ok());
    EXPECT_EQ(Download(data, count), values);
    cudaFree(data);
  }
  std::vector<double> doubles = {1.5, -2.25};
  double* d = Upload(doubles);
  EXPECT_TRUE((*backend)->AllreduceSum(d, doubles.size(), COHORT_DTYPE_FLOAT64).ok());
  EXPECT_EQ(Download(d, doubles.size()), doubles);
  EXPECT_TRUE((*backend)->ReduceSum(d, doubles.size(), COHORT_DTYPE_FLOAT64, 0).ok());
  EXPECT_EQ(Download(d, doubles.size()), doubles);
  EXPECT_TRUE(absl::IsInvalidArgument((*backend)->ReduceSum(d, 1, COHORT_DTYPE_FLOAT64, 1)));
  EXPECT_TRUE((*backend)->Broadcast(d, sizeof(double) * doubles.size(), 0).ok());
  EXPECT_TRUE(absl::IsInvalidArgument((*backend)->Broadcast(d, 8, 1)));
  absl::Status unknown = (*backend)->AllreduceSum(d, 1, 99);
  EXPECT_TRUE(absl::IsInvalidArgument(unknown)) << unknown;
  EXPECT_THAT(std::string(unknown.message()), HasSubstr("99"));
  std::vector<uint16_t> halves(8, 0x3C00);  // 1.0 in float16
  uint16_t* h = Upload(halves);
  EXPECT_TRUE((*backend)->AllreduceSum(h, halves.size(), COHORT_DTYPE_FLOAT16).ok());
  EXPECT_TRUE((*backend)->AllreduceSum(h, halves.size(), COHORT_DTYPE_BFLOAT16).ok());
  EXPECT_EQ(Download(h, halves.size()), halves);
  std::vector<uint8_t> gathered(16, 0);
  uint8_t* out = Upload(gathered);
  EXPECT_TRUE((*backend)->Allgather(d, 16, out).ok());
  EXPECT_EQ(Download(reinterpret_cast<double*>(out), 2), doubles);
  EXPECT_TRUE((*backend)->Barrier().ok());
  cudaFree(d);
  cudaFree(h);
  cudaFree(out);
}

TEST(NcclBackendTest, RankThatNeverJoinsGivesDeadlineExceeded) {
  InMemoryRendezvousStore store;
  NcclOptions options;
  options.timeout = std::chrono::milliseconds(2000);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
      CreateNcclBackend(0, 2, store, options);
  EXPECT_TRUE(absl::IsDeadlineExceeded(backend.status())) << backend.status();
  EXPECT_THAT(std::string(backend.status().message()), HasSubstr("2 ranks"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(NcclBackendTest, MissingUniqueIdGivesDeadlineExceeded) {
  InMemoryRendezvousStore store;
  NcclOptions options;
  options.timeout = std::chrono::milliseconds(100);
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
      CreateNcclBackend(1, 2, store, options);
  EXPECT_TRUE(absl::IsDeadlineExceeded(backend.status())) << backend.status();
  EXPECT_THAT(std::string(backend.status().message()), HasSubstr("nccl-id"));
}

TEST(NcclBackendTest, RanksOnSeparateDevicesSum) {
  const int devices = DeviceCount();
  if (devices < 2) GTEST_SKIP() << "needs two CUDA devices, found " << devices;
  const uint32_t size = static_cast<uint32_t>(std::min(devices, 4));
  InMemoryRendezvousStore store;
  std::vector<absl::Status> results = RunRanks(size, [&](uint32_t rank) -> absl::Status {
    cudaSetDevice(static_cast<int>(rank));
    NcclOptions options;
    options.device = static_cast<int>(rank);
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
        CreateNcclBackend(rank, size, store, options);
    if (!backend.ok()) return backend.status();
    std::vector<float> values(1000, static_cast<float>(rank + 1));
    float* data = Upload(values);
    absl::Status status = (*backend)->AllreduceSum(data, values.size(), COHORT_DTYPE_FLOAT32);
    const std::vector<float> sums = Download(data, values.size());
    cudaFree(data);
    if (!status.ok()) return status;
    for (float sum : sums) {
      if (sum != static_cast<float>(size * (size + 1) / 2))
        return absl::InternalError(absl::StrCat("sum ", sum));
    }
    return (*backend)->Barrier();
  });
  for (const absl::Status& status : results) EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  if (cohort::DeviceCount() == 0) {
    std::printf("skipped: no usable CUDA device\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
