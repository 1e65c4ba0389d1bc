// LoadedModel driving the C reference plugin through the ABI: creation, exact gradients, metrics,
// state, and the host's checks of the plugin's side of the contract.
#include "runtime/plugin/loaded_model.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/base/permanent_failure.h"
#include "test/common/host_memory_as_device.h"
#include "test/unit/test_plugins.h"

namespace cohort {
namespace {

using testing::DefectivePlugin;
using ::testing::HasSubstr;
using testing::PluginPath;

class LoadedModelTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<LoadedModel>> Create(const std::string& path, double init = 0.0,
                                                      bool device_metrics = false,
                                                      DeviceValueReader* reader = nullptr,
                                                      const std::string& flag = "") {
    auto plugin = PluginLibrary::Open(path);
    if (!plugin.ok()) return plugin.status();
    ModelHostOptions options;
    options.context.size = 1;
    options.context.device = {COHORT_DEVICE_CPU, 0};
    options.hyperparameters.Set("init", init);
    if (device_metrics) options.hyperparameters.Set("device_metrics", 1);
    if (!flag.empty()) options.hyperparameters.Set(flag, 1);
    options.device_values = reader;
    options.memory = &memory_;
    options.on_gradients_ready = [this](uint32_t tensor, uint64_t offset, uint64_t count) {
      ready_.push_back({tensor, offset, count});
    };
    return LoadedModel::Create(*plugin, std::move(options));
  }

  static BatchSpec Batch(std::vector<uint64_t> records,
                         cohort_split split = COHORT_SPLIT_TRAINING) {
    BatchSpec batch = testing::TrainingBatch(std::move(records));
    batch.split = split;
    return batch;
  }

