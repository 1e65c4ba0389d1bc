#include "runtime/orchestrator/cluster_queries.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/config/optimizer_hyperparameters.h"
#include "runtime/orchestrator/unknown_ids.h"

namespace cohort::orchestration {
namespace {

constexpr size_t kDefaultLogLines = 1000;
constexpr size_t kMostLogLines = 10000;

}  // namespace

std::optional<ClientMessage> QueryReply(const Cluster& cluster, const ClientMessage& request) {
  return std::visit(
      [&cluster](const auto& r) -> std::optional<ClientMessage> {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, DescribeExperiment>) {
          return DescribeExperimentReply(cluster, r);
        } else if constexpr (std::is_same_v<T, ListExperiments>) {
          return ListExperimentsReply(cluster, r);
        } else if constexpr (std::is_same_v<T, ListTasks>) {
          return ListTasksReply(cluster);
        } else if constexpr (std::is_same_v<T, ListAgents>) {
          return ListAgentsReply(cluster);
        } else if constexpr (std::is_same_v<T, TrialLogsRequest>) {
          return TrialLogsReply(cluster, r);
        } else if constexpr (std::is_same_v<T, DescribeTrial>) {
          return DescribeTrialReply(cluster, r);
        } else if constexpr (std::is_same_v<T, ListCheckpoints>) {
          return ListCheckpointsReply(cluster, r);
        } else {
          return std::nullopt;
        }
      },
      request);
}

ExperimentSummary SummarizeExperiment(const Cluster& cluster, const Experiment& experiment) {
  ExperimentSummary summary;
  summary.experiment_id = experiment.id;
  summary.name = experiment.config.name;
  summary.state = experiment.state;
  summary.searcher = experiment.config.searcher.name;
  // A killed or failed experiment's trials count as finished for its searcher, so where the
  // search's batches are known its progress is what they trained (below), not the searcher's.
  const bool cut_short = experiment.state == ExperimentState::kStopping ||
                         experiment.state == ExperimentState::kStopped ||
                         experiment.state == ExperimentState::kError;
  // An experiment that ended before the orchestrator started has no searcher any more: a
  // completed one is done, a killed or failed one is as far as its recorded trials trained.
  if (experiment.searcher) {
    summary.progress = experiment.searcher->Progress();
  } else if (cut_short) {
    uint64_t trained = 0;
    uint64_t total = 0;
    for (const TrialRecord& trial : experiment.record.trials) {
      trained += std::min(trial.batches_trained, trial.total_batches);
      total += trial.total_batches;
    }
    summary.progress = total == 0 ? 0.0 : static_cast<double>(trained) / static_cast<double>(total);
  } else {
    summary.progress = 1.0;
  }
  summary.slots_per_trial = experiment.config.slots_per_trial;
  summary.submitted_unix_time = experiment.submitted_unix;
  summary.ended_unix_time = experiment.ended_unix;
  summary.error = experiment.error;
  summary.archived = experiment.record.archived;
  uint64_t units_trained = 0;
  for (const auto& [request_id, trial_id] : experiment.trials) {
    const Trial& trial = *cluster.trials.at(trial_id);
    units_trained +=
        trial.UnitsTrained(experiment.searcher_counts_records, experiment.config.slots_per_trial);
    ++summary.trials;
    if (!trial.ended()) ++summary.active_trials;
    if (trial.state() == TrialState::kCompleted) ++summary.completed_trials;
    if (trial.state() == TrialState::kError) ++summary.errored_trials;
  }
  // Where the search's batches are known, progress moves with every batch trained, not only when
  // a trial finishes (a one-trial experiment is not at 0% half way through).
  if (const std::optional<uint64_t> total =
          experiment.searcher ? experiment.searcher->TotalBatches() : std::nullopt;
      total && *total > 0) {
    const double in_batches =
        std::min(1.0, static_cast<double>(units_trained) / static_cast<double>(*total));
    summary.progress = cut_short ? in_batches : std::max(summary.progress, in_batches);
  }
  return summary;
}

