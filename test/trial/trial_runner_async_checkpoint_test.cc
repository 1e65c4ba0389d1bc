// TrialRunner with checkpoint_storage.async: training goes on while rank 0 writes a checkpoint on
// the writer's thread; the checkpoint is reported once whole; one write at a time; a stop, the end
// and a failure all wait for the write in flight; a failed write fails the trial with the
// storage's error and reports nothing; the files are those a synchronous write makes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/common/gate.h"
#include "test/optim/optim_test_util.h"
#include "test/trial/trial_harness.h"

namespace cohort::trial_test {
namespace {

using ::testing::ElementsAre;
using testing::Gate;
using ::testing::HasSubstr;

// Shared_fs storage whose writes first ask `before_write` (on the writing thread), which may hold
// them back or fail them; it counts the writes running at once.
class HeldStorage final : public CheckpointStorage {
 public:
  explicit HeldStorage(std::unique_ptr<CheckpointStorage> inner) : inner_(std::move(inner)) {}

  absl::Status Write(const CheckpointInfo& info,
                     const std::map<std::string, std::string>& files) override {
    const int now = ++writing_;
    most_at_once_ = std::max(most_at_once_.load(), now);
    absl::Status status = before_write ? before_write(info) : absl::OkStatus();
    if (status.ok()) status = inner_->Write(info, files);
    --writing_;
    return status;
  }
  absl::StatusOr<Checkpoint> Read(absl::string_view id) const override { return inner_->Read(id); }
  absl::StatusOr<std::vector<CheckpointInfo>> List() const override { return inner_->List(); }
  absl::StatusOr<std::vector<DamagedCheckpoint>> ListDamaged() const override {
    return inner_->ListDamaged();
  }
  absl::Status Delete(absl::string_view id) override { return inner_->Delete(id); }
  absl::Status CleanTemporary() override { return inner_->CleanTemporary(); }
  std::string Describe() const override { return inner_->Describe(); }

  std::function<absl::Status(const CheckpointInfo&)> before_write;  // set before the trial runs
  int most_at_once() const { return most_at_once_; }

 private:
  std::unique_ptr<CheckpointStorage> inner_;
  std::atomic<int> writing_{0};
  std::atomic<int> most_at_once_{0};
};

class AsyncCheckpointTest : public ::testing::Test {
 protected:
  // linreg, 20 batches, a checkpoint every `period` batches, written in the background.
  static ExperimentConfig AsyncConfig(uint64_t period) {
    ExperimentConfig config = LinregConfig();
    config.min_checkpoint_period = Batches(period);
    config.checkpoint_storage.async = true;
    return config;
  }

  std::unique_ptr<TrialHarness> Trial(const ExperimentConfig& config, const TempFolder& folder) {
    absl::StatusOr<std::unique_ptr<TrialHarness>> trial = TrialHarness::Create(
        kLinregPlugin, config, folder.path(), 1, kTrialSeed, true, nullptr,
        [this](std::unique_ptr<CheckpointStorage> inner) -> std::unique_ptr<CheckpointStorage> {
          auto held = std::make_unique<HeldStorage>(std::move(inner));
          storage_ = held.get();
          return held;
        });
    EXPECT_TRUE(trial.ok()) << trial.status();
    return trial.ok() ? *std::move(trial) : nullptr;
  }

  // Writes that take `pause` longer.
  static std::function<absl::Status(const CheckpointInfo&)> Slowly(
      std::chrono::milliseconds pause) {
    return [pause](const CheckpointInfo&) {
      std::this_thread::sleep_for(pause);
      return absl::OkStatus();
    };
  }

  static std::vector<std::string> ReportedIds(TrialHarness& trial) {
    std::vector<std::string> ids;
    for (const CheckpointReport& report : trial.events().checkpoints) ids.push_back(report.id);
    return ids;
  }

