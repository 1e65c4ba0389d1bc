// CaptureTrialState / RestoreTrialState: a round trip continues bit for bit; a checkpoint for
// other tensors or another optimizer is refused; missing or damaged files are DATA_LOSS.
#include "runtime/trial/trial_state.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/trial/trial_harness.h"

namespace cohort::trial_test {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using Files = std::map<std::string, std::string>;

std::string Message(const absl::Status& status) { return std::string(status.message()); }

// Trains `batches` batches of 8 records and steps after each, as the runner would.
void Train(TrialHarness& trial, uint64_t first_batch, uint64_t batches) {
  for (uint64_t b = first_batch; b < first_batch + batches; ++b) {
    BatchSpec batch;
    batch.batch_index = b;
    for (uint64_t r = 0; r < 8; ++r) batch.record_indices.push_back((b * 8 + r) % 40);
    ASSERT_TRUE(trial.model().TrainBatch(batch).ok());
    if (trial.optimizer() != nullptr) {
      ASSERT_TRUE(trial.optimizer()->Step().ok());
    }
    ASSERT_TRUE(trial.model().arena().ZeroGradients().ok());
  }
}

// Sets every gradient byte of the arena to a nonzero pattern.
void DirtyGradients(TrialHarness& trial) {
  for (const ArenaBlock& block : trial.model().arena().blocks()) {
    std::memset(block.grad, 0x3f, block.element_count * block.element_size);
  }
}

bool GradientsAreZero(TrialHarness& trial) {
  for (const ArenaBlock& block : trial.model().arena().blocks()) {
    const auto* bytes = static_cast<const unsigned char*>(block.grad);
    for (size_t i = 0; i < block.element_count * block.element_size; ++i) {
      if (bytes[i] != 0) return false;
    }
  }
  return true;
}

class TrialStateTest : public ::testing::Test {
 protected:
  // A linreg trial; another seed gives other initial weights.
  std::unique_ptr<TrialHarness> Linreg(uint64_t seed, ExperimentConfig config = LinregConfig()) {
    absl::StatusOr<std::unique_ptr<TrialHarness>> trial =
        TrialHarness::Create(kLinregPlugin, std::move(config), folder_.path(), 1, seed);
    EXPECT_TRUE(trial.ok()) << trial.status();
    return trial.ok() ? *std::move(trial) : nullptr;
  }

  // The files of a linreg trial (seed 1) trained 3 batches.
  Files TrainedFiles(const TrialProgress& progress = {3, 24, 1, 3, std::nullopt}) {
    std::unique_ptr<TrialHarness> trial = Linreg(1);
    if (trial == nullptr) return {};
    Train(*trial, 0, 3);
    absl::StatusOr<Files> files = CaptureTrialState(trial->model(), trial->optimizer(), progress);
    EXPECT_TRUE(files.ok()) << files.status();
    return files.ok() ? *files : Files{};
  }

  TempFolder folder_;
};

TEST_F(TrialStateTest, CaptureWritesEveryFile) {
  const Files files = TrainedFiles();
  std::vector<std::string> names;
  for (const auto& [name, bytes] : files) names.push_back(name);
  EXPECT_THAT(names, UnorderedElementsAre("tensors", "parameters", "optimizer", "progress",
                                          "plugin_state"));
  EXPECT_THAT(files.at("tensors"), HasSubstr("weight"));
  EXPECT_THAT(files.at("tensors"), HasSubstr("bias"));
  EXPECT_EQ(files.at("plugin_state").size(), sizeof(uint64_t)) << "linreg's batch count";
}

TEST_F(TrialStateTest, RoundTripContinuesBitForBit) {
  std::unique_ptr<TrialHarness> original = Linreg(1);
  ASSERT_NE(original, nullptr);
  Train(*original, 0, 3);
  // The best metric goes back exactly, whatever its digits.
  const TrialProgress progress{3, 24, UINT64_MAX - 5, 3, 0.1 + 0.2};
  absl::StatusOr<Files> files =
      CaptureTrialState(original->model(), original->optimizer(), progress);
  ASSERT_TRUE(files.ok()) << files.status();

  std::unique_ptr<TrialHarness> restored = Linreg(2);
  ASSERT_NE(restored, nullptr);
  ASSERT_NE(restored->ParameterBytes(), original->ParameterBytes()) << "seeds should differ";
  DirtyGradients(*restored);
  absl::StatusOr<TrialProgress> back =
      RestoreTrialState(*files, restored->model(), restored->optimizer());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->batches_trained, 3u);
  EXPECT_EQ(back->records_trained, 24u);
  EXPECT_EQ(back->trial_seed, UINT64_MAX - 5);
  EXPECT_EQ(back->optimizer_steps, 3u);
  EXPECT_EQ(back->best_metric, 0.1 + 0.2);
  EXPECT_EQ(restored->ParameterBytes(), original->ParameterBytes());
  EXPECT_EQ(restored->optimizer()->SaveState(), original->optimizer()->SaveState());
  EXPECT_TRUE(GradientsAreZero(*restored));
  absl::StatusOr<std::string> original_state = original->model().SaveState();
  absl::StatusOr<std::string> restored_state = restored->model().SaveState();
  ASSERT_TRUE(original_state.ok() && restored_state.ok());
  EXPECT_EQ(*restored_state, *original_state);

