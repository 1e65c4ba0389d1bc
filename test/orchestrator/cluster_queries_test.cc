// The orchestrator's read-only answers, on a cluster built by hand: an experiment's description
// and summary, the task and agent tables, a trial's logs, the scaling comparison with a 1-slot
// experiment, and the Prometheus page.
#include "runtime/orchestrator/cluster_queries.h"

#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort::orchestration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Builds a Cluster one part at a time.
class ClusterBuilder {
 public:
  Experiment& AddExperiment(uint64_t id, uint32_t slots_per_trial = 1) {
    auto experiment = std::make_unique<Experiment>();
    experiment->id = id;
    experiment->config.name = "exp-" + std::to_string(id);
    experiment->config.slots_per_trial = slots_per_trial;
    experiment->one_slot_fingerprint = "same training";
    return *cluster.experiments.emplace(id, std::move(experiment)).first->second;
  }

  // A trial of `experiment` for searcher request `request_id`, brought to `stage`.
  Trial& AddTrial(Experiment& experiment, uint64_t id, uint64_t request_id, TrialStage stage) {
    auto trial = std::make_unique<Trial>(/*log_capacity=*/100);
    trial->id = id;
    trial->experiment_id = experiment.id;
    trial->request_id = request_id;
    switch (stage) {
      case TrialStage::kRunning:
        trial->lifecycle.Train();
        trial->lifecycle.TaskCreated();
        trial->lifecycle.TaskLaunched();
        break;
      case TrialStage::kCompleted:
        trial->lifecycle.End(TrialState::kCompleted);
        break;
      case TrialStage::kError:
        trial->lifecycle.End(TrialState::kError);
        break;
      default:
        break;
    }
    experiment.trials[request_id] = id;
    experiment.record.trial(id);
    return *cluster.trials.emplace(id, std::move(trial)).first->second;
  }

  // A training report of `records_per_second` for the trial in its experiment's record.
  static void Trained(Experiment& experiment, uint64_t trial_id, double records_per_second) {
    MetricsReport report;
    report.trial_id = trial_id;
    report.batches = 10;
    report.records_per_second = records_per_second;
    report.metrics = {{"loss", 0.5}};
    experiment.record.trial(trial_id).latest_training = report;
  }

  Cluster cluster;
};

TEST(ClusterQueriesTest, DescribeListsTrialsInIdOrderAndCountsThemByOutcome) {
  ClusterBuilder b;
  Experiment& experiment = b.AddExperiment(3);
  b.AddTrial(experiment, /*id=*/7, /*request_id=*/1, TrialStage::kRunning).task_id = 40;
  b.AddTrial(experiment, 5, 2, TrialStage::kCompleted);
  b.AddTrial(experiment, 6, 3, TrialStage::kError).error = "exit code 1";

  const ClientMessage reply = DescribeExperimentReply(b.cluster, DescribeExperiment{3});
  const auto* description = std::get_if<ExperimentDescription>(&reply);
  ASSERT_NE(description, nullptr) << ClientMessageName(reply);
  std::vector<uint64_t> ids;
  for (const TrialSummary& trial : description->trials) ids.push_back(trial.trial_id);
  EXPECT_THAT(ids, ElementsAre(5, 6, 7));
  EXPECT_EQ(description->trials[1].error, "exit code 1");
  EXPECT_EQ(description->trials[2].state, TrialState::kRunning);
  EXPECT_EQ(description->trials[2].task_id, 40u);
  const ExperimentSummary& summary = description->summary;
  EXPECT_EQ(summary.name, "exp-3");
  EXPECT_EQ(summary.trials, 3u);
  EXPECT_EQ(summary.active_trials, 1u);
  EXPECT_EQ(summary.completed_trials, 1u);
  EXPECT_EQ(summary.errored_trials, 1u);
  // No searcher (an experiment that ended before this orchestrator): progress is whole.
  EXPECT_EQ(summary.progress, 1.0);

  const ClientMessage unknown = DescribeExperimentReply(b.cluster, DescribeExperiment{4});
  ASSERT_TRUE(std::holds_alternative<ClientError>(unknown));
  EXPECT_EQ(std::get<ClientError>(unknown).code, ClientErrorCode::kNotFound);
  EXPECT_EQ(std::get<ClientError>(unknown).message,
            "no experiment 4 (`cohort experiment list --all` lists the experiments)");
}

