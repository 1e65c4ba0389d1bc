#include "harness/cohort/format/experiment_json.h"

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
  json.Key("task_id");
  if (trial.task_id != 0) {
    json.Integer(trial.task_id);
  } else {
    json.Null();
  }
  json.Key("best_metric");
  if (trial.has_best_metric) {
    json.Number(trial.best_metric);
  } else {
    json.Null();
  }
  json.Key("latest_checkpoint");
  if (!trial.latest_checkpoint_id.empty()) {
    json.String(trial.latest_checkpoint_id);
  } else {
    json.Null();
  }
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
  json.Field("error", trial.error);
  json.EndObject();
}

}  // namespace

std::string ExperimentDescriptionJson(const ExperimentDescription& description) {
  const ExperimentSummary& summary = description.summary;
  JsonWriter json;
  json.BeginObject();
  json.Field("id", summary.experiment_id);
  json.Field("name", summary.name);
  json.Field("state", ExperimentStateName(summary.state));
  json.Field("searcher", summary.searcher);
  json.Field("metric", description.searcher_metric);
  json.Field("smaller_is_better", description.smaller_is_better);
  json.Field("progress", summary.progress);
  json.Field("slots_per_trial", uint64_t{summary.slots_per_trial});
  json.Key("submitted_unix_time");
  TimeOrNull(summary.submitted_unix_time, json);
  json.Key("ended_unix_time");
  TimeOrNull(summary.ended_unix_time, json);
  json.Field("error", summary.error);
  json.Key("trial_counts");
  json.BeginObject();
  json.Field("total", uint64_t{summary.trials});
  json.Field("active", uint64_t{summary.active_trials});
  json.Field("completed", uint64_t{summary.completed_trials});
  json.Field("stopped", uint64_t{StoppedTrials(summary)});
  json.Field("errored", uint64_t{summary.errored_trials});
  json.EndObject();
  json.Key("trials");
  json.BeginArray();
  for (const TrialSummary& trial : description.trials) TrialObject(trial, json);
  json.EndArray();
  json.Field("config_yaml", description.config_yaml);
  json.EndObject();
  return json.text();
}

}  // namespace cohort
