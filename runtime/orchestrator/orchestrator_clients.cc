// The Orchestrator's answers to clients (docs/protocol.md, client protocol).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"
#include "runtime/orchestrator/trial_config.h"

namespace cohort {
namespace {

constexpr size_t kDefaultLogLines = 1000;
constexpr size_t kMostLogLines = 10000;

}  // namespace

// ---------------------------------------------------------------- clients

ClientMessage Orchestrator::OnClientRequest(const ClientMessage& request) {
  if (!IsClientRequest(request)) {
    return ClientError{ClientErrorCode::kInvalidRequest,
                       absl::StrCat(ClientMessageName(request), " is a reply, not a request")};
  }
  ClientMessage reply = std::visit(
      [this](const auto& r) -> ClientMessage {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, SubmitExperiment>) {
          return Submit(r);
        } else if constexpr (std::is_same_v<T, KillExperiment>) {
          return Kill(r);
        } else if constexpr (std::is_same_v<T, DescribeExperiment>) {
          return Describe(r);
        } else if constexpr (std::is_same_v<T, ListExperiments>) {
          return Experiments();
        } else if constexpr (std::is_same_v<T, ListTasks>) {
          return Tasks();
        } else if constexpr (std::is_same_v<T, ListAgents>) {
          return Agents();
        } else if constexpr (std::is_same_v<T, TrialLogsRequest>) {
          return Logs(r);
        } else {
          return ClientAck{};  // unreachable: every request is listed above
        }
      },
      request);
  PlaceQueuedTasks();
  return reply;
}

absl::Status Orchestrator::CheckExperiment(const ExperimentConfig& config) {
  const uint32_t slots = config.slots_per_trial;
  if (config.global_batch_size < slots) {
    return absl::InvalidArgumentError(
        absl::StrCat("hyperparameters.global_batch_size: ", config.global_batch_size,
                     " is smaller than resources.slots_per_trial ", slots,
                     "; expected at least one record per slot"));
  }
  absl::StatusOr<uint64_t> max_batches = MaxLengthInBatches(config);
  if (!max_batches.ok()) return max_batches.status();
  return CreateSearcher(config, *max_batches).status();
}

ClientMessage Orchestrator::Submit(const SubmitExperiment& submit) {
  auto invalid = [](absl::string_view message) {
    return ClientError{ClientErrorCode::kInvalidRequest, std::string(message)};
  };
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(submit.config_yaml);
  if (!config.ok()) return invalid(config.status().message());
  if (config->entrypoint.empty() || config->entrypoint.front() != '/') {
    return invalid(absl::StrCat(
        "entrypoint: expected an absolute plugin path as the agents' hosts see it; got '",
        config->entrypoint, "' (cohort submit resolves plugin names and relative paths)"));
  }
  if (!config->experiment_seed) {
    // Drawn once here and written into the config, so every task of every trial trains alike.
    const uint64_t seed = std::random_device{}() % 1000000000;
    config = ParseExperimentConfig(config->effective_yaml,
                                   {absl::StrCat("reproducibility.experiment_seed=", seed)});
    if (!config.ok()) return invalid(config.status().message());
  }
  Admission admission;
  admission.config = *std::move(config);
  return Admit(std::move(admission));
}

ClientMessage Orchestrator::SubmitLocal(LocalSubmission submission) {
  Admission admission;
  admission.config = std::move(submission.config);
  admission.folder = std::move(submission.folder);
  admission.checkpoint_root = std::move(submission.checkpoint_root);
  admission.resume = submission.resume;
  ClientMessage reply = Admit(std::move(admission));
  PlaceQueuedTasks();
  return reply;
}

