#include "runtime/record/experiment_record.h"

#include <algorithm>
#include <filesystem>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/base/file_io.h"
#include "runtime/base/metric_order.h"
#include "runtime/plugin/metric_accumulator.h"
#include "runtime/record/json_writer.h"
#include "runtime/record/run_folder.h"
#include "yaml-cpp/yaml.h"

namespace cohort {
void WriteGpuReadings(JsonWriter& json, const std::vector<GpuReading>& gpus) {
  json.BeginArray();
  for (const GpuReading& gpu : gpus) {
    json.BeginObject();
    json.Field("rank", uint64_t{gpu.rank});
    json.Field("gpu", uint64_t{gpu.gpu});
    json.Field("name", gpu.name);
    json.Field("utilization", gpu.utilization);
    json.Key("memory_used");
    json.Integer(gpu.memory_used);
    json.Key("memory_total");
    json.Integer(gpu.memory_total);
    json.EndObject();
  }
  json.EndArray();
}

void WriteRankPaces(JsonWriter& json, const std::vector<RankPace>& ranks) {
  json.BeginArray();
  for (const RankPace& pace : ranks) {
    json.BeginObject();
    json.Field("rank", uint64_t{pace.rank});
    json.Field("compute_seconds", pace.compute_seconds);
    json.Field("step_seconds", pace.step_seconds);
    json.Field("vs_fastest", pace.vs_fastest);
    json.Field("vs_best", pace.vs_best);
    json.EndObject();
  }
  json.EndArray();
}

namespace {

void WriteMetrics(JsonWriter& json, const std::vector<NamedValue>& metrics) {
  json.BeginObject();
  for (const NamedValue& metric : metrics) {
    json.Key(metric.name);
    json.Number(metric.value);
  }
  json.EndObject();
}

void WriteReport(JsonWriter& json, const MetricsReport& report) {
  json.BeginObject();
  json.Field("kind", report.kind == ReportKind::kTraining ? "training" : "validation");
  json.Field("batches", report.batches);
  json.Field("records", report.records);
  json.Field("time", report.unix_time);
  json.Key("metrics");
  WriteMetrics(json, report.metrics);
  if (!report.timings.empty()) {
    json.Key("timings");
    WriteMetrics(json, report.timings);
  }
  if (report.records_per_second > 0) json.Field("records_per_second", report.records_per_second);
  if (report.exchanged_bytes > 0) {
    json.Key("exchanged_bytes");
    json.Integer(report.exchanged_bytes);
  }
  if (report.scaling_efficiency) json.Field("scaling_efficiency", *report.scaling_efficiency);
  if (!report.gpus.empty()) {
    json.Key("gpus");
    WriteGpuReadings(json, report.gpus);
  }
  if (!report.ranks.empty()) {
    json.Key("ranks");
    WriteRankPaces(json, report.ranks);
  }
  json.EndObject();
}

void WriteOptionalReport(JsonWriter& json, absl::string_view key,
                         const std::optional<MetricsReport>& report) {
  json.Key(key);
  if (report) {
    WriteReport(json, *report);
  } else {
    json.Null();
  }
}

void WriteHyperparameters(JsonWriter& json, const Hyperparameters& hyperparameters) {
  json.BeginObject();
  for (const auto& [name, value] : hyperparameters.values()) {
    json.Key(name);
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            json.Number(static_cast<double>(v));
          } else if constexpr (std::is_same_v<T, double>) {
            json.Number(v);
          } else if constexpr (std::is_same_v<T, bool>) {
            json.Bool(v);
          } else if constexpr (std::is_same_v<T, std::string>) {
            json.String(v);
          } else {
            json.String(v.text);
          }
        },
        value);
  }
  json.EndObject();
}

// `key`: the number, or null.
void WriteOptionalNumber(JsonWriter& json, absl::string_view key, std::optional<double> value) {
  json.Key(key);
  if (value) {
    json.Number(*value);
  } else {
    json.Null();
  }
}

void WriteCheckpointId(JsonWriter& json, absl::string_view key, const CheckpointEntry* checkpoint) {
  json.Key(key);
  if (checkpoint != nullptr) {
    json.String(checkpoint->id);
  } else {
    json.Null();
  }
}

}  // namespace