TrialSummary SummarizeTrial(const Cluster& cluster, const Experiment& experiment,
                            const Trial& trial) {
  TrialSummary summary;
  summary.trial_id = trial.id;
  summary.request_id = trial.request_id;
  summary.state = trial.state();
  // A trial waiting for its paused experiment is paused, not queued.
  if (experiment.state == ExperimentState::kPaused && summary.state == TrialState::kQueued) {
    summary.state = TrialState::kPaused;
  }
  summary.hyperparameters_json = trial.hparams_json;
  summary.batches_trained = trial.batches_trained;
  summary.target_batches = trial.target_batches;
  summary.restarts = trial.restarts;
  summary.task_id = trial.task_id;
  const OptimizationsConfig& optimizations = experiment.config.optimizations;
  if (optimizations.learning_rate_scaling != LearningRateScaling::kNone) {
    if (absl::StatusOr<OptimizerOptions> options =
            OptimizerOptionsFromHyperparameters(trial.hparams);
        options.ok()) {
      summary.scaled_learning_rate = ScaledLearningRate(optimizations, options->learning_rate,
                                                        experiment.config.slots_per_trial);
    }
  }
  for (const TrialRecord& record : experiment.record.trials) {
    if (record.id != trial.id) continue;
    if (record.latest_training) {
      summary.latest_training = record.latest_training->metrics;
      summary.latest_training_batches = record.latest_training->batches;
      summary.latest_timings = record.latest_training->timings;
      summary.records_per_second = record.latest_training->records_per_second;
      summary.latest_gpus = record.latest_training->gpus;
      summary.latest_ranks = record.latest_training->ranks;
      summary.scaling_efficiency =
          ScalingEfficiency(cluster, experiment, summary.records_per_second,
                            &summary.baseline_experiment_id)
              .value_or(0.0);
    }
    if (record.latest_validation) {
      summary.latest_validation = record.latest_validation->metrics;
      summary.latest_validation_batches = record.latest_validation->batches;
    }
    // The record keeps the best validation (forgetting what a rewind trained again).
    const std::optional<double> best =
        record.best_validation ? experiment.record.SearcherMetricOf(*record.best_validation)
                               : std::nullopt;
    if (best && !std::isnan(*best)) {
      summary.has_best_metric = true;
      summary.best_metric = *best;
      summary.best_metric_batches = record.best_validation->batches;
    }
    if (const CheckpointEntry* checkpoint = experiment.record.BestCheckpoint(record)) {
      summary.best_checkpoint_id = checkpoint->id;
    }
  }
  summary.latest_checkpoint_id = trial.latest_checkpoint_id;
  summary.error = trial.error;
  return summary;
}

ClientMessage DescribeExperimentReply(const Cluster& cluster, const DescribeExperiment& describe) {
  auto found = cluster.experiments.find(describe.experiment_id);
  if (found == cluster.experiments.end()) {
    return UnknownExperiment(describe.experiment_id);
  }
  const Experiment& experiment = *found->second;
  ExperimentDescription description;
  description.summary = SummarizeExperiment(cluster, experiment);
  description.config_yaml = experiment.config.effective_yaml;
  description.searcher_metric = experiment.config.searcher.metric;
  description.smaller_is_better = experiment.config.searcher.smaller_is_better;
  for (const auto& [request_id, trial_id] : experiment.trials) {
    description.trials.push_back(SummarizeTrial(cluster, experiment, *cluster.trials.at(trial_id)));
  }
  std::sort(description.trials.begin(), description.trials.end(),
            [](const TrialSummary& a, const TrialSummary& b) { return a.trial_id < b.trial_id; });
  return description;
}

ExperimentList ListExperimentsReply(const Cluster& cluster, const ListExperiments& request) {
  ExperimentList list;
  for (const auto& [id, experiment] : cluster.experiments) {
    if (experiment->record.archived && !request.include_archived) continue;
    list.experiments.push_back(SummarizeExperiment(cluster, *experiment));
  }
  return list;
}

TaskListing ListTasksReply(const Cluster& cluster) {
  TaskListing table;
  for (const auto& [id, task] : cluster.tasks) {
    TaskRow row;
    row.task_id = id;
    row.experiment_id = task->experiment_id;
    row.trial_id = task->trial_id;
    row.slots = task->slots;
    row.state = task->state;
    for (const auto& [agent_id, part] : task->parts) row.agents.push_back(agent_id);
    if (task->state == TaskRowState::kQueued) row.reason = task->waiting_reason;
    row.queued_unix_time = task->queued_unix;
    row.job = task->job_id;
    table.tasks.push_back(std::move(row));
  }
  return table;
}