TEST(ClusterQueriesTest, DescribeGivesTheLearningRateScaledToTheSlots) {
  ClusterBuilder b;
  Experiment& experiment = b.AddExperiment(3, /*slots_per_trial=*/4);
  b.AddTrial(experiment, 7, 1, TrialStage::kRunning).hparams.Set("learning_rate", 0.05);
  auto described = [&] {
    const ClientMessage reply = DescribeExperimentReply(b.cluster, DescribeExperiment{3});
    return std::get<ExperimentDescription>(reply).trials[0].scaled_learning_rate;
  };
  EXPECT_EQ(described(), 0);  // not scaled: nothing to say beside the hyperparameter
  experiment.config.optimizations.learning_rate_scaling = LearningRateScaling::kLinear;
  EXPECT_DOUBLE_EQ(described(), 0.2);
  experiment.config.optimizations.learning_rate_scaling = LearningRateScaling::kSqrt;
  experiment.config.optimizations.learning_rate_reference_slots = 1;
  EXPECT_DOUBLE_EQ(described(), 0.1);
}

// A trial's description names its best checkpoint (the kept one validated best) beside its latest,
// and where the best metric was validated.
TEST(ClusterQueriesTest, DescribeNamesTheBestCheckpointBesideTheLatest) {
  ClusterBuilder b;
  Experiment& experiment = b.AddExperiment(3);
  experiment.record.searcher_metric = "loss";
  experiment.record.smaller_is_better = true;
  Trial& trial = b.AddTrial(experiment, 7, 1, TrialStage::kRunning);
  for (auto [batches, loss] : {std::pair{100u, 0.4}, {200u, 0.2}, {300u, 0.3}}) {
    experiment.record.Apply(MetricsReport{.trial_id = 7,
                                          .kind = ReportKind::kValidation,
                                          .batches = batches,
                                          .metrics = {{"loss", loss}}});
    const std::string id = "trial-7-batch-" + std::to_string(batches);
    experiment.record.Apply(CheckpointReport{.trial_id = 7, .id = id, .batches = batches});
    trial.latest_checkpoint_id = id;
  }
  const ClientMessage reply = DescribeExperimentReply(b.cluster, DescribeExperiment{3});
  const TrialSummary& described = std::get<ExperimentDescription>(reply).trials.at(0);
  EXPECT_TRUE(described.has_best_metric);
  EXPECT_DOUBLE_EQ(described.best_metric, 0.2);
  EXPECT_EQ(described.best_metric_batches, 200u);
  EXPECT_EQ(described.best_checkpoint_id, "trial-7-batch-200");
  EXPECT_EQ(described.latest_checkpoint_id, "trial-7-batch-300");
}

// A one-trial experiment half way through its trial is not at 0%: progress counts batches where
// the search's batches are known.
// A single searcher of 20000 batches for `experiment`, started: the ops it started with.
std::vector<SearcherOp> StartSingleSearch(Experiment& experiment) {
  experiment.config.searcher.name = "single";
  absl::StatusOr<std::unique_ptr<Searcher>> searcher =
      CreateSearcher(experiment.config, /*max_batches=*/20000);
  EXPECT_TRUE(searcher.ok()) << searcher.status();
  if (!searcher.ok()) return {};
  experiment.searcher = *std::move(searcher);
  return experiment.searcher->Start();
}