const char* RunStateName(RunState state) {
  switch (state) {
    case RunState::kActive:
      return "ACTIVE";
    case RunState::kCompleted:
      return "COMPLETED";
    case RunState::kStopped:
      return "STOPPED";
    case RunState::kError:
      return "ERROR";
    case RunState::kPaused:
      return "PAUSED";
  }
  return "UNKNOWN";
}

ExperimentRecord ExperimentRecord::For(const ExperimentConfig& config) {
  ExperimentRecord record;
  record.name = config.name;
  record.searcher_metric = config.searcher.metric;
  record.smaller_is_better = config.searcher.smaller_is_better;
  record.experiment_seed = config.experiment_seed.value_or(0);
  record.fingerprint = TrainingFingerprint(config);
  record.hyperparameters_json = HyperparametersJson(config.hyperparameters);
  return record;
}

std::string HyperparametersJson(const Hyperparameters& hyperparameters) {
  JsonWriter json;
  WriteHyperparameters(json, hyperparameters);
  return json.text();
}

TrialRecord& ExperimentRecord::trial(uint64_t id) {
  for (TrialRecord& trial : trials) {
    if (trial.id == id) return trial;
  }
  trials.push_back(TrialRecord{});
  trials.back().id = id;
  return trials.back();
}

std::optional<double> ExperimentRecord::SearcherMetricOf(const MetricsReport& report) const {
  std::vector<ReducedMetric> metrics;
  for (const NamedValue& metric : report.metrics) metrics.push_back({metric.name, metric.value});
  const ReducedMetric* found = FindMetric(metrics, searcher_metric);
  if (found == nullptr) return std::nullopt;
  return found->value;
}

void ExperimentRecord::Apply(const MetricsReport& report) {
  TrialRecord& t = trial(report.trial_id);
  t.batches_trained = std::max(t.batches_trained, report.batches);
  t.records_trained = std::max(t.records_trained, report.records);
  if (report.kind == ReportKind::kTraining) {
    t.latest_training = report;
    return;
  }
  t.latest_validation = report;
  const std::optional<double> value = SearcherMetricOf(report);
  if (!value) return;
  // A checkpoint already recorded without its validation (its report was lost, and the
  // validation is done again at that checkpoint) takes this one.
  for (CheckpointEntry& checkpoint : t.checkpoints) {
    if (checkpoint.batches == report.batches && !checkpoint.metric) checkpoint.metric = value;
  }
  t.unmatched_validations.emplace_back(report.batches, *value);
  if (t.unmatched_validations.size() > kMaxUnmatchedValidations) {
    t.unmatched_validations.erase(t.unmatched_validations.begin());
  }
  const std::optional<double> best =
      t.best_validation ? SearcherMetricOf(*t.best_validation) : std::nullopt;
  if (IsBetterMetric(*value, best, smaller_is_better)) t.best_validation = report;
}

void ExperimentRecord::Apply(const CheckpointReport& report) {
  TrialRecord& t = trial(report.trial_id);
  // A trial that checkpointed after batch N trained N (and the checkpoint's records), whether or
  // not a report since said so (a trial that fails before its next training report).
  t.batches_trained = std::max(t.batches_trained, report.batches);
  t.records_trained = std::max(t.records_trained, report.records);
  CheckpointEntry entry{report.id, report.batches, std::nullopt};
  for (const auto& [batches, value] : t.unmatched_validations) {
    if (batches == report.batches) entry.metric = value;
  }
  // Validations recorded before this record was read back (an orchestrator restarted between a
  // validation and its checkpoint's report) are found where experiment.json keeps them.
  for (const std::optional<MetricsReport>* kept : {&t.latest_validation, &t.best_validation}) {
    if (!entry.metric && *kept && (*kept)->batches == report.batches) {
      entry.metric = SearcherMetricOf(**kept);
    }
  }
  // A trial's checkpoints are reported in the order of their batches.
  std::erase_if(t.unmatched_validations,
                [&](const auto& validation) { return validation.first <= report.batches; });
  auto same = [&](const CheckpointEntry& e) { return e.id == report.id; };
  t.checkpoints.erase(std::remove_if(t.checkpoints.begin(), t.checkpoints.end(), same),
                      t.checkpoints.end());
  t.checkpoints.push_back(entry);
}

