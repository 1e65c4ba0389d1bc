#include "harness/cohort/report/report_data.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/base/file_io.h"
#include "runtime/config/experiment_config.h"
#include "runtime/record/experiment_record_reader.h"
#include "runtime/record/json_writer.h"
#include "runtime/record/run_folder.h"

namespace cohort {
namespace {

void WriteTrial(JsonWriter& json, const ExperimentRecord& record, const TrialRecord& trial,
                const std::vector<MetricsReport>& reports) {
  json.BeginObject();
  json.Key("id");
  json.Integer(trial.id);
  json.Field("state", RunStateName(trial.state));
  json.Key("restarts");
  json.Integer(trial.restarts);
  json.Key("hyperparameters");
  const std::string& hyperparameters =
      trial.hyperparameters_json.empty() ? record.hyperparameters_json : trial.hyperparameters_json;
  json.Raw(hyperparameters.empty() ? "{}" : hyperparameters);
  for (ReportKind kind : {ReportKind::kTraining, ReportKind::kValidation}) {
    json.Key(kind == ReportKind::kTraining ? "training" : "validation");
    json.BeginArray();
    for (const MetricsReport& report : reports) {
      if (report.kind == kind) json.Raw(MetricsReportJson(report));
    }
    json.EndArray();
  }
  json.EndObject();
}

}  // namespace

absl::StatusOr<RunReportData> ReadRunForReport(const std::string& folder) {
  absl::StatusOr<RunFolder> run = RunFolder::Open(folder);
  if (!run.ok()) return run.status();
  RunReportData data;
  data.folder = folder;
  absl::StatusOr<ExperimentRecord> record = ReadExperimentRecord(run->experiment_json_path());
  if (!record.ok()) return record.status();
  data.record = *std::move(record);
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(run->config_path());
  if (!config.ok()) return config.status();
  data.slots_per_trial = config->slots_per_trial;
  data.one_slot_fingerprint = OneSlotFingerprint(*config);
  for (const TrialRecord& trial : data.record.trials) {
    std::vector<MetricsReport>& reports = data.reports.emplace_back();
    const std::string path = run->metrics_path(trial.id);
    if (!std::filesystem::exists(path)) continue;
    absl::StatusOr<std::string> text = ReadWholeFile(path);
    if (!text.ok()) return text.status();
    for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
      absl::StatusOr<MetricsReport> report = ParseMetricsReportJson(line, trial.id);
      if (report.ok()) reports.push_back(*std::move(report));
    }
  }
  return data;
}

std::string ReportDataJson(const std::vector<RunReportData>& runs) {
  JsonWriter json;
  json.BeginObject();
  json.Key("runs");
  json.BeginArray();
  for (const RunReportData& run : runs) {
    json.BeginObject();
    json.Field("folder", run.folder);
    json.Field("name", run.record.name);
    json.Field("state", RunStateName(run.record.state));
    json.Key("slots");
    json.Integer(run.slots_per_trial);
    json.Field("one_slot_fingerprint", run.one_slot_fingerprint);
    json.Field("searcher_metric", run.record.searcher_metric);
    json.Key("smaller_is_better");
    json.Bool(run.record.smaller_is_better);
    json.Key("trials");
    json.BeginArray();
    for (size_t t = 0; t < run.record.trials.size(); ++t) {
      WriteTrial(json, run.record, run.record.trials[t], run.reports[t]);
    }
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return json.text();
}

}  // namespace cohort