TEST(ClusterQueriesTest, ProgressMovesWithEveryBatchOfASingleTrial) {
  ClusterBuilder b;
  Experiment& experiment = b.AddExperiment(1);
  ASSERT_FALSE(StartSingleSearch(experiment).empty());
  Trial& trial = b.AddTrial(experiment, 1, 1, TrialStage::kRunning);
  trial.batches_trained = 11400;
  EXPECT_DOUBLE_EQ(SummarizeExperiment(b.cluster, experiment).progress, 0.57);
}

// A searcher counting records counts each batch as the records its slots train: 33 at 2 slots is
// 32 a batch, so 6000 batches of a 384000-record search are half of it, not 51.6%.
TEST(ClusterQueriesTest, ProgressInRecordsCountsTheRecordsABatchTrains) {
  ClusterBuilder b;
  Experiment& experiment = b.AddExperiment(1);
  experiment.config.slots_per_trial = 2;
  experiment.searcher_counts_records = true;
  experiment.config.searcher.name = "single";
  absl::StatusOr<std::unique_ptr<Searcher>> searcher =
      CreateSearcher(experiment.config, /*max_batches=*/384000);
  ASSERT_TRUE(searcher.ok()) << searcher.status();
  experiment.searcher = *std::move(searcher);
  ASSERT_FALSE(experiment.searcher->Start().empty());
  Trial& trial = b.AddTrial(experiment, 1, 1, TrialStage::kRunning);
  trial.global_batch_size = 33;
  trial.batches_trained = 6000;
  EXPECT_DOUBLE_EQ(SummarizeExperiment(b.cluster, experiment).progress, 0.5);
}

// A killed experiment's progress is what its trials trained: its searcher counts a killed trial
// as finished, which showed a single trial killed at 57% as 100% done.
// A single search whose one trial (id 1) ended in `stage` after `batches`, before its target: its
// searcher counts it as finished.
void EndTheSingleTrialEarly(ClusterBuilder& b, Experiment& experiment, TrialStage stage,
                            uint64_t batches) {
  const std::vector<SearcherOp> started = StartSingleSearch(experiment);
  ASSERT_FALSE(started.empty());
  const uint64_t request_id = std::get<CreateTrial>(started[0]).request_id;
  b.AddTrial(experiment, 1, request_id, stage).batches_trained = batches;
  experiment.searcher->OnTrialExitedEarly(request_id);
  ASSERT_EQ(experiment.searcher->Progress(), 1.0);
}

TEST(ClusterQueriesTest, AKilledExperimentsProgressIsWhatItsTrialsTrained) {
  ClusterBuilder b;
  Experiment& experiment = b.AddExperiment(1);
  ASSERT_NO_FATAL_FAILURE(EndTheSingleTrialEarly(b, experiment, TrialStage::kStopped, 11400));
  experiment.state = ExperimentState::kStopped;
  EXPECT_DOUBLE_EQ(SummarizeExperiment(b.cluster, experiment).progress, 0.57);

  // Read back after a restart (no searcher): from its record.
  experiment.searcher.reset();
  TrialRecord& recorded = experiment.record.trial(1);
  recorded.batches_trained = 11400;
  recorded.total_batches = 20000;
  EXPECT_DOUBLE_EQ(SummarizeExperiment(b.cluster, experiment).progress, 0.57);
}

// So is a failed one's: a trial that failed before its first batch left the experiment at 100%.
TEST(ClusterQueriesTest, AFailedExperimentsProgressIsWhatItsTrialsTrained) {
  ClusterBuilder b;
  Experiment& experiment = b.AddExperiment(1);
  ASSERT_NO_FATAL_FAILURE(EndTheSingleTrialEarly(b, experiment, TrialStage::kError, 0));
  experiment.state = ExperimentState::kError;
  EXPECT_DOUBLE_EQ(SummarizeExperiment(b.cluster, experiment).progress, 0.0);
  experiment.searcher.reset();  // read back after a restart
  experiment.record.trial(1).total_batches = 20000;
  EXPECT_DOUBLE_EQ(SummarizeExperiment(b.cluster, experiment).progress, 0.0);
}