void ExperimentRecord::RewindTrial(uint64_t id, uint64_t batches) {
  TrialRecord& t = trial(id);
  auto after = [&](const std::optional<MetricsReport>& r) { return r && r->batches > batches; };
  if (after(t.latest_training)) t.latest_training.reset();
  if (after(t.latest_validation)) t.latest_validation.reset();
  if (after(t.best_validation)) t.best_validation.reset();
  std::erase_if(t.unmatched_validations,
                [&](const auto& validation) { return validation.first > batches; });
  // Checkpoints past it were passed over (damaged): none to go on from, keep or name best.
  std::erase_if(t.checkpoints, [&](const CheckpointEntry& c) { return c.batches > batches; });
  if (t.batches_trained > batches) {
    // The records of the latest report kept (the reports re-applied after a rewind bring it on).
    uint64_t records = 0;
    for (const std::optional<MetricsReport>* kept : {&t.latest_training, &t.latest_validation}) {
      if (*kept) records = std::max(records, (*kept)->records);
    }
    t.records_trained = std::min(t.records_trained, records);
  }
  t.batches_trained = std::min(t.batches_trained, batches);
}

const CheckpointEntry* ExperimentRecord::BestCheckpoint(const TrialRecord& trial) const {
  const CheckpointEntry* best = nullptr;
  for (const CheckpointEntry& checkpoint : trial.checkpoints) {
    if (!checkpoint.metric) continue;
    const std::optional<double> so_far = best ? best->metric : std::nullopt;
    if (IsBetterMetric(*checkpoint.metric, so_far, smaller_is_better)) best = &checkpoint;
  }
  return best;
}

const TrialRecord* ExperimentRecord::BestTrial() const {
  const TrialRecord* best = nullptr;
  std::optional<double> best_metric;
  for (const TrialRecord& trial : trials) {
    if (!trial.best_validation) continue;
    const std::optional<double> metric = SearcherMetricOf(*trial.best_validation);
    if (!metric) continue;
    const bool better = IsBetterMetric(*metric, best_metric, smaller_is_better) ||
                        (best != nullptr && *metric == *best_metric && trial.id < best->id);
    if (!better) continue;
    best = &trial;
    best_metric = metric;
  }
  return best;
}