ClientMessage Orchestrator::Admit(Admission admission) {
  ExperimentConfig& config = admission.config;
  std::optional<RunFolder>& folder = admission.folder;
  std::string& checkpoint_root = admission.checkpoint_root;
  if (absl::Status checked = CheckExperiment(config); !checked.ok()) {
    return ClientError{ClientErrorCode::kInvalidRequest, std::string(checked.message())};
  }
  const uint32_t slots = config.slots_per_trial;
  ExperimentSubmitted submitted;
  const std::vector<AgentView> views = AgentViews();
  if (views.empty()) {
    submitted.warnings.push_back("no agent is connected yet: the trials wait for one");
  } else if (absl::Status fits = CheckCanEverFit(PlacementRequest{0, 0, slots}, views);
             !fits.ok()) {
    return ClientError{ClientErrorCode::kUnschedulable,
                       absl::StrCat("resources.slots_per_trial: ", fits.message())};
  }
  for (const std::string& key : config.ignored_keys) {
    submitted.warnings.push_back(absl::StrCat(key, " is not used by Cohort and is ignored"));
  }
  if (config.global_batch_size % slots != 0) {
    const uint64_t per_slot = config.global_batch_size / slots;
    submitted.warnings.push_back(absl::StrCat(
        "hyperparameters.global_batch_size ", config.global_batch_size,
        " is not a multiple of resources.slots_per_trial ", slots, ": each slot trains ", per_slot,
        " records, so a global batch holds ", per_slot * slots));
  }

  const uint64_t id = admission.id.value_or(next_experiment_id_);
  if (!folder) {
    absl::StatusOr<RunFolder> created = RunFolder::Create(state_.ExperimentPath(id));
    if (!created.ok()) {
      return ClientError{ClientErrorCode::kUnspecified, std::string(created.status().message())};
    }
    if (absl::Status written = WriteFileAtomically(created->config_path(), config.effective_yaml);
        !written.ok()) {
      return ClientError{ClientErrorCode::kUnspecified, std::string(written.message())};
    }
    folder = *std::move(created);
  }
  if (checkpoint_root.empty()) {
    const CheckpointStorageConfig& storage = config.checkpoint_storage;
    std::filesystem::path root(storage.host_path.empty() ? options_.checkpoint_root
                                                         : storage.host_path);
    if (!storage.host_path.empty() && !storage.storage_path.empty()) root /= storage.storage_path;
    checkpoint_root = (root / absl::StrCat("experiment-", id)).string();
  }
  absl::StatusOr<uint64_t> max_batches = MaxLengthInBatches(config);
  absl::StatusOr<std::unique_ptr<Searcher>> searcher = CreateSearcher(config, *max_batches);
  next_experiment_id_ = std::max(next_experiment_id_, id + 1);

  auto experiment = std::make_unique<Experiment>();
  experiment->id = id;
  experiment->config = std::move(config);
  experiment->one_slot_fingerprint = OneSlotFingerprint(experiment->config);
  experiment->searcher = *std::move(searcher);
  experiment->submitted_unix = clock_.UnixSeconds();
  experiment->folder = *std::move(folder);
  experiment->record = ExperimentRecord::For(experiment->config);
  experiment->checkpoint_root = std::move(checkpoint_root);
  experiment->resume = admission.resume;
  experiment->recorded_trial_ids = std::move(admission.trial_ids);
  Experiment& added = *experiments_.emplace(id, std::move(experiment)).first->second;
  Event(absl::StrCat("experiment ", id, " (", added.config.name,
                     ") submitted: ", added.config.searcher.name, " searcher, ", slots, " slot",
                     slots == 1 ? "" : "s", " per trial"));
  Apply(added, added.searcher->Start());
  Save(added);
  submitted.experiment_id = id;
  return submitted;
}

ClientMessage Orchestrator::Kill(const KillExperiment& kill) {
  auto found = experiments_.find(kill.experiment_id);
  if (found == experiments_.end()) {
    return ClientError{ClientErrorCode::kNotFound,
                       absl::StrCat("no experiment ", kill.experiment_id)};
  }
  Experiment& experiment = *found->second;
  if (experiment.state != ExperimentState::kActive) return ClientAck{};
  experiment.state = ExperimentState::kStopping;
  Event(absl::StrCat("experiment ", experiment.id, ": killed; stopping its trials"));
  for (const auto& [request_id, trial_id] : experiment.trials) {
    Trial& trial = *trials_.at(trial_id);
    if (!trial.lifecycle.Stop()) continue;  // ended already
    if (trial.ended()) {
      DropQueuedTask(trial);
      EndTrial(trial, TrialState::kStopped, "");
    } else if (Task* task = FindTask(trial.task_id)) {
      StopTask(*task, "the experiment was killed", options_.kill_grace_seconds);
    }
  }
  MaybeEndExperiment(experiment);
  return ClientAck{};
}