TEST(ClusterQueriesTest, TasksAndAgentsSayWhereEachTaskIsOrWhyItWaits) {
  ClusterBuilder b;
  auto queued = std::make_unique<Task>();
  queued->id = 2;
  queued->slots = 4;
  queued->waiting_reason = "needs 4 slots; 1 free";
  b.cluster.tasks.emplace(2, std::move(queued));
  auto placed = std::make_unique<Task>();
  placed->id = 1;
  placed->state = TaskRowState::kRunning;
  placed->waiting_reason = "an old reason";
  placed->parts["node-b"] = AgentPart{};
  placed->parts["node-a"] = AgentPart{};
  b.cluster.tasks.emplace(1, std::move(placed));
  auto agent = std::make_unique<Agent>();
  agent->id = "node-a";
  agent->slots.resize(3);
  agent->busy = {{0, SlotUser{1, 9}}, {1, SlotUser{1, 9}}};
  agent->connected = true;
  b.cluster.agents.emplace("node-a", std::move(agent));

  const TaskListing tasks = ListTasksReply(b.cluster);
  ASSERT_EQ(tasks.tasks.size(), 2u);
  EXPECT_EQ(tasks.tasks[0].task_id, 1u);
  EXPECT_THAT(tasks.tasks[0].agents, ElementsAre("node-a", "node-b"));
  EXPECT_EQ(tasks.tasks[0].reason, "");  // only a queued task says why it waits
  EXPECT_EQ(tasks.tasks[1].reason, "needs 4 slots; 1 free");
  const AgentTable agents = ListAgentsReply(b.cluster);
  ASSERT_EQ(agents.agents.size(), 1u);
  EXPECT_EQ(agents.agents[0].slots, 3u);
  EXPECT_EQ(agents.agents[0].busy_slots, 2u);
  EXPECT_THAT(agents.agents[0].task_ids, ElementsAre(1u));  // once, though it holds two slots
}

TEST(ClusterQueriesTest, LogsEndOnlyWhenTheTrialEndedAndEveryLineWasSent) {
  ClusterBuilder b;
  Experiment& experiment = b.AddExperiment(1);
  Trial& trial = b.AddTrial(experiment, 1, 1, TrialStage::kCompleted);
  for (int i = 0; i < 3; ++i) {
    trial.log.Append(0, LogLine{static_cast<uint32_t>(i % 2), LogStream::kStdout, 0, "line"});
  }
  auto logs = [&](uint64_t after, int32_t rank, uint32_t max_lines) {
    return TrialLogsReply(b.cluster, TrialLogsRequest{1, rank, after, max_lines});
  };
  const ClientMessage all = logs(0, -1, 0);
  ASSERT_TRUE(std::holds_alternative<TrialLogs>(all));
  EXPECT_EQ(std::get<TrialLogs>(all).lines.size(), 3u);
  EXPECT_TRUE(std::get<TrialLogs>(all).trial_ended);
  const TrialLogs cut = std::get<TrialLogs>(logs(0, -1, 2));  // a line is left to send
  EXPECT_EQ(cut.lines.size(), 2u);
  EXPECT_FALSE(cut.trial_ended);
  EXPECT_EQ(std::get<TrialLogs>(logs(0, 1, 0)).lines.size(), 1u);  // rank 1's only
  trial.task_id = 8;  // a task still running can add lines
  EXPECT_FALSE(std::get<TrialLogs>(logs(0, -1, 0)).trial_ended);

  EXPECT_EQ(std::get<ClientError>(logs(0, -2, 0)).code, ClientErrorCode::kInvalidRequest);
  // Past the trial's slot, a rank that printed nothing is named, not followed in vain.
  const ClientError no_rank = std::get<ClientError>(logs(0, 2, 0));
  EXPECT_EQ(no_rank.code, ClientErrorCode::kNotFound);
  EXPECT_EQ(no_rank.message, "trial 1 has no rank 2: it runs on 1 slot (rank 0)");
  EXPECT_EQ(std::get<ClientError>(TrialLogsReply(b.cluster, TrialLogsRequest{2, -1, 0, 0})).code,
            ClientErrorCode::kNotFound);
}

