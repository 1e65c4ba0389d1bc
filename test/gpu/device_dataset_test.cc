// mlp_cuda's DeviceDataset: a batch gathered on the GPU from its indices holds, bit for bit, the
// records and labels the host path reads (BatchInput::Gather), and a network trained on it gets
// the same loss and gradients as on the host copy of that batch. An index outside the split is
// refused, and a split over the size bound is left on the host. Exits 77 (skipped) where no CUDA
// device is usable.
#include "device_dataset.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cuda_mlp_network.h"
#include "gtest/gtest.h"
#include "mlp_glue.h"
#include "synthetic_dataset.h"

namespace mlp {
namespace {

constexpr size_t kInputs = 33;
constexpr size_t kClasses = 5;
constexpr uint64_t kRecords = 300;

// A host-side batch of `indices` of the training split, as the runtime hands one to the plugin.
struct HostBatch {
  explicit HostBatch(std::vector<uint64_t> chosen) : indices(std::move(chosen)) {
    raw.struct_size = sizeof(raw);
    raw.split = COHORT_SPLIT_TRAINING;
    raw.record_indices = indices.data();
    raw.record_count = indices.size();
  }
  cohort::Batch batch() const { return cohort::Batch{&raw}; }
  std::vector<uint64_t> indices;
  cohort_batch raw{};
};

template <class T>
std::vector<T> ReadBack(const T* device, size_t count) {
  std::vector<T> values(count);
  EXPECT_EQ(cudaMemcpy(values.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost),
            cudaSuccess);
  return values;
}

template <class T>
T* DeviceCopy(const std::vector<T>& values) {
  void* memory = nullptr;
  EXPECT_EQ(cudaMalloc(&memory, values.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(memory, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return static_cast<T*>(memory);
}

class DeviceDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess); }
  void TearDown() override { cudaStreamDestroy(stream_); }

  SyntheticDataset data_{COHORT_SPLIT_TRAINING, kRecords, kInputs, kClasses};
  cudaStream_t stream_ = nullptr;
};

TEST_F(DeviceDatasetTest, GathersTheHostPathsRecordsBitForBit) {
  ASSERT_TRUE(DeviceDataset::Fits(data_));
  DeviceDataset on_device(data_, stream_);
  // Repeats, the first and the last record, out of order; then a smaller batch reusing buffers.
  for (const std::vector<uint64_t>& indices :
       {std::vector<uint64_t>{299, 0, 17, 17, 150, 1, 298}, std::vector<uint64_t>{5, 4}}) {
    HostBatch chosen(indices);
    BatchInput host;
    host.Gather(data_, chosen.batch());
    const CudaMlpNetwork::DeviceBatch gathered = on_device.Gather(chosen.batch());
    ASSERT_EQ(gathered.size, indices.size());
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    const std::vector<float> inputs = ReadBack(gathered.inputs, indices.size() * kInputs);
    const std::vector<int32_t> labels = ReadBack(gathered.labels, indices.size());
    ASSERT_EQ(std::memcmp(inputs.data(), host.inputs(), inputs.size() * sizeof(float)), 0);
    ASSERT_EQ(std::memcmp(labels.data(), host.labels(), labels.size() * sizeof(int32_t)), 0);
  }
}

TEST_F(DeviceDatasetTest, RefusesAnIndexOutsideTheSplit) {
  DeviceDataset on_device(data_, stream_);
  HostBatch outside({3, kRecords});
  try {
    on_device.Gather(outside.batch());
    FAIL() << "an index past the split was gathered";
  } catch (const cohort::Error& error) {
    EXPECT_EQ(error.code(), COHORT_STATUS_OUT_OF_RANGE);
    EXPECT_NE(std::string(error.what()).find("record 300 is outside the split's 300 records"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(DeviceDatasetTest, LeavesASplitOverTheBoundOnTheHost) {
  // 2^22 records of 64 features: 1 GiB, over the 256 MiB bound (nothing is generated).
  const SyntheticDataset large(COHORT_SPLIT_TRAINING, uint64_t{1} << 22, 64, kClasses);
  EXPECT_FALSE(DeviceDataset::Fits(large));
  const SyntheticDataset bound(COHORT_SPLIT_TRAINING, kMaxDeviceDatasetBytes / (64 * 4), 64,
                               kClasses);
  EXPECT_TRUE(DeviceDataset::Fits(bound));
}

TEST_F(DeviceDatasetTest, TrainsAsOnTheHostCopyOfTheBatch) {
  const std::vector<size_t> widths = {kInputs, 16, kClasses};
  DeviceDataset on_device(data_, stream_);
  HostBatch chosen({7, 250, 31, 31, 99, 0, 12, 201});
  BatchInput host;
  host.Gather(data_, chosen.batch());

  std::vector<float> weights[2], biases[2];
  for (size_t l = 0; l < 2; ++l) {
    weights[l].assign(widths[l] * widths[l + 1], 0.0f);
    biases[l].assign(widths[l + 1], 0.0f);
    for (size_t i = 0; i < weights[l].size(); ++i)
      weights[l][i] = 0.01f * ((i * 7 + l) % 13) - 0.06f;
    for (size_t i = 0; i < biases[l].size(); ++i) biases[l][i] = 0.02f * (i % 3) - 0.02f;
  }
  // Two runs: on the gathered batch and on the host batch, each from zeroed gradients.
  std::vector<float> results[2];
  BatchStats stats[2];
  for (int run = 0; run < 2; ++run) {
    CudaMlpNetwork network(widths, stream_);
    std::vector<float*> owned;
    std::vector<LayerParams> params;
    std::vector<LayerGrads> grads;
    for (size_t l = 0; l < 2; ++l) {
      float* w = DeviceCopy(weights[l]);
      float* b = DeviceCopy(biases[l]);
      float* gw = DeviceCopy(std::vector<float>(weights[l].size(), 0.0f));
      float* gb = DeviceCopy(std::vector<float>(biases[l].size(), 0.0f));
      owned.insert(owned.end(), {w, b, gw, gb});
      params.push_back({w, b});
      grads.push_back({gw, gb});
    }
    const CudaMlpNetwork::DeviceBatch staged =
        run == 0 ? on_device.Gather(chosen.batch())
                 : network.CopyIn(host.inputs(), host.labels(), chosen.indices.size());
    network.Train(params, grads, staged, {});
    stats[run] = network.Totals();
    for (size_t l = 0; l < 2; ++l) {
      for (const std::vector<float>& part : {ReadBack(grads[l].weight, weights[l].size()),
                                             ReadBack(grads[l].bias, biases[l].size())}) {
        results[run].insert(results[run].end(), part.begin(), part.end());
      }
    }
    for (float* p : owned) cudaFree(p);
  }
  EXPECT_EQ(stats[0].records, chosen.indices.size());
  EXPECT_EQ(stats[0].loss_sum, stats[1].loss_sum);
  EXPECT_GT(stats[0].loss_sum, 0.0);
  EXPECT_EQ(stats[0].correct, stats[1].correct);
  ASSERT_EQ(results[0].size(), results[1].size());
  EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)),
            0);
  bool any_nonzero = false;
  for (float g : results[0]) any_nonzero |= g != 0.0f;
  EXPECT_TRUE(any_nonzero) << "the gradients are all zero, so comparing them proves nothing";
}

}  // namespace
}  // namespace mlp