  // Momentum and the plugin's batch count came back too: the next steps agree exactly.
  Train(*original, 3, 4);
  Train(*restored, 3, 4);
  EXPECT_EQ(restored->ParameterBytes(), original->ParameterBytes());
}

// A capture into an earlier capture's buffers (as a trial's next checkpoint does) writes the large
// files into the same memory; captured unsealed and then sealed, it is the plain capture.
TEST_F(TrialStateTest, ACaptureIntoSpareBuffersReusesTheirMemory) {
  std::unique_ptr<TrialHarness> trial = Linreg(1);
  ASSERT_NE(trial, nullptr);
  Train(*trial, 0, 3);
  const TrialProgress progress{3, 24, 1, 3, std::nullopt};
  absl::StatusOr<Files> first = CaptureTrialState(trial->model(), trial->optimizer(), progress);
  ASSERT_TRUE(first.ok()) << first.status();
  const Files plain = *first;
  const char* parameters = first->at("parameters").data();
  const char* optimizer = first->at("optimizer").data();
  absl::StatusOr<Files> again = CaptureTrialState(trial->model(), trial->optimizer(), progress,
                                                  *std::move(first), /*unsealed=*/true);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->at("parameters").data(), parameters);
  EXPECT_EQ(again->at("optimizer").data(), optimizer);
  EXPECT_NE(*again, plain);  // the optimizer's checksum is still to come
  SealTrialState(*again);
  EXPECT_EQ(*again, plain);
}

// linreg with track_targets keeps two state tensors (ABI 1.4): a checkpoint holds them in a
// "state" file, names them in the layout, and brings them back exactly.
TEST_F(TrialStateTest, StateTensorsTravelInTheirOwnFile) {
  ExperimentConfig config = LinregConfig();
  config.hyperparameters.Set("track_targets", true);
  std::unique_ptr<TrialHarness> original = Linreg(1, config);
  ASSERT_NE(original, nullptr);
  Train(*original, 0, 3);
  const TensorArena* state = original->model().state_arena();
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(*static_cast<const int64_t*>(state->data(0)), 24) << "3 batches of 8 records";
  absl::StatusOr<Files> files = CaptureTrialState(original->model(), original->optimizer(),
                                                  TrialProgress{3, 24, 1, 3, std::nullopt});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(files->at("tensors"),
              HasSubstr("targets_seen int64 1 cpu state\ntarget_mean float64 1 cpu state\n"));
  ASSERT_EQ(files->at("state").size(), 16u) << "two blocks of one 8-byte element, one per dtype";

  std::unique_ptr<TrialHarness> restored = Linreg(2, config);
  ASSERT_NE(restored, nullptr);
  ASSERT_TRUE(RestoreTrialState(*files, restored->model(), restored->optimizer()).ok());
  const TensorArena* back = restored->model().state_arena();
  EXPECT_EQ(*static_cast<const int64_t*>(back->data(0)), 24);
  EXPECT_EQ(*static_cast<const double*>(back->data(1)),
            *static_cast<const double*>(state->data(1)));

  // A checkpoint of the same tensors without its state, or with a short one, is refused whole.
  Files missing = *files;
  missing.erase("state");
  std::unique_ptr<TrialHarness> untouched = Linreg(2, config);
  ASSERT_NE(untouched, nullptr);
  const std::string before = untouched->ParameterBytes();
  absl::StatusOr<TrialProgress> refused =
      RestoreTrialState(missing, untouched->model(), untouched->optimizer());
  EXPECT_TRUE(absl::IsDataLoss(refused.status())) << refused.status();
  EXPECT_THAT(Message(refused.status()), HasSubstr("no 'state' file"));
  Files short_state = *files;
  short_state["state"].resize(8);
  refused = RestoreTrialState(short_state, untouched->model(), untouched->optimizer());
  EXPECT_THAT(Message(refused.status()), HasSubstr("checkpoint file 'state' holds 8 bytes"));
  EXPECT_EQ(untouched->ParameterBytes(), before);
  EXPECT_EQ(*static_cast<const int64_t*>(untouched->model().state_arena()->data(0)), 0);

  // A model without state tensors refuses a checkpoint written with them (the layouts differ).
  std::unique_ptr<TrialHarness> plain = Linreg(2);
  ASSERT_NE(plain, nullptr);
  refused = RestoreTrialState(*files, plain->model(), plain->optimizer());
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
}

