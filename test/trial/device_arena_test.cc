// What the trial does with whole blocks of a device arena, on "cuda:0" memory that is host memory
// counting its copies (HostMemoryAsDevice): checkpoints, the first broadcast of the parameters
// and the non-finite guard read and write such blocks only through DeviceMemory's copies, and get
// the values a CPU arena gets; given the device's own gradient work (HostGradientOps), averaging
// and the guard copy nothing unless a value is not finite. ZeRO's shards of the stepped
// parameters travel the same way.
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/arena/arena_shard.h"
#include "runtime/arena/block_staging.h"
#include "runtime/arena/divide_gradients.h"
#include "runtime/arena/nonfinite_gradient.h"
#include "runtime/arena/staged_host_copies.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/trial/rank_sync.h"
#include "runtime/trial/shard_parameters.h"
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
  absl::StatusOr<std::unique_ptr<LoadedModel>> model =
      LoadedModel::Create(*plugin, std::move(options));
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *std::move(model) : nullptr;
}

// "host" (8 floats) on the CPU; "w" (5) and "b" (3) on cuda:0.
absl::StatusOr<std::unique_ptr<TensorArena>> HostAndDeviceArena(HostMemoryAsDevice& memory) {
  return TensorArena::Create({{"host", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, 8},
                              {"w", COHORT_DTYPE_FLOAT32, kCuda0, 5},
                              {"b", COHORT_DTYPE_FLOAT32, kCuda0, 3}},
                             memory);
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
  EXPECT_EQ(std::memcmp(files->at("parameters").data(), saved.data(), saved.size() * sizeof(float)),
            0);
  EXPECT_NE(files->at("tensors").find("cuda:0"), std::string::npos);

  WriteParameters(model->arena(), std::vector<float>(saved.size(), 9.0f));
  const int writes_before = memory.device().copies_from_host;
  absl::StatusOr<TrialProgress> progress = RestoreTrialState(*files, *model, nullptr);
  ASSERT_TRUE(progress.ok()) << progress.status();
  EXPECT_GT(memory.device().copies_from_host, writes_before);
  EXPECT_EQ(progress->batches_trained, 3u);
  EXPECT_EQ(ReadParameters(model->arena()), saved);
}

