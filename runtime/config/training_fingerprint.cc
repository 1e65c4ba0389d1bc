#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/base/fnv1a.h"
#include "runtime/config/compression_options.h"
#include "runtime/config/experiment_config.h"
#include "runtime/config/trial_schedule.h"
#include "runtime/text/counted.h"

namespace cohort {
namespace {

const char* Flag(bool value) { return value ? "true" : "false"; }

// Every value is written with its type and, for text, its length, so that no two different
// configs can produce the same canonical text.
struct CanonicalValue {
  std::string operator()(int64_t v) const { return absl::StrCat("int ", v); }
  std::string operator()(double v) const { return absl::StrFormat("double %.17g", v); }
  std::string operator()(bool v) const { return absl::StrCat("bool ", Flag(v)); }
  std::string operator()(const std::string& v) const {
    return absl::StrCat("string ", v.size(), ":", v);
  }
  std::string operator()(const Hyperparameters::Other& v) const {
    return absl::StrCat("other ", v.text.size(), ":", v.text);
  }
};

// The kind and the parameters that kind reads, e.g. "topk ratio double 0.01".
std::string CanonicalCompression(const CompressionOptions& c) {
  std::string text(CompressionKindName(c.kind));
  if (c.kind == CompressionOptions::kTopK) {
    absl::StrAppend(&text, " ratio ", CanonicalValue{}(c.topk_ratio));
  } else if (c.kind == CompressionOptions::kPowerSgd) {
    absl::StrAppend(&text, " rank ", c.powersgd_rank, " start_iter ", c.powersgd_start_iter);
  }
  return text;
}

// One setting that changes a trial's numbers: its line in the fingerprint's canonical text
// (`line` then the value), where the config says it (`path`), and its value for both.
struct TrainingSetting {
  std::string line;       // "hyperparameter 13:learning_rate =", "slots_per_trial"
  std::string path;       // "hyperparameters.learning_rate", "resources.slots_per_trial"
  std::string canonical;  // "double 0.10000000000000001"
  std::string shown;      // "0.1": as an error message shows it
  // What a config without the line says (a setting on its line only away from its default):
  // "ignore", or "not set" (a hyperparameter).
  std::string absent = "not set";
};

// The shortest decimal that reads back as `v`.
std::string ShortestDouble(double v) {
  for (int digits = 1; digits < 17; ++digits) {
    std::string text = absl::StrFormat("%.*g", digits, v);
    if (std::strtod(text.c_str(), nullptr) == v) return text;
  }
  return absl::StrFormat("%.17g", v);
}

// A hyperparameter's value as the YAML would say it.
struct ShownValue {
  std::string operator()(int64_t v) const { return absl::StrCat(v); }
  std::string operator()(double v) const { return ShortestDouble(v); }
  std::string operator()(bool v) const { return Flag(v); }
  std::string operator()(const std::string& v) const { return absl::StrCat("\"", v, "\""); }
  std::string operator()(const Hyperparameters::Other& v) const { return v.text; }
};

// The kind and its parameters as the config says them, e.g. "topk (ratio 0.01)".
std::string ShownCompression(const CompressionOptions& c) {
  std::string text(CompressionKindName(c.kind));
  if (c.kind == CompressionOptions::kTopK) {
    absl::StrAppend(&text, " (ratio ", ShortestDouble(c.topk_ratio), ")");
  } else if (c.kind == CompressionOptions::kPowerSgd) {
    absl::StrAppend(&text, " (rank ", c.powersgd_rank, ", start_iter ", c.powersgd_start_iter, ")");
  }
  return text;
}

// Every setting, in the fingerprint's order. The canonical text (and so every fingerprint a
// checkpoint recorded) must not change: add nothing here without a new version line.
std::vector<TrainingSetting> TrainingSettings(const ExperimentConfig& config) {
  std::vector<TrainingSetting> settings;
  for (const auto& [name, value] : config.hyperparameters.values()) {
    settings.push_back({absl::StrCat("hyperparameter ", name.size(), ":", name, " ="),
                        absl::StrCat("hyperparameters.", name), std::visit(CanonicalValue{}, value),
                        std::visit(ShownValue{}, value)});
  }
  const OptimizationsConfig& o = config.optimizations;
  // The rest show as they read in the canonical text.
  auto add = [&settings](const char* line, const char* path, std::string value,
                         std::string absent = "not set") {
    settings.push_back({line, path, value, value, std::move(absent)});
  };
  add("global_batch_size", "hyperparameters.global_batch_size",
      absl::StrCat(config.global_batch_size));
  add("slots_per_trial", "resources.slots_per_trial", absl::StrCat(config.slots_per_trial));
  add("experiment_seed", "reproducibility.experiment_seed",
      config.experiment_seed ? absl::StrCat(*config.experiment_seed) : "unset");
  add("aggregation_frequency", "optimizations.aggregation_frequency",
      absl::StrCat(o.aggregation_frequency));
  add("average_aggregated_gradients", "optimizations.average_aggregated_gradients",
      Flag(o.average_aggregated_gradients));
  settings.push_back({"gradient_compression", "optimizations.gradient_compression",
                      CanonicalCompression(o.gradient_compression),
                      ShownCompression(o.gradient_compression)});
  settings.push_back({"mixed_precision", "optimizations.mixed_precision",
                      absl::StrCat(o.mixed_precision.size(), ":", o.mixed_precision),
                      absl::StrCat("\"", o.mixed_precision, "\"")});
  // Only a guard that acts changes the numbers (and the default leaves earlier fingerprints be).
  if (o.nonfinite_gradients != NonfiniteGradients::kIgnore) {
    add("nonfinite_gradients", "optimizations.nonfinite_gradients",
        std::string(PolicyName(o.nonfinite_gradients)),
        std::string(PolicyName(NonfiniteGradients::kIgnore)));
  }
  // The same for a learning rate that follows the slots.
  if (o.learning_rate_scaling != LearningRateScaling::kNone) {
    add("learning_rate_scaling", "optimizations.learning_rate_scaling",
        std::string(PolicyName(o.learning_rate_scaling)),
        std::string(PolicyName(LearningRateScaling::kNone)));
    add("learning_rate_reference_slots", "optimizations.learning_rate_reference_slots",
        absl::StrCat(o.learning_rate_reference_slots), "unused (no scaling)");
  }
  return settings;
}

}  // namespace

std::string TrainingFingerprint(const ExperimentConfig& config) {
  std::string text = "cohort training fingerprint v1\n";
  for (const TrainingSetting& setting : TrainingSettings(config)) {
    absl::StrAppend(&text, setting.line, " ", setting.canonical, "\n");
  }
  return absl::StrFormat("%016x", Fnv1a64(text));
}

std::string OneSlotFingerprint(ExperimentConfig config) {
  config.slots_per_trial = 1;
  return TrainingFingerprint(config);
}

std::vector<std::string> TrainingChanges(const ExperimentConfig& before,
                                         const ExperimentConfig& after,
                                         absl::string_view before_name,
                                         absl::string_view after_name) {
  std::map<std::string, TrainingSetting> was;  // by line: a path may stand on two lines
  for (TrainingSetting& setting : TrainingSettings(before)) {
    std::string line = setting.line;
    was.emplace(std::move(line), std::move(setting));
  }
  std::vector<std::string> changes;
  for (const TrainingSetting& setting : TrainingSettings(after)) {
    auto found = was.find(setting.line);
    if (found == was.end()) {
      changes.push_back(absl::StrCat(setting.path, ": ", setting.absent, " ", before_name, ", ",
                                     setting.shown, " ", after_name));
      continue;
    }
    if (found->second.canonical != setting.canonical) {
      changes.push_back(absl::StrCat(setting.path, ": ", found->second.shown, " ", before_name,
                                     ", ", setting.shown, " ", after_name));
    }
    was.erase(found);
  }
  for (const auto& [line, setting] : was) {
    changes.push_back(absl::StrCat(setting.path, ": ", setting.shown, " ", before_name, ", ",
                                   setting.absent, " ", after_name));
  }
  // A path on two lines (global_batch_size is also a hyperparameter) is said once.
  std::vector<std::string> once;
  for (std::string& change : changes) {
    if (std::find(once.begin(), once.end(), change) == once.end())
      once.push_back(std::move(change));
  }
  return once;
}

absl::Status CheckSlotChange(const ExperimentConfig& before, const ExperimentConfig& after) {
  const uint32_t was = before.slots_per_trial;
  const uint32_t now = after.slots_per_trial;
  if (was == now) return absl::OkStatus();
  if (after.optimizations.learning_rate_scaling != LearningRateScaling::kNone) {
    return absl::FailedPreconditionError(
        absl::StrCat("resources.slots_per_trial: ", was, " before, ", now,
                     " now; optimizations.learning_rate_scaling ",
                     PolicyName(after.optimizations.learning_rate_scaling),
                     " would change the learning rate with the slots, so the trial goes on at ",
                     Counted(was, "slot"), " only"));
  }
  const CompressionOptions::Kind compression = after.optimizations.gradient_compression.kind;
  if (compression == CompressionOptions::kTopK || compression == CompressionOptions::kPowerSgd) {
    return absl::FailedPreconditionError(
        absl::StrCat("resources.slots_per_trial: ", was, " before, ", now,
                     " now; optimizations.gradient_compression ", CompressionKindName(compression),
                     " keeps state of its own on each slot, so the trial goes on at ",
                     Counted(was, "slot"), " only"));
  }
  const uint64_t batch = after.global_batch_size;
  const uint64_t trained = RecordsPerBatch(batch, was);
  const uint64_t would_train = RecordsPerBatch(batch, now);
  if (trained != would_train) {
    // The counts that keep the records per batch: n with batch / n * n == trained (a few).
    constexpr size_t kCountsNamed = 8;
    std::vector<std::string> keeping;
    for (uint64_t n = 1; n <= batch && keeping.size() < kCountsNamed; ++n) {
      if (RecordsPerBatch(batch, static_cast<uint32_t>(n)) == trained) {
        keeping.push_back(absl::StrCat(n));
      }
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "resources.slots_per_trial: ", was, " before, ", now, " now; a global batch of ", batch,
        " trained ", trained, " records per batch at ", Counted(was, "slot"), " and would train ",
        would_train, " at ", Counted(now, "slot"),
        " (each slot trains global_batch_size / slots records, the rest dropped), and a trial goes "
        "on only with the records per batch it trained: slot counts that keep ",
        trained, " are ", absl::StrJoin(keeping, ", ")));
  }
  return absl::OkStatus();
}

double ScaledLearningRate(const OptimizationsConfig& optimizations, double learning_rate,
                          uint32_t slots) {
  const double ratio =
      static_cast<double>(slots) / static_cast<double>(optimizations.learning_rate_reference_slots);
  switch (optimizations.learning_rate_scaling) {
    case LearningRateScaling::kNone:
      return learning_rate;
    case LearningRateScaling::kLinear:
      return learning_rate * ratio;
    case LearningRateScaling::kSqrt:
      return learning_rate * std::sqrt(ratio);
  }
  return learning_rate;
}

std::vector<uint32_t> ElasticSlotCounts(const ExperimentConfig& config,
                                        uint64_t global_batch_size) {
  ExperimentConfig full = config;
  full.global_batch_size = global_batch_size;
  std::vector<uint32_t> counts = {config.slots_per_trial};
  const uint32_t least =
      config.min_slots_per_trial == 0 ? config.slots_per_trial : config.min_slots_per_trial;
  for (uint32_t slots = config.slots_per_trial; slots-- > least;) {
    ExperimentConfig fewer = full;
    fewer.slots_per_trial = slots;
    if (CheckSlotChange(full, fewer).ok()) counts.push_back(slots);
  }
  return counts;
}

}  // namespace cohort