TEST_F(TrialStateTest, PluginWithoutStateWritesNoPluginStateFile) {
  absl::StatusOr<std::unique_ptr<TrialHarness>> trial =
      TrialHarness::Create(kMlpPlugin, MlpConfig(), folder_.path());
  ASSERT_TRUE(trial.ok()) << trial.status();
  absl::StatusOr<Files> files =
      CaptureTrialState((*trial)->model(), (*trial)->optimizer(), TrialProgress{});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->count("plugin_state"), 0u);
  EXPECT_EQ(files->count("optimizer"), 1u);
}

// The plugin's load_state runs once the tensors hold the checkpoint's values, so it may derive
// what it keeps from them (cpp_layer with state_holds_w refuses a w other than the one it saved;
// it used to be called before the parameters were written).
TEST_F(TrialStateTest, LoadStateSeesTheTensorsAsTheCheckpointHoldsThem) {
  ExperimentConfig config = LinregConfig();
  config.entrypoint = "cpp_layer";
  config.hyperparameters.Set("state_holds_w", true);
  const auto cpp_layer = [&]() {
    absl::StatusOr<std::unique_ptr<TrialHarness>> trial = TrialHarness::Create(
        "test/cpp_layer.so", config, folder_.path(), 1, kTrialSeed, /*builtin_optimizer=*/false);
    EXPECT_TRUE(trial.ok()) << trial.status();
    return trial.ok() ? *std::move(trial) : nullptr;
  };
  std::unique_ptr<TrialHarness> saved = cpp_layer();
  ASSERT_NE(saved, nullptr);
  const ArenaBlock& w = saved->model().arena().blocks().at(0);
  ASSERT_EQ(w.element_count, 2u);
  const double trained[2] = {3.5, -1.25};
  std::memcpy(w.data, trained, sizeof trained);
  absl::StatusOr<Files> files = CaptureTrialState(saved->model(), nullptr, TrialProgress{});
  ASSERT_TRUE(files.ok()) << files.status();

  std::unique_ptr<TrialHarness> restored = cpp_layer();
  ASSERT_NE(restored, nullptr);
  absl::StatusOr<TrialProgress> back = RestoreTrialState(*files, restored->model(), nullptr);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(restored->ParameterBytes(), saved->ParameterBytes());
}

TEST_F(TrialStateTest, OtherTensorLayoutIsFailedPrecondition) {
  const Files files = TrainedFiles();
  ExperimentConfig wider = LinregConfig();
  wider.hyperparameters.Set("dim", 4);
  std::unique_ptr<TrialHarness> other = Linreg(1, wider);
  ASSERT_NE(other, nullptr);
  const std::string before = other->ParameterBytes();
  absl::StatusOr<TrialProgress> back = RestoreTrialState(files, other->model(), other->optimizer());
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(back.status()), HasSubstr("other tensors"));
  EXPECT_THAT(Message(back.status()), HasSubstr("weight float32 3"));
  EXPECT_THAT(Message(back.status()), HasSubstr("weight float32 4"));
  EXPECT_EQ(other->ParameterBytes(), before) << "a refused restore must change nothing";
}

TEST_F(TrialStateTest, CheckpointOfAnotherPluginIsFailedPrecondition) {
  const Files files = TrainedFiles();
  ExperimentConfig config = LinregConfig();
  absl::StatusOr<std::unique_ptr<TrialHarness>> quadratic =
      TrialHarness::Create("test/c_quadratic.so", config, folder_.path());
  ASSERT_TRUE(quadratic.ok()) << quadratic.status();
  absl::StatusOr<TrialProgress> back =
      RestoreTrialState(files, (*quadratic)->model(), (*quadratic)->optimizer());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(TrialStateTest, BuiltInOptimizerStateWithoutOptimizerIsFailedPrecondition) {
  const Files files = TrainedFiles();
  std::unique_ptr<TrialHarness> target = Linreg(1);
  ASSERT_NE(target, nullptr);
  absl::StatusOr<TrialProgress> back = RestoreTrialState(files, target->model(), nullptr);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(back.status()), HasSubstr("optimizer"));

  Files without_optimizer = files;
  without_optimizer.erase("optimizer");
  back = RestoreTrialState(without_optimizer, target->model(), target->optimizer());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(back.status()), HasSubstr("optimizer"));
}

