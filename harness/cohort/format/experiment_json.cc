#include "harness/cohort/format/experiment_json.h"

#include <cstdint>
#include <string>
#include <vector>

#include "harness/cohort/format/experiment_format.h"
#include "runtime/record/experiment_record.h"
#include "runtime/record/json_writer.h"

namespace cohort {
namespace {

void MetricsObject(const std::vector<NamedValue>& metrics, JsonWriter& json) {
  json.BeginObject();
  for (const NamedValue& metric : metrics) json.Field(metric.name, metric.value);
  json.EndObject();
}

void TimeOrNull(double unix_time, JsonWriter& json) {
  if (unix_time > 0) {
    json.Number(unix_time);
  } else {
    json.Null();
  }
}

// `key` with `text`, or null when it is empty (none).
void TextOrNull(absl::string_view key, const std::string& text, JsonWriter& json) {
  json.Key(key);
  if (!text.empty()) {
    json.String(text);
  } else {
    json.Null();
  }
}

// `key` with `count`, or null when it is 0 (none).
void CountOrNull(absl::string_view key, uint64_t count, JsonWriter& json) {
  json.Key(key);
  if (count != 0) {
    json.Integer(count);
  } else {
    json.Null();
  }
}

void TrialObject(const TrialSummary& trial, JsonWriter& json) {
  json.BeginObject();
  json.Field("id", trial.trial_id);
  json.Field("request_id", trial.request_id);
  json.Field("state", TrialStateName(trial.state));
  json.Key("hyperparameters");
  json.Raw(trial.hyperparameters_json.empty() ? "{}" : trial.hyperparameters_json);
  json.Field("batches_trained", trial.batches_trained);
  json.Field("target_batches", trial.target_batches);
  json.Field("restarts", uint64_t{trial.restarts});
  CountOrNull("task_id", trial.task_id, json);
  json.Key("best_metric");
  if (trial.has_best_metric) {
    json.Number(trial.best_metric);
  } else {
    json.Null();
  }
  CountOrNull("best_metric_batches", trial.has_best_metric ? trial.best_metric_batches : 0, json);
  TextOrNull("best_checkpoint", trial.best_checkpoint_id, json);
  TextOrNull("latest_checkpoint", trial.latest_checkpoint_id, json);
  json.Key("latest_training");
  MetricsObject(trial.latest_training, json);
  json.Key("latest_validation");
  MetricsObject(trial.latest_validation, json);
  json.Key("latest_timings");
  MetricsObject(trial.latest_timings, json);
  json.Field("records_per_second", trial.records_per_second);
  if (trial.scaling_efficiency > 0) {
    json.Field("scaling_efficiency", trial.scaling_efficiency);
    json.Key("baseline_experiment_id");
    json.Integer(trial.baseline_experiment_id);
  }
  if (!trial.latest_gpus.empty()) {
    json.Key("latest_gpus");
    WriteGpuReadings(json, trial.latest_gpus);
  }
  if (!trial.latest_ranks.empty()) {
    json.Key("latest_ranks");
    WriteRankPaces(json, trial.latest_ranks);
  }
  if (trial.scaled_learning_rate > 0)
    json.Field("scaled_learning_rate", trial.scaled_learning_rate);
  json.Field("error", trial.error);
  json.EndObject();
}

// The summary's fields, inside an object the caller opened; with `description`, its searcher
// metric and direction too.
void SummaryFields(const ExperimentSummary& summary, const ExperimentDescription* description,
                   JsonWriter& json) {
  json.Field("id", summary.experiment_id);
  json.Field("name", summary.name);
  json.Field("state", ExperimentStateName(summary.state));
  json.Field("searcher", summary.searcher);
  if (description != nullptr) {
    json.Field("metric", description->searcher_metric);
    json.Field("smaller_is_better", description->smaller_is_better);
  }
  json.Field("progress", summary.progress);
  json.Field("slots_per_trial", uint64_t{summary.slots_per_trial});
  json.Key("submitted_unix_time");
  TimeOrNull(summary.submitted_unix_time, json);
  json.Key("ended_unix_time");
  TimeOrNull(summary.ended_unix_time, json);
  json.Field("error", summary.error);
  json.Field("archived", summary.archived);
  json.Key("trial_counts");
  json.BeginObject();
  json.Field("total", uint64_t{summary.trials});
  json.Field("active", uint64_t{summary.active_trials});
  json.Field("completed", uint64_t{summary.completed_trials});
  json.Field("stopped", uint64_t{StoppedTrials(summary)});
  json.Field("errored", uint64_t{summary.errored_trials});
  json.EndObject();
}

void CheckpointObject(const CheckpointRow& row, JsonWriter& json) {
  json.BeginObject();
  json.Field("id", row.checkpoint_id);
  json.Field("experiment_id", row.experiment_id);
  json.Field("trial_id", row.trial_id);
  json.Field("batches", row.batches);
  json.Key("searcher_metric");
  if (row.has_metric) {
    json.Number(row.metric);
  } else {
    json.Null();
  }
  json.Field("path", row.path);
  json.Field("bytes", row.bytes);
  // null where the orchestrator could not look.
  json.Key("state");
  if (row.condition == CheckpointCondition::kUnchecked) {
    json.Null();
  } else {
    json.String(CheckpointConditionName(row.condition));
  }
  json.Key("problem");
  if (row.problem.empty()) {
    json.Null();
  } else {
    json.String(row.problem);
  }
  json.EndObject();
}

}  // namespace

std::string TrialDescriptionJson(const TrialDescription& description) {
  JsonWriter json;
  json.BeginObject();
  json.Field("experiment_id", description.experiment_id);
  json.Field("experiment_name", description.experiment_name);
  json.Field("metric", description.searcher_metric);
  json.Field("smaller_is_better", description.smaller_is_better);
  json.Key("trial");
  TrialObject(description.trial, json);
  json.Key("validations");
  json.BeginArray();
  for (const ValidationRow& row : description.validations) {
    json.BeginObject();
    json.Field("batches", row.batches);
    json.Key("metrics");
    MetricsObject(row.metrics, json);
    json.EndObject();
  }
  json.EndArray();
  json.Key("checkpoints");
  json.BeginArray();
  for (const CheckpointRow& row : description.checkpoints) CheckpointObject(row, json);
  json.EndArray();
  json.EndObject();
  return json.text();
}

std::string CheckpointListingJson(const CheckpointListing& listing) {
  JsonWriter json;
  json.BeginArray();
  for (const CheckpointRow& row : listing.checkpoints) CheckpointObject(row, json);
  json.EndArray();
  return json.text();
}

std::string ExperimentDescriptionJson(const ExperimentDescription& description) {
  JsonWriter json;
  json.BeginObject();
  SummaryFields(description.summary, &description, json);
  json.Key("trials");
  json.BeginArray();
  for (const TrialSummary& trial : description.trials) TrialObject(trial, json);
  json.EndArray();
  json.Field("config_yaml", description.config_yaml);
  json.EndObject();
  return json.text();
}

std::string ExperimentListJson(const ExperimentList& list) {
  JsonWriter json;
  json.BeginArray();
  for (const ExperimentSummary& summary : list.experiments) {
    json.BeginObject();
    SummaryFields(summary, nullptr, json);
    json.EndObject();
  }
  json.EndArray();
  return json.text();
}

std::string TaskListingJson(const TaskListing& listing) {
  JsonWriter json;
  json.BeginArray();
  for (const TaskRow& task : listing.tasks) {
    json.BeginObject();
    json.Field("id", task.task_id);
    json.Field("experiment_id", task.experiment_id);
    json.Field("trial_id", task.trial_id);
    json.Field("slots", uint64_t{task.slots});
    json.Field("state", TaskRowStateName(task.state));
    json.Key("agents");
    json.BeginArray();
    for (const std::string& agent : task.agents) json.String(agent);
    json.EndArray();
    json.Field("reason", task.reason);
    json.Field("job", task.job);
    json.Key("queued_unix_time");
    TimeOrNull(task.queued_unix_time, json);
    json.EndObject();
  }
  json.EndArray();
  return json.text();
}

std::string AgentTableJson(const AgentTable& table) {
  JsonWriter json;
  json.BeginArray();
  for (const AgentRow& agent : table.agents) {
    json.BeginObject();
    json.Field("id", agent.agent_id);
    json.Field("hostname", agent.hostname);
    json.Field("slots", uint64_t{agent.slots});
    json.Field("busy_slots", uint64_t{agent.busy_slots});
    json.Field("connected", agent.connected);
    json.Key("last_seen_unix_time");
    TimeOrNull(agent.last_seen_unix_time, json);
    json.Key("task_ids");
    json.BeginArray();
    for (const uint64_t task_id : agent.task_ids) json.Integer(task_id);
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
  return json.text();
}

}  // namespace cohort
