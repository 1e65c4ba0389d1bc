// ShardGather over a real Gloo group of three rank threads: the whole optimizer state of a
// checkpoint reaches rank 0 (laid out there at the step, the others' pieces from their copies)
// while every optimizer steps on (rank 0's part on a thread of the test's, as the checkpoint
// writer's), checkpoint after checkpoint, from CPU shards and from device shards staged through
// page-locked memory; a rank that leaves the gather is an error that names it, not a hang.
#include "runtime/trial/shard_gather.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/arena/staged_host_copies.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "test/collective/rank_threads.h"
#include "test/common/host_memory_as_device.h"
#include "test/optim/optim_test_util.h"

namespace cohort::shard_gather_test {
namespace {

constexpr uint32_t kRanks = 3;

OptimizerOptions Adam() {
  OptimizerOptions options;
  options.kind = OptimizerOptions::Kind::kAdam;
  options.learning_rate = 0.01;
  return options;
}

// An arena of a float32 and a float64 tensor, and an Adam optimizer over `shard` of it; with
// `on_device`, on host memory posing as cuda:0, stepped by the device optimizer.
struct Replica {
  std::unique_ptr<testing::HostMemoryAsDevice> memory;
  std::unique_ptr<optim_test::HostRuleKernels> kernels;
  std::unique_ptr<TensorArena> arena;
  std::unique_ptr<Optimizer> optimizer;
};
Replica MakeReplica(ArenaShard shard, bool on_device = false) {
  Replica replica;
  std::vector<TensorDescriptor> tensors = {optim_test::CpuTensor("w", 5003, COHORT_DTYPE_FLOAT32),
                                           optim_test::CpuTensor("b", 77, COHORT_DTYPE_FLOAT64)};
  if (on_device) {
    replica.memory = std::make_unique<testing::HostMemoryAsDevice>();
    replica.kernels = std::make_unique<optim_test::HostRuleKernels>();
    for (TensorDescriptor& tensor : tensors) tensor.device = {COHORT_DEVICE_CUDA, 0};
    absl::StatusOr<std::unique_ptr<TensorArena>> arena =
        TensorArena::Create(tensors, *replica.memory);
    EXPECT_TRUE(arena.ok()) << arena.status();
    if (arena.ok()) replica.arena = *std::move(arena);
  } else {
    replica.arena = optim_test::MakeArena(tensors);
  }
  absl::StatusOr<std::unique_ptr<Optimizer>> optimizer =
      Optimizer::Create(Adam(), *replica.arena, replica.kernels.get(), shard);
  EXPECT_TRUE(optimizer.ok()) << optimizer.status();
  if (optimizer.ok()) replica.optimizer = *std::move(optimizer);
  return replica;
}

// The same gradients on every rank at step `step` (Adam's state depends on them alone).
absl::Status Step(Replica& replica, uint64_t step) {
  for (size_t t = 0; t < replica.arena->tensor_count(); ++t) {
    for (uint64_t i = 0; i < replica.arena->spec(t).element_count; ++i) {
      const double g = static_cast<double>((i * 31 + step * 7 + t) % 101) / 50.0 - 1.0;
      if (replica.arena->spec(t).dtype == COHORT_DTYPE_FLOAT64) {
        static_cast<double*>(replica.arena->grad(t))[i] = g;
      } else {
        static_cast<float*>(replica.arena->grad(t))[i] = static_cast<float>(g);
      }
    }
  }
  return replica.optimizer->Step();
}

std::unique_ptr<CollectiveBackend> JoinGroup(uint32_t rank, InMemoryRendezvousStore& store,
                                             std::chrono::milliseconds timeout) {
  GlooOptions gloo;
  gloo.timeout = timeout;
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> group =
      CreateGlooBackend(rank, kRanks, store, gloo);
  EXPECT_TRUE(group.ok()) << group.status();
  return group.ok() ? *std::move(group) : nullptr;
}

// On a device the shards' copies are staged in page-locked memory: rank 0's land on the writer's
// thread before the others' pieces arrive, and the others' on the gather's own thread.
class ShardGatherTest : public ::testing::TestWithParam<bool> {};

TEST_P(ShardGatherTest, RankZeroAssemblesEachCheckpointsStateWhileTheRanksTrainOn) {
  const bool on_device = GetParam();
  // The state a whole optimizer has after 2 and after 5 steps.
  Replica whole = MakeReplica({});
  std::vector<std::string> expected;
  for (uint64_t step = 1; step <= 5; ++step) {
    ASSERT_TRUE(Step(whole, step).ok());
    if (step == 2 || step == 5) expected.push_back(whole.optimizer->SaveState());
  }
  InMemoryRendezvousStore store;
  std::vector<std::string> assembled;
  std::vector<int> pinned(kRanks, 0);
  const std::vector<absl::Status> results = RunRanks(kRanks, [&](uint32_t rank) -> absl::Status {
    std::unique_ptr<CollectiveBackend> group = JoinGroup(rank, store, std::chrono::seconds(20));
    if (group == nullptr) return absl::UnavailableError("no group");
    Replica replica = MakeReplica({rank, kRanks}, on_device);
    ShardGather gather(*group);
    if (on_device) {  // as the trial does when it starts
      gather.Reserve(replica.memory->device(),
                     StagedHostCopies::BytesFor(replica.optimizer->state_bytes(), 4));
    }
    uint64_t step = 0;
    for (const uint64_t checkpoint_after : {2u, 5u}) {
      while (step < checkpoint_after) RETURN_IF_ERROR(Step(replica, ++step));
      if (rank == 0) {
        std::string whole_state;
        RETURN_IF_ERROR(gather.Capture(*replica.optimizer, step, &whole_state));
        absl::Status written;
        std::thread writer([&] { written = gather.AssembleInto(whole_state, /*sealed=*/true); });
        // Training goes on meanwhile: the ranks' states move past the copies.
        RETURN_IF_ERROR(Step(replica, 1000 + step));
        writer.join();
        RETURN_IF_ERROR(written);
        assembled.push_back(std::move(whole_state));
      } else {
        RETURN_IF_ERROR(gather.Capture(*replica.optimizer, step, nullptr));
        gather.Start();
        RETURN_IF_ERROR(Step(replica, 1000 + step));
        RETURN_IF_ERROR(gather.Wait());
      }
      // The extra step taken back: every rank reloads its shard of the checkpoint's state.
      RETURN_IF_ERROR(replica.optimizer->LoadState(expected[checkpoint_after == 2 ? 0 : 1]));
    }
    if (replica.memory) pinned[rank] = replica.memory->device().pinned_allocations;
    return absl::OkStatus();
  });
  for (uint32_t rank = 0; rank < kRanks; ++rank) {
    EXPECT_TRUE(results[rank].ok()) << "rank " << rank << ": " << results[rank];
    // Taken once, ahead, for Adam's two buffers in each of the two blocks.
    EXPECT_EQ(pinned[rank], on_device ? 1 : 0) << "rank " << rank;
  }
  ASSERT_EQ(assembled.size(), 2u);
  EXPECT_EQ(assembled[0], expected[0]) << "the checkpoint after batch 2";
  EXPECT_EQ(assembled[1], expected[1]) << "the checkpoint after batch 5";
}

INSTANTIATE_TEST_SUITE_P(Memory, ShardGatherTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "device" : "cpu";
                         });

TEST(ShardGatherFailureTest, ARankThatLeavesTheGatherIsAnErrorNamingTheCheckpoint) {
  InMemoryRendezvousStore store;
  const std::vector<absl::Status> results = RunRanks(kRanks, [&](uint32_t rank) -> absl::Status {
    std::unique_ptr<CollectiveBackend> group =
        JoinGroup(rank, store, std::chrono::milliseconds(1500));
    if (group == nullptr) return absl::UnavailableError("no group");
    Replica replica = MakeReplica({rank, kRanks});
    RETURN_IF_ERROR(Step(replica, 1));
    ShardGather gather(*group);
    std::string whole_state;
    RETURN_IF_ERROR(gather.Capture(*replica.optimizer, 7, rank == 0 ? &whole_state : nullptr));
    if (rank == 2) return absl::OkStatus();  // gone before its pieces travel
    if (rank == 0) return gather.AssembleInto(whole_state, /*sealed=*/true);
    gather.Start();
    // The next checkpoint's capture reports the failed gather instead of copying.
    return gather.Capture(*replica.optimizer, 8, nullptr);
  });
  EXPECT_TRUE(results[2].ok()) << results[2];
  for (const uint32_t rank : {0u, 1u}) {
    EXPECT_FALSE(results[rank].ok()) << "rank " << rank;
    EXPECT_NE(results[rank].message().find(
                  "batch 7, gathering the optimizer's shards for a checkpoint in the background"),
              std::string::npos)
        << "rank " << rank << ": " << results[rank];
  }
}

}  // namespace
}  // namespace cohort::shard_gather_test