// trial_state.h: FAILED_PRECONDITION when the checkpoint was written for another optimizer.
TEST_F(TrialStateTest, OtherOptimizerKindIsFailedPrecondition) {
  const Files files = TrainedFiles();  // SGD with momentum
  ExperimentConfig adam = LinregConfig();
  adam.hyperparameters.Set("optimizer", "adam");
  std::unique_ptr<TrialHarness> target = Linreg(1, adam);
  ASSERT_NE(target, nullptr);
  absl::StatusOr<TrialProgress> back =
      RestoreTrialState(files, target->model(), target->optimizer());
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kFailedPrecondition) << back.status();
}

TEST_F(TrialStateTest, MissingFilesAreDataLoss) {
  const Files files = TrainedFiles();
  for (const char* name : {"tensors", "parameters", "progress", "plugin_state"}) {
    Files damaged = files;
    damaged.erase(name);
    std::unique_ptr<TrialHarness> target = Linreg(2);
    ASSERT_NE(target, nullptr);
    absl::StatusOr<TrialProgress> back =
        RestoreTrialState(damaged, target->model(), target->optimizer());
    ASSERT_FALSE(back.ok()) << name;
    EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss) << name << ": " << back.status();
    EXPECT_THAT(Message(back.status()), HasSubstr(name));
  }
}

TEST_F(TrialStateTest, TruncatedParametersAreDataLoss) {
  Files files = TrainedFiles();
  files["parameters"].pop_back();
  std::unique_ptr<TrialHarness> target = Linreg(2);
  ASSERT_NE(target, nullptr);
  absl::StatusOr<TrialProgress> back =
      RestoreTrialState(files, target->model(), target->optimizer());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(Message(back.status()), HasSubstr("parameters"));
}

TEST_F(TrialStateTest, GarbledProgressIsDataLossAndChangesNothing) {
  const Files files = TrainedFiles();
  const std::string good = files.at("progress");
  for (const std::string& progress :
       {std::string(
            "batches_trained=twelve\nrecords_trained=24\ntrial_seed=1\noptimizer_steps=3\n"),
        std::string("batches_trained=3\nrecords_trained=24\ntrial_seed=1\n"),  // a line short
        std::string("batches_trained=3\nrecords_trained=24\ntrial_seed=1\noptimizer_steps=3\n"
                    "learning_rate=7\n"),
        std::string("batches_trained 3\n"), std::string("\x01\x02\xff garbage"), std::string()}) {
    Files damaged = files;
    damaged["progress"] = progress;
    std::unique_ptr<TrialHarness> target = Linreg(2);
    ASSERT_NE(target, nullptr);
    const std::string before = target->ParameterBytes();
    const std::string optimizer_before = target->optimizer()->SaveState();
    absl::StatusOr<TrialProgress> back =
        RestoreTrialState(damaged, target->model(), target->optimizer());
    ASSERT_FALSE(back.ok()) << progress;
    EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss) << progress;
    EXPECT_THAT(Message(back.status()), HasSubstr("progress"));
    EXPECT_EQ(target->ParameterBytes(), before);
    EXPECT_EQ(target->optimizer()->SaveState(), optimizer_before);
  }
  // The good text really is accepted by the same target.
  std::unique_ptr<TrialHarness> target = Linreg(2);
  ASSERT_NE(target, nullptr);
  EXPECT_TRUE(RestoreTrialState(files, target->model(), target->optimizer()).ok()) << good;
}

// The "ready_order" file: what ReadyOrderText writes comes back; anything else is DATA_LOSS
// naming the file.
TEST(ReadyOrderFileTest, RoundTripsAndRefusesAnythingElse) {
  const std::vector<uint32_t> order = {3, 0, 2, 1, 4000000000u};
  EXPECT_EQ(ReadyOrderText(order), "3 0 2 1 4000000000\n");
  absl::StatusOr<std::vector<uint32_t>> parsed = ParseReadyOrder(ReadyOrderText(order));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, order);
  for (const char* bad :
       {"", "\n", "1 2", "1  2\n", "1 -2\n", "1 +2\n", "1 x\n", "1 2 \n", "5000000000\n"}) {
    SCOPED_TRACE(bad);
    const absl::Status status = ParseReadyOrder(bad).status();
    EXPECT_TRUE(absl::IsDataLoss(status)) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("checkpoint file 'ready_order'"));
  }
}

}  // namespace
}  // namespace cohort::trial_test