  TempFolder folder_;
  HeldStorage* storage_ = nullptr;  // the last Trial's
};

TEST_F(AsyncCheckpointTest, TrainingGoesOnWhileACheckpointIsWritten) {
  std::unique_ptr<TrialHarness> trial = Trial(AsyncConfig(10), folder_);
  ASSERT_NE(trial, nullptr);
  Gate gate;
  storage_->before_write = [&gate](const CheckpointInfo& info) {
    return info.batches_trained == 10 ? gate.Pass() : absl::OkStatus();
  };
  // The write of batch 10's checkpoint is held until batch 13 is trained: only a runner that
  // trains on while writing gets there.
  size_t reported_at_13 = 99;
  trial->events().after_step = [&](uint64_t batches) {
    if (batches != 13) return;
    reported_at_13 = trial->events().checkpoints.size();
    gate.Open();
  };
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(*exit, TrialExit::kCompleted);
  EXPECT_EQ(reported_at_13, 0u);  // batch 10's checkpoint was not whole yet
  // Both checkpoints were reported, the last one before Run returned, each once whole.
  EXPECT_THAT(ReportedIds(*trial), ElementsAre("trial-1-batch-10", "trial-1-batch-20"));
  for (const CheckpointReport& report : trial->events().checkpoints) {
    absl::StatusOr<Checkpoint> read = trial->storage().Read(report.id);
    EXPECT_TRUE(read.ok()) << read.status();
    EXPECT_GT(report.bytes, 0u);
  }
}

TEST_F(AsyncCheckpointTest, ACheckpointWaitsForTheWriteBeforeIt) {
  std::unique_ptr<TrialHarness> trial = Trial(AsyncConfig(1), folder_);
  ASSERT_NE(trial, nullptr);
  storage_->before_write = Slowly(std::chrono::milliseconds(5));
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(storage_->most_at_once(), 1);
  std::vector<std::string> expected;
  for (int batch = 1; batch <= 20; ++batch) {
    expected.push_back("trial-1-batch-" + std::to_string(batch));
  }
  EXPECT_EQ(ReportedIds(*trial), expected);
}

TEST_F(AsyncCheckpointTest, AStopWaitsForItsCheckpoint) {
  std::unique_ptr<TrialHarness> trial = Trial(AsyncConfig(10), folder_);
  ASSERT_NE(trial, nullptr);
  storage_->before_write = Slowly(std::chrono::milliseconds(50));
  trial->events().stop_after_batches = 7;
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(*exit, TrialExit::kStopped);
  EXPECT_THAT(ReportedIds(*trial), ElementsAre("trial-1-batch-7"));
  absl::StatusOr<CheckpointInfo> latest = LatestCheckpoint(trial->storage(), 1);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->id, "trial-1-batch-7");
}

TEST_F(AsyncCheckpointTest, AFailedWriteFailsTheTrialAndIsNotReported) {
  std::unique_ptr<TrialHarness> trial = Trial(AsyncConfig(5), folder_);
  ASSERT_NE(trial, nullptr);
  storage_->before_write = [](const CheckpointInfo& info) {
    return info.batches_trained == 10 ? absl::ResourceExhaustedError("no space left on device")
                                      : absl::OkStatus();
  };
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_FALSE(exit.ok());
  EXPECT_EQ(exit.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(exit.status().message(), HasSubstr("no space left on device"));
  EXPECT_THAT(ReportedIds(*trial), ElementsAre("trial-1-batch-5"));
  absl::StatusOr<CheckpointInfo> latest = LatestCheckpoint(trial->storage(), 1);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->id, "trial-1-batch-5");
}

// The same trial with and without async writes: the same checkpoints, byte for byte, and the
// same parameters at the end.
TEST_F(AsyncCheckpointTest, WritesTheFilesASynchronousWriteWould) {
  TempFolder other;
  ExperimentConfig async = AsyncConfig(5);
  ExperimentConfig sync = async;
  sync.checkpoint_storage.async = false;
  std::unique_ptr<TrialHarness> a = Trial(async, folder_);
  std::unique_ptr<TrialHarness> b = Trial(sync, other);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->runner().Run().ok());
  ASSERT_TRUE(b->runner().Run().ok());
  EXPECT_EQ(a->ParameterBytes(), b->ParameterBytes());
  ASSERT_EQ(ReportedIds(*a), ReportedIds(*b));
  for (const std::string& id : ReportedIds(*a)) {
    absl::StatusOr<Checkpoint> x = a->storage().Read(id);
    absl::StatusOr<Checkpoint> y = b->storage().Read(id);
    ASSERT_TRUE(x.ok() && y.ok()) << id;
    EXPECT_EQ(x->files, y->files) << id;
  }
}