ExperimentSummary Orchestrator::Summarize(const Experiment& experiment) const {
  ExperimentSummary summary;
  summary.experiment_id = experiment.id;
  summary.name = experiment.config.name;
  summary.state = experiment.state;
  summary.searcher = experiment.config.searcher.name;
  // An experiment that ended before the orchestrator started has no searcher any more.
  summary.progress = experiment.searcher ? experiment.searcher->Progress() : 1.0;
  summary.slots_per_trial = experiment.config.slots_per_trial;
  summary.submitted_unix_time = experiment.submitted_unix;
  summary.ended_unix_time = experiment.ended_unix;
  summary.error = experiment.error;
  for (const auto& [request_id, trial_id] : experiment.trials) {
    const Trial& trial = *trials_.at(trial_id);
    ++summary.trials;
    if (!trial.ended()) ++summary.active_trials;
    if (trial.state() == TrialState::kCompleted) ++summary.completed_trials;
    if (trial.state() == TrialState::kError) ++summary.errored_trials;
  }
  return summary;
}

ClientMessage Orchestrator::Describe(const DescribeExperiment& describe) const {
  auto found = experiments_.find(describe.experiment_id);
  if (found == experiments_.end()) {
    return ClientError{ClientErrorCode::kNotFound,
                       absl::StrCat("no experiment ", describe.experiment_id)};
  }
  const Experiment& experiment = *found->second;
  ExperimentDescription description;
  description.summary = Summarize(experiment);
  description.config_yaml = experiment.config.effective_yaml;
  description.searcher_metric = experiment.config.searcher.metric;
  description.smaller_is_better = experiment.config.searcher.smaller_is_better;
  for (const auto& [request_id, trial_id] : experiment.trials) {
    const Trial& trial = *trials_.at(trial_id);
    TrialSummary summary;
    summary.trial_id = trial.id;
    summary.request_id = trial.request_id;
    summary.state = trial.state();
    summary.hyperparameters_json = trial.hparams_json;
    summary.batches_trained = trial.batches_trained;
    summary.target_batches = trial.target_batches;
    summary.restarts = trial.restarts;
    summary.task_id = trial.task_id;
    for (const TrialRecord& record : experiment.record.trials) {
      if (record.id != trial.id) continue;
      if (record.latest_training) {
        summary.latest_training = record.latest_training->metrics;
        summary.latest_timings = record.latest_training->timings;
        summary.records_per_second = record.latest_training->records_per_second;
        summary.latest_gpus = record.latest_training->gpus;
        summary.scaling_efficiency = ScalingEfficiency(experiment, summary.records_per_second,
                                                       &summary.baseline_experiment_id)
                                         .value_or(0.0);
      }
      if (record.latest_validation) summary.latest_validation = record.latest_validation->metrics;
      // The record keeps the best validation (forgetting what a rewind trained again).
      const std::optional<double> best =
          record.best_validation ? experiment.record.SearcherMetricOf(*record.best_validation)
                                 : std::nullopt;
      if (best && !std::isnan(*best)) {
        summary.has_best_metric = true;
        summary.best_metric = *best;
      }
    }
    summary.latest_checkpoint_id = trial.latest_checkpoint_id;
    summary.error = trial.error;
    description.trials.push_back(std::move(summary));
  }
  std::sort(description.trials.begin(), description.trials.end(),
            [](const TrialSummary& a, const TrialSummary& b) { return a.trial_id < b.trial_id; });
  return description;
}

ClientMessage Orchestrator::Experiments() const {
  ExperimentList list;
  for (const auto& [id, experiment] : experiments_)
    list.experiments.push_back(Summarize(*experiment));
  return list;
}

ClientMessage Orchestrator::Tasks() const {
  TaskListing table;
  for (const auto& [id, task] : tasks_) {
    TaskRow row;
    row.task_id = id;
    row.experiment_id = task->experiment_id;
    row.trial_id = task->trial_id;
    row.slots = task->slots;
    row.state = task->state;
    for (const auto& [agent_id, part] : task->parts) row.agents.push_back(agent_id);
    if (task->state == TaskRowState::kQueued) row.reason = task->waiting_reason;
    row.queued_unix_time = task->queued_unix;
    table.tasks.push_back(std::move(row));
  }
  return table;
}

ClientMessage Orchestrator::Agents() const {
  AgentTable table;
  for (const auto& [id, agent] : agents_) {
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

ClientMessage Orchestrator::Logs(const TrialLogsRequest& request) const {
  auto found = trials_.find(request.trial_id);
  if (found == trials_.end()) {
    return ClientError{ClientErrorCode::kNotFound, absl::StrCat("no trial ", request.trial_id)};
  }
  if (request.rank < -1) {
    return ClientError{
        ClientErrorCode::kInvalidRequest,
        absl::StrCat("rank: expected -1 (every rank) or a rank >= 0; got ", request.rank)};
  }
  const Trial& trial = *found->second;
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

}  // namespace cohort