  struct Ready {
    uint32_t tensor;
    uint64_t offset, count;
  };
  CpuOnlyMemoryProvider memory_;
  std::vector<Ready> ready_;
};

TEST_F(LoadedModelTest, TrainsWithExactGradientsInTheArena) {
  auto model = Create(PluginPath("test/c_quadratic.so"), 1.0);
  ASSERT_TRUE(model.ok()) << model.status();
  TensorArena& arena = (*model)->arena();
  ASSERT_EQ(arena.tensor_count(), 1u);
  const float* x = static_cast<const float*>(arena.data(0));
  EXPECT_EQ(x[0], 1.0f);  // initialised by the plugin from the "init" hyperparameter

  // Records 2 and 3: targets t[j] = r % 5 + j, so mean(t) = (2.5, 3.5, 4.5) and grad = x - mean(t).
  auto metrics = (*model)->TrainBatch(Batch({2, 3}));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  const float* g = static_cast<const float*>(arena.grad(0));
  EXPECT_FLOAT_EQ(g[0], 1.0f - 2.5f);
  EXPECT_FLOAT_EQ(g[1], 1.0f - 3.5f);
  EXPECT_FLOAT_EQ(g[2], 1.0f - 4.5f);
  // loss = mean over records of 0.5 * |x - t|^2: record 2: (1+4+9)/2 = 7, record 3: (4+9+16)/2
  // = 14.5.
  ASSERT_NE(metrics->Find("loss"), nullptr);
  EXPECT_DOUBLE_EQ(metrics->Find("loss")->value, 10.75);
  EXPECT_EQ(metrics->Find("loss")->record_count, 2u);

  ASSERT_EQ(ready_.size(), 1u);
  EXPECT_EQ(ready_[0].tensor, 0u);
  EXPECT_EQ(ready_[0].count, 3u);

  // A second batch accumulates; zeroing is the host's job.
  ASSERT_TRUE((*model)->TrainBatch(Batch({2, 3})).ok());
  EXPECT_FLOAT_EQ(g[0], 2 * (1.0f - 2.5f));
  ASSERT_TRUE(arena.ZeroGradients().ok());
  EXPECT_EQ(g[0], 0.0f);
}

TEST_F(LoadedModelTest, AMetricStillOnTheDeviceIsReadAtOnceWithoutAReader) {
  auto model = Create(PluginPath("test/c_quadratic.so"), 1.0, /*device_metrics=*/true);
  ASSERT_TRUE(model.ok()) << model.status();
  auto metrics = (*model)->TrainBatch(Batch({2, 3}));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_FALSE(metrics->unsettled());
  EXPECT_DOUBLE_EQ(metrics->Find("loss")->value, 10.75);
}

TEST_F(LoadedModelTest, AMetricStillOnTheDeviceWaitsForSettleWithAReader) {
  testing::HostValueReader reader;
  auto model = Create(PluginPath("test/c_quadratic.so"), 1.0, /*device_metrics=*/true, &reader);
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<BatchMetrics> batches;
  for (int i = 0; i < 3; ++i) {
    auto metrics = (*model)->TrainBatch(Batch({2, 3}));
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    EXPECT_TRUE(metrics->unsettled());
    EXPECT_EQ(metrics->Find("loss")->record_count, 2u);
    batches.push_back(*std::move(metrics));
    ASSERT_TRUE((*model)->arena().ZeroGradients().ok());
  }
  EXPECT_EQ(reader.captures, 3);
  EXPECT_EQ(reader.copy_calls, 3);  // once as each call returned
  EXPECT_EQ(reader.takes, 0);
  ASSERT_TRUE((*model)->Settle(batches).ok());
  EXPECT_EQ(reader.takes, 1);
  for (const BatchMetrics& batch : batches) {
    EXPECT_FALSE(batch.unsettled());
    EXPECT_DOUBLE_EQ(batch.Find("loss")->value, 10.75);
  }

  // Settling needs every batch captured since the last time: one left out is an error.
  ASSERT_TRUE((*model)->TrainBatch(Batch({2, 3})).ok());
  auto last = (*model)->TrainBatch(Batch({2, 3}));
  ASSERT_TRUE(last.ok());
  std::vector<BatchMetrics> missing_one = {*std::move(last)};
  absl::Status settled = (*model)->Settle(missing_one);
  EXPECT_EQ(settled.code(), absl::StatusCode::kInternal) << settled;
}

// One slot, no exchange: a range reported twice still fails the batch, though the plugin dropped
// the error gradients_ready returned, and as a failure every attempt would meet. The refused
// report never reaches the exchange's hook.
TEST_F(LoadedModelTest, ARangeReportedTwiceFailsTheBatchThoughThePluginWentOn) {
  auto model = Create(PluginPath("test/c_quadratic.so"), 1.0, false, nullptr, "ready_twice");
  ASSERT_TRUE(model.ok()) << model.status();
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto trained = (*model)->TrainBatch(Batch({2, 3}));
    ASSERT_FALSE(trained.ok());
    EXPECT_EQ(trained.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(
        trained.status().message(),
        "plugin c_quadratic: train_batch (batch_index 0): gradients_ready: tensor 'x', range [2, "
        "2+1) overlaps range [0, 3) reported ready before in this batch: a range is final "
        "once reported");
    EXPECT_TRUE(IsPermanentFailure(trained.status()));
  }
  ASSERT_EQ(ready_.size(), 2u);  // the first report of each batch
  EXPECT_EQ(ready_[1].count, 3u);
}

// A report outside train_batch (here from evaluate_batch; as well one after train_batch returned)
// fails the next training batch, once.
TEST_F(LoadedModelTest, AReportOutsideTrainBatchFailsTheNextTrainingBatch) {
  auto model = Create(PluginPath("test/c_quadratic.so"), 1.0, false, nullptr, "ready_in_eval");
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE((*model)->EvaluateBatch(Batch({0}, COHORT_SPLIT_VALIDATION)).ok());
  EXPECT_TRUE(ready_.empty());
  auto trained = (*model)->TrainBatch(Batch({2, 3}));
  ASSERT_FALSE(trained.ok());
  EXPECT_EQ(trained.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(trained.status().message(),
              HasSubstr("train_batch (batch_index 0): gradients_ready may only be called during "
                        "train_batch"));
  EXPECT_TRUE(IsPermanentFailure(trained.status()));
  EXPECT_TRUE((*model)->TrainBatch(Batch({2, 3})).ok());
}

// A training loss over no records of a batch that has some would count for nothing.
TEST_F(LoadedModelTest, ALossOverNoRecordsOfABatchIsRefused) {
  auto model =
      Create(PluginPath("test/c_quadratic.so"), 1.0, false, nullptr, "loss_over_no_records");
  ASSERT_TRUE(model.ok()) << model.status();
  auto trained = (*model)->TrainBatch(Batch({2, 3}));
  ASSERT_FALSE(trained.ok());
  EXPECT_EQ(trained.status().message(),
            "plugin c_quadratic: train_batch (batch_index 0) reported \"loss\" over 0 records of "
            "a batch of 2: give metric_add the records the value is over (a mean's weight)");
  EXPECT_TRUE(IsPermanentFailure(trained.status()));
  // A rank's empty share of a last batch has no records to report.
  EXPECT_TRUE((*model)->TrainBatch(Batch({})).ok());
}

TEST_F(LoadedModelTest, EvaluatesAndReportsDatasetSizes) {
  auto model = Create(PluginPath("test/c_quadratic.so"));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(*(*model)->DatasetSize(COHORT_SPLIT_TRAINING), 10u);
  EXPECT_EQ(*(*model)->DatasetSize(COHORT_SPLIT_VALIDATION), 4u);
  auto metrics = (*model)->EvaluateBatch(Batch({0}, COHORT_SPLIT_VALIDATION));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_DOUBLE_EQ(metrics->Find("loss")->value, 0.5 * (0 + 1 + 4));
  EXPECT_TRUE(ready_.empty());
}

TEST_F(LoadedModelTest, StateRoundTripsAndMustBeConsumedWhole) {
  auto model = Create(PluginPath("test/c_quadratic.so"));
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE((*model)->TrainBatch(Batch({1})).ok());
  auto state = (*model)->SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->size(), sizeof(uint64_t));
  EXPECT_TRUE((*model)->LoadState(*state).ok());

  absl::Status longer = (*model)->LoadState(*state + "extra");
  EXPECT_EQ(longer.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(longer.message(), HasSubstr("load_state read 8 of 13 bytes"));

  absl::Status shorter = (*model)->LoadState("abc");
  EXPECT_EQ(shorter.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(shorter.message(),
              HasSubstr("plugin c_quadratic: load_state: reader_read: asked for 8 bytes"));
}

TEST_F(LoadedModelTest, PluginErrorsNameThePluginAndTheCall) {
  auto plugin = PluginLibrary::Open(PluginPath("test/c_quadratic.so"));
  ASSERT_TRUE(plugin.ok());
  ModelHostOptions options;
  options.hyperparameters.Set("init", "not a number");
  options.memory = &memory_;
  auto model = LoadedModel::Create(*plugin, std::move(options));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().message(),
            "plugin c_quadratic: model_create: hyperparameter 'init' is a string (\"not a "
            "number\"), not a double");
}

TEST_F(LoadedModelTest, RefusesAModelThatRegisteredNoTensors) {
  auto model = Create(DefectivePlugin("no_tensors"));
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(),
              HasSubstr("model_create returned without registering its tensors"));
}

TEST_F(LoadedModelTest, RefusesATrainBatchWithoutLoss) {
  auto model = Create(DefectivePlugin("no_loss"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto metrics = (*model)->TrainBatch(Batch({0}));
  ASSERT_FALSE(metrics.ok());
  EXPECT_THAT(metrics.status().message(),
              HasSubstr("train_batch (batch_index 0) did not report the metric \"loss\""));
}

TEST_F(LoadedModelTest, ACrashInTrainBatchKillsOnlyTheProcessRunningIt) {
  auto model = Create(DefectivePlugin("crash_in_train"));
  ASSERT_TRUE(model.ok()) << model.status();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGSEGV, SIG_DFL);  // die by the signal, not by a sanitizer's report
    (void)(*model)->TrainBatch(Batch({0}));
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
}

}  // namespace
}  // namespace cohort
