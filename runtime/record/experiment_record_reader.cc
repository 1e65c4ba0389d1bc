#include "runtime/record/experiment_record_reader.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/record/json_writer.h"

namespace cohort {
namespace {

// Thrown inside the reader only; ReadExperimentRecord turns it into a status.
struct BadField {
  std::string what;
};

const YAML::Node Required(const YAML::Node& node, const char* key) {
  if (!node.IsMap() || !node[key]) throw BadField{absl::StrCat("missing \"", key, "\"")};
  return node[key];
}

RunState StateOf(const YAML::Node& node) {
  const std::string state = node.as<std::string>();
  for (RunState candidate : {RunState::kActive, RunState::kCompleted, RunState::kStopped,
                             RunState::kError, RunState::kPaused}) {
    if (state == RunStateName(candidate)) return candidate;
  }
  throw BadField{absl::StrCat("unknown state '", state, "'")};
}

// `node` as JSON text again. Quoted scalars were JSON strings; plain ones numbers, booleans or
// null, written back as they were.
void WriteJson(const YAML::Node& node, JsonWriter& json) {
  if (node.IsMap()) {
    json.BeginObject();
    for (const auto& entry : node) {
      json.Key(entry.first.as<std::string>());
      WriteJson(entry.second, json);
    }
    json.EndObject();
  } else if (node.IsSequence()) {
    json.BeginArray();
    for (const YAML::Node& item : node) WriteJson(item, json);
    json.EndArray();
  } else if (node.IsNull()) {
    json.Null();
  } else if (node.Tag() == "!") {
    json.String(node.Scalar());
  } else {
    json.Raw(node.Scalar());
  }
}

std::optional<MetricsReport> OptionalReport(const YAML::Node& node, uint64_t trial_id) {
  if (node.IsNull()) return std::nullopt;
  // The report's own text, as metrics.jsonl holds it (its parser reads YAML, which JSON is).
  absl::StatusOr<MetricsReport> report = ParseMetricsReportJson(YAML::Dump(node), trial_id);
  if (!report.ok()) throw BadField{std::string(report.status().message())};
  return *report;
}

TrialRecord ReadTrial(const YAML::Node& node) {
  TrialRecord trial;
  trial.id = Required(node, "id").as<uint64_t>();
  trial.state = StateOf(Required(node, "state"));
  JsonWriter hyperparameters;
  WriteJson(Required(node, "hyperparameters"), hyperparameters);
  trial.hyperparameters_json = hyperparameters.text();
  trial.batches_trained = Required(node, "batches_trained").as<uint64_t>();
  trial.total_batches = Required(node, "total_batches").as<uint64_t>();
  trial.records_trained = Required(node, "records_trained").as<uint64_t>();
  trial.restarts = Required(node, "restarts").as<uint32_t>();
  trial.latest_training = OptionalReport(Required(node, "latest_training"), trial.id);
  trial.latest_validation = OptionalReport(Required(node, "latest_validation"), trial.id);
  trial.best_validation = OptionalReport(Required(node, "best_validation"), trial.id);
  for (const YAML::Node& checkpoint : Required(node, "checkpoints")) {
    CheckpointEntry entry;
    entry.id = Required(checkpoint, "id").as<std::string>();
    entry.batches = Required(checkpoint, "batches").as<uint64_t>();
    if (const YAML::Node metric = Required(checkpoint, "searcher_metric"); !metric.IsNull()) {
      entry.metric = metric.as<double>();
    }
    trial.checkpoints.push_back(std::move(entry));
  }
  if (const YAML::Node error = Required(node, "error"); !error.IsNull()) {
    trial.error = error.as<std::string>();
  }
  return trial;
}

SearcherEvent ReadSearcherEvent(const YAML::Node& node) {
  SearcherEvent event;
  event.trial_id = Required(node, "trial").as<uint64_t>();
  if (node["exited"]) {
    event.exited = node["exited"].as<bool>();
    if (!event.exited) throw BadField{"a searcher event with \"exited\": false"};
    return event;
  }
  event.units = Required(node, "validated").as<uint64_t>();
  if (const YAML::Node metric = Required(node, "searcher_metric"); !metric.IsNull()) {
    event.metric = metric.as<double>();
  }
  return event;
}

}  // namespace

absl::StatusOr<ExperimentRecord> ReadExperimentRecord(const std::string& path) {
  std::error_code missing;
  if (!std::filesystem::exists(path, missing)) {
    return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  }
  try {
    const YAML::Node root = YAML::LoadFile(path);  // JSON is YAML
    ExperimentRecord record;
    record.name = Required(root, "name").as<std::string>();
    record.state = StateOf(Required(root, "state"));
    record.searcher_metric = Required(root, "searcher_metric").as<std::string>();
    record.smaller_is_better = Required(root, "smaller_is_better").as<bool>();
    record.experiment_seed = Required(root, "experiment_seed").as<uint64_t>();
    record.fingerprint = Required(root, "config_fingerprint").as<std::string>();
    // Optional: records written before experiments could be archived have none.
    if (root.IsMap() && root["archived"]) record.archived = root["archived"].as<bool>();
    for (const YAML::Node& trial : Required(root, "trials")) {
      record.trials.push_back(ReadTrial(trial));
    }
    // Optional: records written before the searcher's events were kept have none.
    if (root["searcher_events"]) {
      for (const YAML::Node& event : root["searcher_events"]) {
        record.searcher_events.push_back(ReadSearcherEvent(event));
      }
    } else {
      record.searcher_events_kept = false;
    }
    return record;
  } catch (const BadField& bad) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an experiment record: ", bad.what));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an experiment record: ", e.what()));
  }
}

}  // namespace cohort