AgentTable ListAgentsReply(const Cluster& cluster) {
  AgentTable table;
  for (const auto& [id, agent] : cluster.agents) {
    AgentRow row;
    row.agent_id = id;
    row.hostname = agent->hostname;
    row.slots = static_cast<uint32_t>(agent->slots.size());
    row.busy_slots = static_cast<uint32_t>(agent->busy.size());
    row.connected = agent->connected;
    row.last_seen_unix_time = agent->last_seen_unix;
    std::set<uint64_t> task_ids;
    for (const auto& [slot, user] : agent->busy) task_ids.insert(user.task_id);
    row.task_ids.assign(task_ids.begin(), task_ids.end());
    table.agents.push_back(std::move(row));
  }
  return table;
}

ClientMessage TrialLogsReply(const Cluster& cluster, const TrialLogsRequest& request) {
  auto found = cluster.trials.find(request.trial_id);
  if (found == cluster.trials.end()) {
    return UnknownTrial(request.trial_id);
  }
  if (request.rank < -1) {
    return ClientError{
        ClientErrorCode::kInvalidRequest,
        absl::StrCat("rank: expected -1 (every rank) or a rank >= 0; got ", request.rank)};
  }
  const Trial& trial = *found->second;
  // A rank past the trial's slots that printed nothing (a slot count changed on a resume may
  // have left lines of more ranks) is a mistake to name, not an empty log to follow forever.
  const uint32_t slots = cluster.experiments.at(trial.experiment_id)->config.slots_per_trial;
  if (request.rank >= static_cast<int32_t>(slots) && trial.log.After(0, request.rank, 1).empty()) {
    return ClientError{
        ClientErrorCode::kNotFound,
        absl::StrCat(
            "trial ", trial.id, " has no rank ", request.rank, ": it runs on ", slots,
            slots == 1 ? " slot (rank 0)" : absl::StrCat(" slots (ranks 0 to ", slots - 1, ")"))};
  }
  size_t max_lines = request.max_lines == 0 ? kDefaultLogLines : request.max_lines;
  max_lines = std::min(max_lines, kMostLogLines);
  TrialLogs logs;
  logs.trial_id = trial.id;
  logs.lines = trial.log.After(request.after_sequence, request.rank, max_lines);
  // Ended with no task left: no line will come. Every line kept after the request's position
  // was sent when the reply is not cut short by max_lines.
  const uint64_t reached = logs.lines.empty() ? request.after_sequence : logs.lines.back().sequence;
  const bool complete = logs.lines.size() < max_lines || reached >= trial.log.last_sequence();
  logs.trial_ended = trial.ended() && trial.task_id == 0 && complete;
  return logs;
}

std::optional<ScalingBaseline> ScalingBaselineOf(const Cluster& cluster,
                                                 const Experiment& experiment) {
  if (experiment.config.slots_per_trial <= 1) return std::nullopt;
  for (auto it = cluster.experiments.rbegin(); it != cluster.experiments.rend();
       ++it) {  // newest first
    const Experiment& candidate = *it->second;
    if (candidate.id == experiment.id || candidate.config.slots_per_trial != 1 ||
        candidate.one_slot_fingerprint != experiment.one_slot_fingerprint) {
      continue;
    }
    std::vector<double> rates;
    for (const TrialRecord& trial : candidate.record.trials) {
      if (trial.latest_training && trial.latest_training->records_per_second > 0) {
        rates.push_back(trial.latest_training->records_per_second);
      }
    }
    if (rates.empty()) continue;
    std::sort(rates.begin(), rates.end());
    const size_t middle = rates.size() / 2;
    const double median =
        rates.size() % 2 == 1 ? rates[middle] : (rates[middle - 1] + rates[middle]) / 2;
    return ScalingBaseline{candidate.id, median};
  }
  return std::nullopt;
}

std::optional<double> ScalingEfficiency(const Cluster& cluster, const Experiment& experiment,
                                        double records_per_second, uint64_t* baseline_id) {
  if (records_per_second <= 0) return std::nullopt;
  const std::optional<ScalingBaseline> baseline = ScalingBaselineOf(cluster, experiment);
  if (!baseline) return std::nullopt;
  if (baseline_id != nullptr) *baseline_id = baseline->experiment_id;
  return records_per_second /
         (static_cast<double>(experiment.config.slots_per_trial) * baseline->records_per_second);
}

}  // namespace cohort::orchestration