// A background checkpoint's capture stages the device's parameters in page-locked memory: the
// files reused from the capture before still hold its values until the copies land, and then
// they are what a direct capture holds.
TEST(DeviceArenaTest, AStagedCaptureHoldsTheDevicesValuesOnceItsCopiesLand) {
  HostMemoryAsDevice memory;
  std::unique_ptr<LoadedModel> model = QuadraticOnCuda0(memory);
  ASSERT_NE(model, nullptr);
  const TrialProgress progress{3, 24, 7, 3, std::nullopt};
  std::vector<float> values = ReadParameters(model->arena());
  for (size_t i = 0; i < values.size(); ++i) values[i] = 1.5f + static_cast<float>(i);
  WriteParameters(model->arena(), values);
  absl::StatusOr<std::map<std::string, std::string>> before =
      CaptureTrialState(*model, nullptr, progress);
  ASSERT_TRUE(before.ok()) << before.status();

  for (float& value : values) value = -value;
  WriteParameters(model->arena(), values);
  absl::StatusOr<std::map<std::string, std::string>> direct =
      CaptureTrialState(*model, nullptr, progress);
  ASSERT_TRUE(direct.ok()) << direct.status();

  StagedHostCopies staged;
  absl::StatusOr<std::map<std::string, std::string>> files =
      CaptureTrialState(*model, nullptr, progress, *before, /*unsealed=*/true, nullptr, &staged);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(staged.staged(), model->arena().blocks().size());
  EXPECT_EQ(files->at("parameters"), before->at("parameters")) << "landed before Land";
  staged.Land();
  SealTrialState(*files);
  EXPECT_EQ(*files, *direct);
  EXPECT_EQ(memory.device().pinned_held, static_cast<int>(model->arena().blocks().size()));

  // Staged copies land later, so the capture is unsealed.
  EXPECT_EQ(CaptureTrialState(*model, nullptr, progress, {}, /*unsealed=*/false, nullptr, &staged)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeviceArenaTest, TheNonFiniteGuardReadsDeviceBlocksThroughACopy) {
  HostMemoryAsDevice memory;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena = HostAndDeviceArena(memory);
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

TEST(DeviceArenaTest, WithTheDevicesOwnCheckAFiniteGradientIsNeverCopied) {
  HostMemoryAsDevice memory;
  testing::HostGradientOps ops;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena = HostAndDeviceArena(memory);
  ASSERT_TRUE(arena.ok()) << arena.status();
  absl::StatusOr<std::optional<NonFiniteGradient>> clean = FindNonFiniteGradient(**arena, &ops);
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_FALSE(clean->has_value());
  EXPECT_EQ(memory.device().copies_to_host, 0);
  EXPECT_EQ(ops.checks, 1);  // the one device block
  EXPECT_EQ(ops.flag_reads, 1);

  const TensorPlacement& b = (*arena)->placement(2);
  const ArenaBlock& block = (*arena)->blocks().at(b.block);
  std::vector<float> grads(block.element_count, 0.5f);
  grads[b.offset + 2] = -std::numeric_limits<float>::infinity();
  ASSERT_TRUE(CopyBlockFromHost(block, BlockPart::kGradients, grads.data()).ok());
  absl::StatusOr<std::optional<NonFiniteGradient>> found = FindNonFiniteGradient(**arena, &ops);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(DescribeNonFiniteGradient(**arena, **found), "tensor 'b' element 2 is -inf");
  EXPECT_EQ(memory.device().copies_to_host, 1);  // only to name the element
  EXPECT_EQ(ops.flag_reads, 2);

  // A NaN on the host is found without touching the device blocks.
  float* host = static_cast<float*>((*arena)->grad(0));
  host[3] = std::numeric_limits<float>::quiet_NaN();
  grads[b.offset + 2] = 0.0f;
  ASSERT_TRUE(CopyBlockFromHost(block, BlockPart::kGradients, grads.data()).ok());
  const int copies = memory.device().copies_to_host;
  found = FindNonFiniteGradient(**arena, &ops);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ(DescribeNonFiniteGradient(**arena, **found), "tensor 'host' element 3 is nan");
  EXPECT_EQ(memory.device().copies_to_host, copies);
}

// ZeRO stage 2 on a GPU: a rank looks for a non-finite summed gradient in its shard only, on the
// device, and copies only its range to name the element.
TEST(DeviceArenaTest, UnderZeroStageTwoEachRankSearchesItsShardOfADeviceBlock) {
  HostMemoryAsDevice memory;
  testing::HostGradientOps ops;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      TensorArena::Create({{"g", COHORT_DTYPE_FLOAT32, kCuda0, 100}}, memory);
  ASSERT_TRUE(arena.ok()) << arena.status();
  const ArenaBlock& block = (*arena)->blocks().at(0);
  ASSERT_EQ(ShardRange(block.element_count, {1, 2}).begin, 64u);
  std::vector<float> grads(block.element_count, 0.5f);
  grads[80] = std::numeric_limits<float>::infinity();  // in rank 1's shard
  ASSERT_TRUE(CopyBlockFromHost(block, BlockPart::kGradients, grads.data()).ok());
  for (DeviceGradientOps* device :
       {static_cast<DeviceGradientOps*>(&ops), static_cast<DeviceGradientOps*>(nullptr)}) {
    SCOPED_TRACE(device != nullptr ? "checked on the device" : "read through copies");
    absl::StatusOr<std::optional<NonFiniteGradient>> rank0 =
        FindNonFiniteGradient(**arena, device, {0, 2});
    ASSERT_TRUE(rank0.ok()) << rank0.status();
    EXPECT_FALSE(rank0->has_value());
    absl::StatusOr<std::optional<NonFiniteGradient>> rank1 =
        FindNonFiniteGradient(**arena, device, {1, 2});
    ASSERT_TRUE(rank1.ok()) << rank1.status();
    ASSERT_TRUE(rank1->has_value());
    EXPECT_EQ(DescribeNonFiniteGradient(**arena, **rank1), "tensor 'g' element 80 is inf");
  }
  EXPECT_EQ(ops.checks, 2);  // each rank's range, once each
}

TEST(DeviceArenaTest, AveragingDividesDeviceBlocksOnTheDeviceAsTheHostDoes) {
  HostMemoryAsDevice memory;
  testing::HostGradientOps ops;
  const std::vector<TensorDescriptor> tensors = {
      {"host", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, 8},
      {"w", COHORT_DTYPE_FLOAT32, kCuda0, 7},
      {"d", COHORT_DTYPE_FLOAT64, kCuda0, 3}};
  absl::StatusOr<std::unique_ptr<TensorArena>> on_device = TensorArena::Create(tensors, memory);
  absl::StatusOr<std::unique_ptr<TensorArena>> staged = TensorArena::Create(tensors, memory);
  ASSERT_TRUE(on_device.ok() && staged.ok());
  for (TensorArena* arena : {on_device->get(), staged->get()}) {
    for (const ArenaBlock& block : arena->blocks()) {
      std::vector<char> bytes(BlockBytes(block));
      for (size_t i = 0; i < block.element_count; ++i) {
        if (block.dtype == COHORT_DTYPE_FLOAT32) {
          reinterpret_cast<float*>(bytes.data())[i] = 0.1f * static_cast<float>(i + 1);
        } else {
          reinterpret_cast<double*>(bytes.data())[i] = 0.1 * static_cast<double>(i + 1);
        }
      }
      ASSERT_TRUE(CopyBlockFromHost(block, BlockPart::kGradients, bytes.data()).ok());
    }
  }
  const int copies = memory.device().copies_to_host;
  ASSERT_TRUE(DivideGradients(**on_device, 3, &ops).ok());
  EXPECT_EQ(ops.divides, 2);  // the float32 and the float64 device blocks
  EXPECT_EQ(memory.device().copies_to_host, copies);
  ASSERT_TRUE(DivideGradients(**staged, 3).ok());
  EXPECT_GT(memory.device().copies_to_host, copies);
  for (size_t b = 0; b < (*staged)->blocks().size(); ++b) {
    const ArenaBlock& block = (*staged)->blocks()[b];
    std::vector<char> want(BlockBytes(block)), got(BlockBytes(block));
    ASSERT_TRUE(CopyBlockToHost(block, BlockPart::kGradients, want.data()).ok());
    ASSERT_TRUE(CopyBlockToHost((*on_device)->blocks()[b], BlockPart::kGradients, got.data()).ok());
    EXPECT_EQ(got, want) << "block " << b;
  }
}

// Three ranks over a Gloo group of threads, each with a one-block "cuda:0" arena of `count`
// float32 parameters set to `values(rank)`, each running `share` over it: what every rank then
// holds, and the copies to the "device" `share` made on it.
struct Shared {
  std::vector<absl::Status> results;
  std::vector<std::vector<float>> received;
  std::vector<int> copies;
};
constexpr uint32_t kRanks = 3;
Shared ShareOverThreeRanks(
    uint64_t count, const std::function<std::vector<float>(uint32_t rank)>& values,
    const std::function<absl::Status(CollectiveBackend&, TensorArena&)>& share) {
  InMemoryRendezvousStore store;
  GlooOptions gloo;
  gloo.timeout = std::chrono::seconds(20);
  Shared shared;
  shared.received.resize(kRanks);
  shared.copies.resize(kRanks);
  shared.results = RunRanks(kRanks, [&](uint32_t rank) -> absl::Status {
    HostMemoryAsDevice memory;
    absl::StatusOr<std::unique_ptr<TensorArena>> arena =
        TensorArena::Create({{"w", COHORT_DTYPE_FLOAT32, kCuda0, count}}, memory);
    if (!arena.ok()) return arena.status();
    WriteParameters(**arena, values(rank));
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
        CreateGlooBackend(rank, kRanks, store, gloo);
    if (!backend.ok()) return backend.status();
    const int before = memory.device().copies_from_host;
    if (absl::Status s = share(**backend, **arena); !s.ok()) return s;
    shared.received[rank] = ReadParameters(**arena);
    shared.copies[rank] = memory.device().copies_from_host - before;
    return absl::OkStatus();
  });
  return shared;
}

TEST(DeviceArenaTest, RankZerosDeviceParametersReachEveryRankThroughHostCopies) {
  const Shared shared = ShareOverThreeRanks(
      37,
      [](uint32_t rank) {
        std::vector<float> own(37);
        for (size_t i = 0; i < own.size(); ++i) own[i] = static_cast<float>(rank * 100 + i);
        return own;
      },
      [](CollectiveBackend& group, TensorArena& arena) {
        return BroadcastParameters(group, arena);
      });
  for (uint32_t rank = 0; rank < kRanks; ++rank) {
    ASSERT_TRUE(shared.results[rank].ok()) << shared.results[rank];
    EXPECT_EQ(shared.received[rank], shared.received[0]) << "rank " << rank;
    EXPECT_GE(shared.copies[rank], 1)
        << "rank " << rank << " wrote its parameters without a host copy";
  }
  EXPECT_EQ(shared.received[0][5], 5.0f);
}

// ZeRO on GPU slots: each rank's stepped range of a device block reaches every rank through host
// copies over the host group, and every rank ends with the same block.
// ZeRO on GPU slots: each rank's stepped range of a device block reaches every rank, and every
// rank ends with the same block: through host copies over the host group, or, given a group that
// moves device memory (NCCL; here the same Gloo group, the "device" being host memory), in place
// once that group's stream waits for the device's work, with no copy.
TEST(DeviceArenaTest, EachOwnersDeviceShardReachesEveryRankThroughHostCopiesOrInPlace) {
  constexpr uint64_t kCount = 1001;
  const auto stepped = [](uint32_t owner, uint64_t i) {
    return static_cast<float>(owner * 10000 + i);
  };
  std::vector<float> expected(kCount);
  for (uint32_t owner = 0; owner < kRanks; ++owner) {
    const ElementRange range = ShardRange(kCount, {owner, kRanks});
    for (uint64_t i = range.begin; i < range.end; ++i) expected[i] = stepped(owner, i);
  }
  for (const bool over_device_group : {false, true}) {
    SCOPED_TRACE(over_device_group ? "over the device group" : "through host copies");
    std::vector<int> waits(kRanks, 0);
    const Shared shared = ShareOverThreeRanks(
        kCount,
        [&](uint32_t rank) {
          // Only this rank's range holds its stepped values; the rest is stale (-1).
          std::vector<float> own(kCount, -1.0f);
          const ElementRange range = ShardRange(kCount, {rank, kRanks});
          for (uint64_t i = range.begin; i < range.end; ++i) own[i] = stepped(rank, i);
          return own;
        },
        [&](CollectiveBackend& group, TensorArena& arena) {
          std::vector<char> staging;
          DeviceShardGroup device;
          if (over_device_group) {
            device.group = &group;
            device.after_compute = [&waits, rank = group.rank()] {
              ++waits[rank];
              return absl::OkStatus();
            };
          }
          return BroadcastShardParameters(arena, group, kRanks, staging, device);
        });
    for (uint32_t rank = 0; rank < kRanks; ++rank) {
      ASSERT_TRUE(shared.results[rank].ok()) << shared.results[rank];
      EXPECT_EQ(shared.received[rank], expected) << "rank " << rank;
      if (over_device_group) {
        EXPECT_EQ(shared.copies[rank], 0) << "rank " << rank << " copied through the host";
        EXPECT_EQ(waits[rank], 1) << "rank " << rank;
      } else {
        EXPECT_GE(shared.copies[rank], 1)
            << "rank " << rank << " wrote its parameters without a host copy";
      }
    }
  }
}

}  // namespace
}  // namespace cohort
