#include "runtime/orchestrator/trial_config.h"

#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/config/trial_schedule.h"
#include "runtime/config/yaml_quoting.h"

namespace cohort {
namespace {

// A double that reads back as the same double, and as a float (never as an int).
std::string YamlDouble(double value) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.17g", value);
  std::string written = text;
  if (written == "inf") return ".inf";
  if (written == "-inf") return "-.inf";
  if (written == "nan" || written == "-nan") return ".nan";
  if (written.find_first_of(".e") == std::string::npos) written += ".0";
  return written;
}

std::string YamlValue(const Hyperparameters::Value& value) {
  struct Writer {
    std::string operator()(int64_t v) const { return absl::StrCat(v); }
    std::string operator()(double v) const { return YamlDouble(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return QuotedYamlScalar(v); }
    // A map as it stands would be read back as a group of hyperparameters: a constant's value.
    // A list, or a null (`~`), reads back as it is.
    std::string operator()(const Hyperparameters::Other& v) const {
      if (!absl::StartsWith(v.text, "{")) return v.text;
      return absl::StrCat("{type: const, val: ", v.text, "}");
    }
  };
  return std::visit(Writer{}, value);
}

}  // namespace

absl::StatusOr<uint64_t> MaxLengthInBatches(const ExperimentConfig& config) {
  const Length& length = config.searcher.max_length;
  const char* key = MaxLengthKey(config.searcher);
  if (length.unit == LengthUnit::kEpochs && !config.records_per_epoch) {
    return absl::InvalidArgumentError(absl::StrCat(
        key,
        ": a length in epochs needs records_per_epoch (the orchestrator cannot count the "
        "plugin's records): set records_per_epoch, or ",
        config.searcher.max_length_as_time ? "set time_metric to batches or records"
                                           : "give max_length in batches or records"));
  }
  const uint64_t batches =
      LengthInBatches(length, RecordsPerBatch(config.global_batch_size, config.slots_per_trial),
                      config.records_per_epoch.value_or(0));
  if (batches == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(key, ": comes to 0 batches of hyperparameters.global_batch_size ",
                     config.global_batch_size, "; expected at least one batch"));
  }
  if (absl::Status s = CheckTrialLength(key, length, batches); !s.ok()) return s;
  return batches;
}

absl::StatusOr<SearcherLength> SearcherMaxLength(const ExperimentConfig& config) {
  absl::StatusOr<uint64_t> batches = MaxLengthInBatches(config);
  if (!batches.ok()) return batches.status();
  const Length& length = config.searcher.max_length;
  if (!config.global_batch_size_searched || length.unit == LengthUnit::kBatches) {
    return SearcherLength{*batches, false};
  }
  uint64_t records = length.value;
  if (length.unit == LengthUnit::kEpochs &&
      __builtin_mul_overflow(length.value, *config.records_per_epoch, &records)) {
    return absl::InvalidArgumentError(absl::StrCat(
        MaxLengthKey(config.searcher), ": ", DescribeLength(length), " of records_per_epoch ",
        *config.records_per_epoch, " come to more records than 64 bits hold"));
  }
  return SearcherLength{records, true};
}

uint64_t TrialBatches(uint64_t units, bool in_records, uint64_t global_batch_size, uint32_t slots) {
  if (!in_records || global_batch_size == 0) return units;
  return LengthInBatches(Length{LengthUnit::kRecords, units},
                         RecordsPerBatch(global_batch_size, slots), 0);
}

absl::StatusOr<std::string> TrialConfigYaml(const ExperimentConfig& experiment,
                                            const Hyperparameters& hparams, uint64_t batches) {
  std::vector<std::string> overrides;
  for (const auto& [name, value] : hparams.values()) {
    overrides.push_back(absl::StrCat("hyperparameters.", name, "=", YamlValue(value)));
  }
  overrides.push_back("searcher.name=single");
  if (experiment.searcher.max_length_as_time) {  // stated as max_length instead
    overrides.push_back("searcher.max_time=");
    overrides.push_back("searcher.time_metric=");
  }
  overrides.push_back(absl::StrCat("searcher.max_length=", batches));
  absl::StatusOr<ExperimentConfig> trial =
      ParseExperimentConfig(experiment.effective_yaml, overrides);
  if (!trial.ok()) return trial.status();
  return trial->effective_yaml;
}

}  // namespace cohort