TEST(ClusterQueriesTest, AWiderExperimentIsComparedWithTheNewestOneSlotExperimentsMedian) {
  ClusterBuilder b;
  Experiment& older = b.AddExperiment(1);
  b.AddTrial(older, 1, 1, TrialStage::kCompleted);
  ClusterBuilder::Trained(older, 1, 1000);
  Experiment& one_slot = b.AddExperiment(2);
  for (uint64_t id : {2, 3, 4}) b.AddTrial(one_slot, id, id, TrialStage::kCompleted);
  ClusterBuilder::Trained(one_slot, 2, 100);
  ClusterBuilder::Trained(one_slot, 3, 300);
  ClusterBuilder::Trained(one_slot, 4, 200);
  Experiment& other = b.AddExperiment(3);
  other.one_slot_fingerprint = "other training";
  b.AddTrial(other, 5, 1, TrialStage::kCompleted);
  ClusterBuilder::Trained(other, 5, 50);
  Experiment& wide = b.AddExperiment(4, /*slots_per_trial=*/2);

  const std::optional<ScalingBaseline> baseline = ScalingBaselineOf(b.cluster, wide);
  ASSERT_TRUE(baseline.has_value());
  EXPECT_EQ(baseline->experiment_id, 2u);  // the newest of the same training, not experiment 3
  EXPECT_EQ(baseline->records_per_second, 200);
  uint64_t baseline_id = 0;
  EXPECT_EQ(ScalingEfficiency(b.cluster, wide, 300, &baseline_id), 0.75);
  EXPECT_EQ(baseline_id, 2u);
  EXPECT_EQ(ScalingEfficiency(b.cluster, wide, 0), std::nullopt);   // no throughput yet
  EXPECT_EQ(ScalingBaselineOf(b.cluster, one_slot), std::nullopt);  // 1 slot: nothing to compare
}

TEST(ClusterQueriesTest, MetricsPageCountsByStateAndAgesHeartbeats) {
  ClusterBuilder b;
  Experiment& experiment = b.AddExperiment(1);
  Trial& running = b.AddTrial(experiment, 1, 1, TrialStage::kRunning);
  running.records_trained = 6400;
  running.restarts = 1;
  b.AddTrial(experiment, 2, 2, TrialStage::kCompleted).restarts = 2;
  auto agent = std::make_unique<Agent>();
  agent->connected = true;
  agent->last_seen = 100;
  b.cluster.agents.emplace("node-a", std::move(agent));

  const std::string page = ClusterMetricsPage(b.cluster, /*now=*/104.5);
  EXPECT_THAT(page, HasSubstr("cohort_orchestrator_trials{state=\"running\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("cohort_orchestrator_trials{state=\"completed\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("cohort_orchestrator_trials{state=\"error\"} 0\n"));
  EXPECT_THAT(page,
              HasSubstr("cohort_orchestrator_agent_heartbeat_age_seconds{agent=\"node-a\"} 4.5\n"));
  EXPECT_THAT(page, HasSubstr("cohort_orchestrator_trial_restarts_total{experiment=\"1\",trial="
                              "\"1\"} 1\n"));
  // Records trained are a counter, read with rate(); no per-second gauge.
  EXPECT_THAT(page, HasSubstr("# TYPE cohort_orchestrator_trial_records_total counter\n"));
  EXPECT_THAT(page, HasSubstr("cohort_orchestrator_trial_records_total{experiment=\"1\",trial="
                              "\"1\"} 6400\n"));
  EXPECT_THAT(page, Not(HasSubstr("records_per_second")));
  // A finished trial's series go away with it.
  EXPECT_THAT(page, Not(HasSubstr("trial=\"2\"")));
}

}  // namespace
}  // namespace cohort::orchestration