// A GPU trial's background checkpoints stage the device's tensors in page-locked memory (here host
// memory posing as cuda:0): the same checkpoints as synchronous writes, page-locked memory taken
// once, as the trial starts, and given back with the trial. Where it is refused, the trial says
// so once and copies straight.
TEST_F(AsyncCheckpointTest, ADevicesTensorsGoThroughPageLockedMemoryToTheSameCheckpoints) {
  ExperimentConfig config = QuadraticConfig(12);
  config.hyperparameters.Set("momentum", 0.9);  // a state buffer besides the parameters
  config.min_checkpoint_period = Batches(4);
  config.checkpoint_storage.async = false;
  struct Run {
    testing::HostMemoryAsDevice memory;
    optim_test::HostRuleKernels kernels;
    TempFolder folder;
    std::vector<std::string> checkpoints;
    std::map<std::string, std::map<std::string, std::string>> files;
  };
  const auto run = [&config](Run& run, bool async) {
    ExperimentConfig changed = config;
    changed.checkpoint_storage.async = async;
    const PosedDevice device{&run.memory, &run.kernels};
    absl::StatusOr<std::unique_ptr<TrialHarness>> trial =
        TrialHarness::Create("test/c_quadratic.so", changed, run.folder.path(), 1, kTrialSeed, true,
                             nullptr, nullptr, &device);
    ASSERT_TRUE(trial.ok()) << trial.status();
    ASSERT_EQ((*trial)->model().arena().blocks().at(0).device.kind, COHORT_DEVICE_CUDA);
    ASSERT_TRUE((*trial)->runner().Run().ok());
    for (const CheckpointReport& report : (*trial)->events().checkpoints) {
      run.checkpoints.push_back(report.id);
      absl::StatusOr<Checkpoint> read = (*trial)->storage().Read(report.id);
      ASSERT_TRUE(read.ok()) << read.status();
      run.files[report.id] = read->files;
    }
    if (async) {
      // Once, before the first checkpoint, for the parameters' block and the momentum's.
      EXPECT_EQ(run.memory.device().pinned_allocations, run.memory.device().refuse_pinning ? 0 : 1);
      const int warnings = static_cast<int>(std::count_if(
          (*trial)->events().notices.begin(), (*trial)->events().notices.end(),
          [](const std::string& line) { return line.find("pageable") != std::string::npos; }));
      EXPECT_EQ(warnings, run.memory.device().refuse_pinning ? 1 : 0);
    }
  };
  Run sync, async, refused;
  refused.memory.device().refuse_pinning = true;
  run(sync, false);
  run(async, true);
  run(refused, true);
  EXPECT_THAT(sync.checkpoints,
              ElementsAre("trial-1-batch-4", "trial-1-batch-8", "trial-1-batch-12"));
  EXPECT_EQ(sync.memory.device().pinned_allocations, 0) << "a synchronous write copies straight";
  EXPECT_EQ(async.checkpoints, sync.checkpoints);
  EXPECT_EQ(async.files, sync.files);
  EXPECT_EQ(refused.files, sync.files);
  EXPECT_EQ(async.memory.device().pinned_held, 0) << "given back with the trial";
}

}  // namespace
}  // namespace cohort::trial_test
