// Worker::Create assembles a rank from a options alone. Two ranks run as two threads of this
// process, over a real Gloo group joined through an in-memory rendezvous store, with the real mlp
// plugin, the built-in optimizer, the gradient exchange and shared_fs checkpoints: they train to
// the end with the same parameters, and a pair stopped mid-way and resumed from its checkpoint ends
// bitwise where an uninterrupted pair does.
#include "runtime/worker/worker.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/arena/dtype.h"
#include "test/collective/rank_threads.h"
#include "test/trial/trial_harness.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using trial_test::kMlpPlugin;
using trial_test::MlpConfig;
using trial_test::RecordingEvents;

constexpr uint32_t kRanks = 2;
constexpr uint64_t kTrialId = 5;

ExperimentConfig PairConfig() {
  ExperimentConfig config = MlpConfig();  // 24 batches of 16, reports every 4
  config.experiment_seed = 77;
  config.optimizations.collective_timeout = 30;
  return config;
}

// One rank's options for `folder`'s storage; `events` is the rank's own.
WorkerOptions RankOptions(uint32_t rank, const std::string& folder, RendezvousStore& store,
                          TrialEvents& events, const std::string& group) {
  WorkerOptions options;
  options.config = PairConfig();
  options.plugin = testing::PluginPath(kMlpPlugin);
  options.checkpoint_root = folder;
  options.trial_id = kTrialId;
  options.rank = rank;
  options.size = kRanks;
  options.rendezvous = &store;
  options.group_prefix = group;
  options.events = &events;
  return options;
}

// The bytes of every parameter of `model`, in registration order.
std::vector<std::string> Parameters(LoadedModel& model) {
  std::vector<std::string> parameters;
  const TensorArena& arena = model.arena();
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    const absl::StatusOr<size_t> size = DtypeSize(arena.spec(t).dtype);
    parameters.emplace_back(static_cast<const char*>(arena.data(t)),
                            arena.spec(t).element_count * (size.ok() ? *size : 0));
  }
  return parameters;
}

// What one rank of a pair ended with.
struct RankResult {
  absl::StatusOr<TrialExit> exit = absl::UnknownError("not run");
  std::vector<std::string> parameters;
  RecordingEvents events;
  size_t buckets = 0;
};

// Runs a pair: each rank built by Worker::Create from RankOptions, `adjust` changing its options
// first; rank 1 asks to stop once it has trained `stop_after_batches`.
std::vector<RankResult> RunPair(const std::string& folder, const std::string& group,
                                const std::function<void(WorkerOptions&)>& adjust = {},
                                uint64_t stop_after_batches = UINT64_MAX) {
  InMemoryRendezvousStore store;
  std::vector<RankResult> results(kRanks);
  const std::vector<absl::Status> statuses = RunRanks(kRanks, [&](uint32_t rank) -> absl::Status {
    RankResult& result = results[rank];
    if (rank == 1) result.events.stop_after_batches = stop_after_batches;
    WorkerOptions options = RankOptions(rank, folder, store, result.events, group);
    if (adjust) adjust(options);
    absl::StatusOr<std::unique_ptr<Worker>> worker = Worker::Create(std::move(options));
    if (!worker.ok()) return worker.status();
    result.events.runner = &(*worker)->runner();
    if ((*worker)->exchange() != nullptr) result.buckets = (*worker)->exchange()->plan().size();
    result.exit = (*worker)->Run();
    result.parameters = Parameters((*worker)->model());
    return absl::OkStatus();
  });
  for (const absl::Status& status : statuses) EXPECT_TRUE(status.ok()) << status;
  return results;
}

TEST(WorkerTest, TwoRanksInOneProcessTrainToTheEndWithTheSameParameters) {
  TempFolder folder;
  const std::vector<RankResult> pair = RunPair(folder.path(), "whole/");
  for (const RankResult& rank : pair) {
    ASSERT_TRUE(rank.exit.ok()) << rank.exit.status();
    EXPECT_EQ(*rank.exit, TrialExit::kCompleted);
    EXPECT_GE(rank.buckets, 1u);
  }
  ASSERT_FALSE(pair[0].parameters.empty());
  EXPECT_EQ(pair[0].parameters, pair[1].parameters);
  // Only rank 0 reports and checkpoints; the last checkpoint is at the end.
  ASSERT_FALSE(pair[0].events.checkpoints.empty());
  EXPECT_EQ(pair[0].events.checkpoints.back().batches, 24u);
  EXPECT_TRUE(pair[1].events.checkpoints.empty());
  EXPECT_TRUE(pair[1].events.metrics.empty());
}

TEST(WorkerTest, APairStoppedAndResumedEndsBitwiseWhereAnUninterruptedPairDoes) {
  TempFolder whole_folder, resumed_folder;
  const std::vector<RankResult> whole = RunPair(whole_folder.path(), "whole/");
  ASSERT_TRUE(whole[0].exit.ok()) << whole[0].exit.status();

  // Rank 1 asks to stop; the ranks agree at the next training report and checkpoint there.
  std::vector<RankResult> stopped = RunPair(
      resumed_folder.path(), "first/", [](WorkerOptions&) {}, /*stop_after_batches=*/10);
  for (const RankResult& rank : stopped) {
    ASSERT_TRUE(rank.exit.ok()) << rank.exit.status();
    EXPECT_EQ(*rank.exit, TrialExit::kStopped);
  }
  ASSERT_FALSE(stopped[0].events.checkpoints.empty());
  const CheckpointReport stop = stopped[0].events.checkpoints.back();
  EXPECT_GT(stop.batches, 0u);
  EXPECT_LT(stop.batches, 24u);

  const std::vector<RankResult> resumed =
      RunPair(resumed_folder.path(), "second/", [&](WorkerOptions& options) {
        options.resume = stop.id;
        options.attempt = 1;
      });
  for (const RankResult& rank : resumed) {
    ASSERT_TRUE(rank.exit.ok()) << rank.exit.status();
    EXPECT_EQ(*rank.exit, TrialExit::kCompleted);
  }
  EXPECT_EQ(resumed[0].parameters, whole[0].parameters);
  EXPECT_EQ(resumed[1].parameters, whole[1].parameters);
}

TEST(WorkerTest, AConfigWithoutAnExperimentSeedIsRefused) {
  TempFolder folder;
  RecordingEvents events;
  WorkerOptions options;
  options.config = PairConfig();
  options.config.experiment_seed.reset();
  options.plugin = testing::PluginPath(kMlpPlugin);
  options.checkpoint_root = folder.path();
  options.events = &events;
  absl::StatusOr<std::unique_ptr<Worker>> worker = Worker::Create(std::move(options));
  EXPECT_EQ(worker.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(worker.status().message()), HasSubstr("experiment_seed"));
}

TEST(WorkerTest, SeveralRanksWithoutARendezvousAreRefused) {
  TempFolder folder;
  RecordingEvents events;
  WorkerOptions options;
  options.config = PairConfig();
  options.plugin = testing::PluginPath(kMlpPlugin);
  options.checkpoint_root = folder.path();
  options.size = 2;
  options.events = &events;
  absl::StatusOr<std::unique_ptr<Worker>> worker = Worker::Create(std::move(options));
  EXPECT_EQ(worker.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(worker.status().message()), HasSubstr("rendezvous"));
}

}  // namespace
}  // namespace cohort