std::string ExperimentRecord::ToJson() const {
  JsonWriter json;
  json.BeginObject();
  json.Field("name", name);
  json.Field("state", RunStateName(state));
  json.Field("searcher_metric", searcher_metric);
  json.Field("smaller_is_better", smaller_is_better);
  json.Field("experiment_seed", experiment_seed);
  json.Field("config_fingerprint", fingerprint);
  json.Field("archived", archived);
  // Derived from the trials (not read back): what a search found, and the checkpoint to use.
  json.Key("best_trial");
  if (const TrialRecord* best = BestTrial()) {
    json.BeginObject();
    json.Field("id", best->id);
    json.Field("batches", best->best_validation->batches);
    json.Field("searcher_metric", *SearcherMetricOf(*best->best_validation));
    WriteCheckpointId(json, "best_checkpoint", BestCheckpoint(*best));
    json.EndObject();
  } else {
    json.Null();
  }
  json.Key("trials");
  json.BeginArray();
  for (const TrialRecord& t : trials) {
    json.BeginObject();
    json.Field("id", t.id);
    json.Field("state", RunStateName(t.state));
    json.Key("hyperparameters");
    json.Raw(t.hyperparameters_json.empty() ? hyperparameters_json : t.hyperparameters_json);
    json.Field("batches_trained", t.batches_trained);
    json.Field("total_batches", t.total_batches);
    json.Field("records_trained", t.records_trained);
    json.Field("restarts", uint64_t{t.restarts});
    WriteOptionalReport(json, "latest_training", t.latest_training);
    WriteOptionalReport(json, "latest_validation", t.latest_validation);
    WriteOptionalReport(json, "best_validation", t.best_validation);
    json.Key("checkpoints");
    json.BeginArray();
    for (const CheckpointEntry& c : t.checkpoints) {
      json.BeginObject();
      json.Field("id", c.id);
      json.Field("batches", c.batches);
      WriteOptionalNumber(json, "searcher_metric", c.metric);
      json.EndObject();
    }
    json.EndArray();
    WriteCheckpointId(json, "best_checkpoint", BestCheckpoint(t));
    json.Key("error");
    if (t.error.empty()) {
      json.Null();
    } else {
      json.String(t.error);
    }
    json.EndObject();
  }
  json.EndArray();
  json.Key("searcher_events");
  json.BeginArray();
  for (const SearcherEvent& event : searcher_events) {
    json.BeginObject();
    json.Field("trial", event.trial_id);
    if (event.exited) {
      json.Field("exited", true);
    } else {
      json.Field("validated", event.units);
      WriteOptionalNumber(json, "searcher_metric", event.metric);
    }
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return json.text();
}

std::string MetricsReportJson(const MetricsReport& report) {
  JsonWriter json;
  WriteReport(json, report);
  return json.text();
}

absl::StatusOr<MetricsReport> ParseMetricsReportJson(absl::string_view line, uint64_t trial_id) {
  try {
    const YAML::Node node = YAML::Load(std::string(line));
    MetricsReport report;
    report.trial_id = trial_id;
    const std::string kind = node["kind"].as<std::string>();
    if (kind != "training" && kind != "validation") {
      return absl::InvalidArgumentError(absl::StrCat("unknown kind '", kind, "'"));
    }
    report.kind = kind == "training" ? ReportKind::kTraining : ReportKind::kValidation;
    report.batches = node["batches"].as<uint64_t>();
    report.records = node["records"].as<uint64_t>();
    report.unix_time = node["time"].as<double>();
    for (auto [key, values] :
         {std::pair{"metrics", &report.metrics}, std::pair{"timings", &report.timings}}) {
      for (const auto& metric : node[key]) {
        const YAML::Node& value = metric.second;
        values->push_back(
            {metric.first.as<std::string>(), value.IsNull() ? std::nan("") : value.as<double>()});
      }
    }
    if (node["exchanged_bytes"]) report.exchanged_bytes = node["exchanged_bytes"].as<uint64_t>();
    if (node["scaling_efficiency"]) {
      report.scaling_efficiency = node["scaling_efficiency"].as<double>();
    }
    if (node["records_per_second"]) {
      report.records_per_second = node["records_per_second"].as<double>();
    }
    for (const auto& gpu : node["gpus"]) {
      report.gpus.push_back({gpu["rank"].as<uint32_t>(), gpu["gpu"].as<uint32_t>(),
                             gpu["name"].as<std::string>(), gpu["utilization"].as<double>(),
                             gpu["memory_used"].as<uint64_t>(),
                             gpu["memory_total"].as<uint64_t>()});
    }
    for (const auto& pace : node["ranks"]) {
      report.ranks.push_back({pace["rank"].as<uint32_t>(), pace["compute_seconds"].as<double>(),
                              pace["step_seconds"].as<double>(), pace["vs_fastest"].as<double>(),
                              pace["vs_best"].as<double>()});
    }
    return report;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not a metrics report: ", e.what()));
  }
}

absl::StatusOr<std::vector<MetricsReport>> TrimMetricsFile(const std::string& path,
                                                           uint64_t trial_id, uint64_t batches,
                                                           uint64_t* reported_batches) {
  std::vector<MetricsReport> kept_reports;
  if (reported_batches != nullptr) *reported_batches = 0;
  if (!std::filesystem::exists(path)) return kept_reports;
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  std::string kept;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    absl::StatusOr<MetricsReport> report = ParseMetricsReportJson(line, trial_id);
    if (report.ok() && reported_batches != nullptr) {
      *reported_batches = std::max(*reported_batches, report->batches);
    }
    if (!report.ok() || report->batches > batches) continue;
    kept_reports.push_back(*std::move(report));
    absl::StrAppend(&kept, line, "\n");
  }
  if (absl::Status status = WriteFileAtomically(path, kept); !status.ok()) return status;
  return kept_reports;
}

}  // namespace cohort
