// What the trial does with whole blocks of a device arena, on "cuda:0" memory that is host memory
// counting its copies (HostMemoryAsDevice): checkpoints, the first broadcast of the parameters
// and the non-finite guard read and write such blocks only through DeviceMemory's copies, and get
// the values a CPU arena gets.
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/arena/block_staging.h"
#include "runtime/arena/nonfinite_gradient.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/trial/rank_sync.h"
#include "runtime/trial/trial_state.h"
#include "test/collective/rank_threads.h"
#include "test/common/host_memory_as_device.h"
#include "test/unit/test_plugins.h"

namespace cohort {
namespace {

using testing::HostMemoryAsDevice;

constexpr cohort_device kCuda0 = {COHORT_DEVICE_CUDA, 0};

std::vector<float> ReadParameters(const TensorArena& arena) {
  const ArenaBlock& block = arena.blocks().at(0);
  std::vector<float> values(block.element_count);
  EXPECT_TRUE(CopyBlockToHost(block, BlockPart::kParameters, values.data()).ok());
  return values;
}

void WriteParameters(const TensorArena& arena, const std::vector<float>& values) {
  EXPECT_TRUE(CopyBlockFromHost(arena.blocks().at(0), BlockPart::kParameters, values.data()).ok());
}

// c_quadratic, which registers its tensor on the trial's device, on cuda:0.
std::unique_ptr<LoadedModel> QuadraticOnCuda0(HostMemoryAsDevice& memory) {
  absl::StatusOr<std::shared_ptr<const PluginLibrary>> plugin =
      PluginLibrary::Open(testing::PluginPath("test/c_quadratic.so"));
  EXPECT_TRUE(plugin.ok()) << plugin.status();
  if (!plugin.ok()) return nullptr;
  ModelHostOptions options;
  options.context.device = kCuda0;
  options.memory = &memory;
  absl::StatusOr<std::unique_ptr<LoadedModel>> model = LoadedModel::Create(*plugin, std::move(options));
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *std::move(model) : nullptr;
}

TEST(DeviceArenaTest, ACheckpointOfADeviceArenaGoesThroughHostCopiesAndRoundTrips) {
  HostMemoryAsDevice memory;
  std::unique_ptr<LoadedModel> model = QuadraticOnCuda0(memory);
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->arena().blocks().at(0).device.kind, COHORT_DEVICE_CUDA);
  std::vector<float> saved = ReadParameters(model->arena());
  for (size_t i = 0; i < saved.size(); ++i) saved[i] = 0.25f * static_cast<float>(i) - 1.0f;
  WriteParameters(model->arena(), saved);

  const int before = memory.device().copies_to_host;
  absl::StatusOr<std::map<std::string, std::string>> files =
      CaptureTrialState(*model, nullptr, TrialProgress{3, 24, 7, 3, std::nullopt});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_GT(memory.device().copies_to_host, before);
  ASSERT_EQ(files->at("parameters").size(), saved.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(files->at("parameters").data(), saved.data(), saved.size() * sizeof(float)), 0);
  EXPECT_NE(files->at("tensors").find("cuda:0"), std::string::npos);

  WriteParameters(model->arena(), std::vector<float>(saved.size(), 9.0f));
  const int writes_before = memory.device().copies_from_host;
  absl::StatusOr<TrialProgress> progress = RestoreTrialState(*files, *model, nullptr);
  ASSERT_TRUE(progress.ok()) << progress.status();
  EXPECT_GT(memory.device().copies_from_host, writes_before);
  EXPECT_EQ(progress->batches_trained, 3u);
  EXPECT_EQ(ReadParameters(model->arena()), saved);
}

TEST(DeviceArenaTest, TheNonFiniteGuardReadsDeviceBlocksThroughACopy) {
  HostMemoryAsDevice memory;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena = TensorArena::Create(
      {{"host", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, 8},
       {"w", COHORT_DTYPE_FLOAT32, kCuda0, 5},
       {"b", COHORT_DTYPE_FLOAT32, kCuda0, 3}},
      memory);
  ASSERT_TRUE(arena.ok()) << arena.status();
  absl::StatusOr<std::optional<NonFiniteGradient>> clean = FindNonFiniteGradient(**arena);
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_FALSE(clean->has_value());
  EXPECT_GT(memory.device().copies_to_host, 0);

  const TensorPlacement& b = (*arena)->placement(2);
  const ArenaBlock& block = (*arena)->blocks().at(b.block);
  ASSERT_EQ(block.device.kind, COHORT_DEVICE_CUDA);
  std::vector<float> grads(block.element_count, 0.5f);
  grads[b.offset + 1] = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(CopyBlockFromHost(block, BlockPart::kGradients, grads.data()).ok());
  absl::StatusOr<std::optional<NonFiniteGradient>> found = FindNonFiniteGradient(**arena);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(DescribeNonFiniteGradient(**arena, **found), "tensor 'b' element 1 is inf");
}

TEST(DeviceArenaTest, RankZerosDeviceParametersReachEveryRankThroughHostCopies) {
  constexpr uint32_t kRanks = 3;
  InMemoryRendezvousStore store;
  GlooOptions gloo;
  gloo.timeout = std::chrono::seconds(20);
  std::vector<std::vector<float>> received(kRanks);
  std::vector<int> copies(kRanks);
  const std::vector<absl::Status> results = RunRanks(kRanks, [&](uint32_t rank) -> absl::Status {
    HostMemoryAsDevice memory;
    absl::StatusOr<std::unique_ptr<TensorArena>> arena =
        TensorArena::Create({{"w", COHORT_DTYPE_FLOAT32, kCuda0, 37}}, memory);
    if (!arena.ok()) return arena.status();
    std::vector<float> own(37);
    for (size_t i = 0; i < own.size(); ++i) own[i] = static_cast<float>(rank * 100 + i);
    WriteParameters(**arena, own);
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
        CreateGlooBackend(rank, kRanks, store, gloo);
    if (!backend.ok()) return backend.status();
    if (absl::Status s = BroadcastParameters(**backend, **arena); !s.ok()) return s;
    received[rank] = ReadParameters(**arena);
    copies[rank] = memory.device().copies_from_host;
    return absl::OkStatus();
  });
  for (uint32_t rank = 0; rank < kRanks; ++rank) {
    ASSERT_TRUE(results[rank].ok()) << results[rank];
    EXPECT_EQ(received[rank], received[0]) << "rank " << rank;
    EXPECT_GE(copies[rank], 2) << "rank " << rank << " wrote its parameters without a host copy";
  }
  EXPECT_EQ(received[0][5], 5.0f);
}

}  // namespace
}  // namespace cohort
