#include "runtime/config/experiment_config.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/config/internal/hyperparameter_reader.h"
#include "runtime/config/internal/map_reader.h"
#include "runtime/config/internal/overrides.h"
#include "runtime/config/internal/section_readers.h"
#include "runtime/config/internal/yaml_bounds.h"
#include "runtime/config/internal/yaml_values.h"
#include "runtime/text/utf8.h"

namespace cohort {
namespace {

using config_internal::MapReader;
using config_internal::Mismatch;

constexpr int64_t kMaxExperimentSeed = 2147483647;  // Determined's bound: 2^31 - 1

// A period of zero (Determined's default) means no minimum: only at the end.
void DropZeroPeriod(std::optional<Length>* period) {
  if (*period && (*period)->value == 0) period->reset();
}

void ReadEntrypoint(MapReader& r, std::string* out) {
  constexpr absl::string_view kExpected = "a plugin name or the path of a plugin .so";
  r.Require("entrypoint", kExpected);
  const YAML::Node node = r.Get("entrypoint");
  if (r.ok() && (!node.IsScalar() || node.Scalar().empty())) {
    r.Fail(Mismatch(r.PathOf("entrypoint"), kExpected, node));
  }
  r.String("entrypoint", out);
}

// Whether `value` is an integer from `low` to `high`.
bool IntegerWithin(const Hyperparameters::Value& value, int64_t low, int64_t high) {
  const int64_t* integer = std::get_if<int64_t>(&value);
  return integer != nullptr && *integer >= low && *integer <= high;
}

// Whether every value `space` can take is an integer from `low` to `high`.
bool IntegersWithin(const HyperparameterSpace& space, int64_t low, int64_t high) {
  auto within = [low, high](const Hyperparameters::Value& value) {
    return IntegerWithin(value, low, high);
  };
  switch (space.kind) {
    case HyperparameterSpace::Kind::kConst:
      return within(space.value);
    case HyperparameterSpace::Kind::kInt:
      return space.minval >= static_cast<double>(low) && space.maxval <= static_cast<double>(high);
    case HyperparameterSpace::Kind::kCategorical:
      return !space.vals.empty() && std::all_of(space.vals.begin(), space.vals.end(), within);
    case HyperparameterSpace::Kind::kDouble:
    case HyperparameterSpace::Kind::kLog:
      break;
  }
  return false;
}

// hyperparameters.global_batch_size: an integer of at least one record per slot, or a search
// space (int or categorical) of such integers.
absl::Status ReadGlobalBatchSize(const YAML::Node& section, ExperimentConfig* config) {
  const int64_t min_batch = config->slots_per_trial;
  auto batch = config->hyperparameter_spaces.find("global_batch_size");
  if (batch != config->hyperparameter_spaces.end() &&
      IntegersWithin(batch->second, min_batch, static_cast<int64_t>(kMaxGlobalBatchSize))) {
    config->global_batch_size =
        static_cast<uint64_t>(std::get<int64_t>(SingleSearcherChoice(batch->second)));
    config->global_batch_size_searched = batch->second.kind != HyperparameterSpace::Kind::kConst;
    return absl::OkStatus();
  }
  YAML::Node written(YAML::NodeType::Undefined);
  if (section.IsMap() && section["global_batch_size"].IsDefined()) {
    written.reset(section["global_batch_size"]);
  }
  absl::Status mismatch = Mismatch(
      "hyperparameters.global_batch_size",
      absl::StrCat(min_batch == 1 ? absl::StrCat("an integer from 1 to ", kMaxGlobalBatchSize,
                                                 " (the batch size of one step summed over all "
                                                 "slots)")
                                  : absl::StrCat("an integer from resources.slots_per_trial (",
                                                 min_batch, ") to ", kMaxGlobalBatchSize),
                   ", or a search space of such integers (type int or categorical)"),
      written);
  // In a search space, the value that breaks the rule.
  if (batch == config->hyperparameter_spaces.end()) return mismatch;
  const HyperparameterSpace& space = batch->second;
  std::string culprit;
  if (space.kind == HyperparameterSpace::Kind::kCategorical) {
    for (const Hyperparameters::Value& value : space.vals) {
      if (!IntegerWithin(value, min_batch, static_cast<int64_t>(kMaxGlobalBatchSize))) {
        const int64_t* integer = std::get_if<int64_t>(&value);
        culprit = integer != nullptr ? absl::StrCat("its value ", *integer, " is not")
                                     : absl::StrCat("its value ", DescribeValue(value));
        break;
      }
    }
  } else if (space.kind == HyperparameterSpace::Kind::kInt) {
    culprit = space.minval < static_cast<double>(min_batch)
                  ? absl::StrCat("its minval ", space.minval, " is below ", min_batch)
                  : absl::StrCat("its maxval ", space.maxval, " is above ", kMaxGlobalBatchSize);
  }
  if (culprit.empty()) return mismatch;
  return absl::Status(mismatch.code(), absl::StrCat(mismatch.message(), " (", culprit, ")"));
}

absl::Status ReadHyperparameters(const YAML::Node& section, ExperimentConfig* config) {
  absl::StatusOr<std::map<std::string, HyperparameterSpace>> spaces =
      config_internal::ReadHyperparameterSpaces(section);
  if (!spaces.ok()) return spaces.status();
  config->hyperparameter_spaces = *std::move(spaces);
  for (const auto& [name, space] : config->hyperparameter_spaces) {
    config->hyperparameters.Set(name, SingleSearcherChoice(space));
  }
  return ReadGlobalBatchSize(section, config);
}

// resources.min_slots_per_trial below slots_per_trial makes a trial change its slot count: a
// compression that keeps state of its own per slot, or a learning rate that follows the slots,
// cannot go along, and is refused now.
absl::Status CheckElastic(const ExperimentConfig& config) {
  if (config.min_slots_per_trial != 0 && config.min_slots_per_trial < config.slots_per_trial &&
      config.optimizations.learning_rate_scaling != LearningRateScaling::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat("resources.min_slots_per_trial: ", config.min_slots_per_trial,
                     " makes the trial elastic, but optimizations.learning_rate_scaling ",
                     PolicyName(config.optimizations.learning_rate_scaling),
                     " would change the learning rate with the slots; drop one of them"));
  }
  const CompressionOptions::Kind kind = config.optimizations.gradient_compression.kind;
  if (config.min_slots_per_trial == 0 || config.min_slots_per_trial >= config.slots_per_trial ||
      (kind != CompressionOptions::kTopK && kind != CompressionOptions::kPowerSgd)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "resources.min_slots_per_trial: ", config.min_slots_per_trial,
      " makes the trial elastic, but optimizations.gradient_compression ",
      CompressionKindName(kind),
      " keeps state of its own on each slot; drop min_slots_per_trial or the compression"));
}

// ZeRO stage 2 sums each shard's gradient as float32 on its owner: a compressed exchange, whose
// forms sum (or gather) whole buckets on every rank, cannot go along.
absl::Status CheckZeroStage(const ExperimentConfig& config) {
  const CompressionOptions::Kind kind = config.optimizations.gradient_compression.kind;
  if (config.optimizations.zero_stage != 2 || kind == CompressionOptions::kNone) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "optimizations.zero_stage: 2 reduces each shard's float32 gradient onto its owner, which "
      "optimizations.gradient_compression ",
      CompressionKindName(kind),
      " cannot shard; use zero_stage 1 (which keeps the compressed "
      "exchange) or no compression"));
}

absl::Status ReadConfig(const YAML::Node& root, ExperimentConfig* config) {
  std::vector<std::string>* ignored = &config->ignored_keys;
  MapReader r(root, "", ignored);
  r.AllowKeys(
      {"name", "description", "entrypoint", "hyperparameters", "searcher", "resources",
       "records_per_epoch", "min_validation_period", "min_checkpoint_period", "scheduling_unit",
       "optimizations", "checkpoint_storage", "checkpoint_policy", "max_restarts",
       "reproducibility", "perform_initial_validation", "profiling", "slurm"},
      {"bind_mounts", "data", "data_layer", "debug", "environment", "integrations", "internal",
       "labels", "log_policies", "preemption_timeout", "project", "security", "tensorboard_storage",
       "workspace"});
  r.String("name", &config->name);
  r.String("description", &config->description);
  ReadEntrypoint(r, &config->entrypoint);
  r.Int("records_per_epoch", 1, &config->records_per_epoch);
  r.LengthField("min_validation_period", 0, &config->min_validation_period);
  r.LengthField("min_checkpoint_period", 0, &config->min_checkpoint_period);
  r.Int("scheduling_unit", 1, &config->scheduling_unit);
  r.PolicyChoice("checkpoint_policy", &config->checkpoint_policy);
  r.Int("max_restarts", 0, &config->max_restarts);
  r.Bool("perform_initial_validation", &config->perform_initial_validation);
  if (!r.ok()) return r.status();
  DropZeroPeriod(&config->min_validation_period);
  DropZeroPeriod(&config->min_checkpoint_period);

  MapReader profiling(r.Get("profiling"), "profiling", ignored);
  profiling.AllowKeys({"enabled", "begin_on_batch", "end_after_batch"}, {"sync_timings"});
  profiling.Bool("enabled", &config->profiling_enabled);
  profiling.Int("begin_on_batch", 0, &config->profiling_begin_on_batch);
  profiling.Int("end_after_batch", 0, &config->profiling_end_after_batch);
  if (!profiling.ok()) return profiling.status();
  if (config->profiling_end_after_batch &&
      *config->profiling_end_after_batch < config->profiling_begin_on_batch) {
    return config_internal::Mismatch("profiling.end_after_batch",
                                     absl::StrCat("an integer >= profiling.begin_on_batch (",
                                                  config->profiling_begin_on_batch, ")"),
                                     profiling.Get("end_after_batch"));
  }

  MapReader resources(r.Get("resources"), "resources", ignored);
  resources.AllowKeys({"slots_per_trial", "min_slots_per_trial", "resource_pool"},
                      {"max_slots", "slots", "priority", "weight", "shm_size", "agent_label",
                       "devices", "native_parallel", "is_single_node"});
  resources.Int("slots_per_trial", 1, &config->slots_per_trial);
  if (std::optional<int64_t> least =
          resources.ReadInt("min_slots_per_trial", 1, config->slots_per_trial)) {
    config->min_slots_per_trial = static_cast<uint32_t>(*least);
  }
  resources.String("resource_pool", &config->resource_pool);
  if (!resources.ok()) return resources.status();

  MapReader slurm(r.Get("slurm"), "slurm", ignored);
  slurm.AllowKeys({"sbatch_args"}, {"slots_per_node", "gpu_type"});
  if (const YAML::Node args = slurm.Get("sbatch_args"); args.IsDefined() && !args.IsNull()) {
    if (!args.IsSequence()) {
      return config_internal::Mismatch("slurm.sbatch_args", "a list of sbatch options", args);
    }
    for (const YAML::Node& arg : args) {
      if (!arg.IsScalar() || arg.Scalar().empty()) {
        return config_internal::Mismatch("slurm.sbatch_args", "a list of sbatch options", args);
      }
      config->slurm_sbatch_args.push_back(arg.Scalar());
    }
  }
  if (!slurm.ok()) return slurm.status();

  MapReader reproducibility(r.Get("reproducibility"), "reproducibility", ignored);
  reproducibility.AllowKeys({"experiment_seed"});
  if (std::optional<int64_t> seed =
          reproducibility.ReadInt("experiment_seed", 0, kMaxExperimentSeed)) {
    config->experiment_seed = static_cast<uint64_t>(*seed);
  }
  if (!reproducibility.ok()) return reproducibility.status();

  absl::Status status = ReadHyperparameters(r.Get("hyperparameters"), config);
  if (status.ok()) {
    status = config_internal::ReadSearcher(r.Get("searcher"), ignored, &config->searcher);
  }
  if (status.ok() && config->searcher.name == "grid") {
    status = config_internal::CheckGridCounts(config->hyperparameter_spaces);
  }
  if (status.ok()) {
    status =
        config_internal::ReadOptimizations(r.Get("optimizations"), ignored, &config->optimizations);
  }
  if (status.ok()) {
    status = config_internal::ReadCheckpointStorage(r.Get("checkpoint_storage"), ignored,
                                                    &config->checkpoint_storage);
  }
  if (status.ok()) status = CheckElastic(*config);
  if (status.ok()) status = CheckZeroStage(*config);
  return status;
}

// YAML is Unicode text. Bytes that are not UTF-8 would reach the run folder's config.yaml as
// replacement characters, and the stored config would differ from the one that ran.
absl::Status CheckUtf8(absl::string_view yaml_text, absl::Span<const std::string> overrides) {
  if (std::optional<size_t> bad = FirstInvalidUtf8Byte(yaml_text)) {
    const absl::string_view before = yaml_text.substr(0, *bad);
    const size_t newline = before.rfind('\n');
    const size_t line_start = newline == absl::string_view::npos ? 0 : newline + 1;
    return absl::InvalidArgumentError(
        absl::StrFormat("the config is not UTF-8 text: line %d, column %d holds the byte 0x%02X",
                        std::count(before.begin(), before.end(), '\n') + 1, *bad - line_start + 1,
                        static_cast<unsigned char>(yaml_text[*bad])));
  }
  for (const std::string& assignment : overrides) {
    if (std::optional<size_t> bad = FirstInvalidUtf8Byte(assignment)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--set %s: not UTF-8 text: byte %d is 0x%02X", absl::CHexEscape(assignment), *bad + 1,
          static_cast<unsigned char>(assignment[*bad])));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ExperimentConfig> Parse(absl::string_view yaml_text,
                                       absl::Span<const std::string> overrides,
                                       std::string default_name, std::string config_dir) {
  if (yaml_text.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the config is ", yaml_text.size(), " bytes; Cohort reads at most ", kMaxConfigBytes));
  }
  if (absl::Status text = CheckUtf8(yaml_text, overrides); !text.ok()) return text;
  YAML::Node root;
  try {
    root.reset(YAML::Load(std::string(yaml_text)));
  } catch (const YAML::DeepRecursion& e) {
    return absl::InvalidArgumentError(absl::StrCat("the config nests deeper than ", kMaxConfigDepth,
                                                   " levels, the most Cohort reads (line ",
                                                   e.mark.line + 1, ")"));
  } catch (const YAML::ParserException& e) {
    return absl::InvalidArgumentError(absl::StrCat("YAML syntax error at line ", e.mark.line + 1,
                                                   ", column ", e.mark.column + 1, ": ", e.msg));
  }
  if (config_internal::IsAbsent(root)) root.reset(YAML::Node(YAML::NodeType::Map));
  // Before anything walks the nodes (an error quoting the value, too): an alias inside its own
  // anchor makes them a cycle, which only the bounds stop.
  if (absl::Status bounded = config_internal::CheckYamlBounds(root); !bounded.ok()) return bounded;
  if (!root.IsMap()) return Mismatch("", "a map of keys at the top level", root);
  for (const std::string& assignment : overrides) {
    absl::Status status = config_internal::ApplyOverride(assignment, root);
    if (!status.ok()) return status;
  }
  if (absl::Status bounded = config_internal::CheckYamlBounds(root); !bounded.ok()) return bounded;

  ExperimentConfig config;
  config.config_dir = std::move(config_dir);
  absl::Status status = ReadConfig(root, &config);
  if (!status.ok()) return status;
  if (config.name.empty()) config.name = std::move(default_name);
  config.effective_yaml = absl::StrCat(config_internal::EmitBlock(root), "\n");
  if (config.effective_yaml.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the config comes to ",
                                                   config.effective_yaml.size(),
                                                   " bytes with --set applied; Cohort "
                                                   "reads at most ",
                                                   kMaxConfigBytes));
  }
  return config;
}

}  // namespace

absl::StatusOr<ExperimentConfig> ParseExperimentConfig(absl::string_view yaml_text,
                                                       absl::Span<const std::string> overrides) {
  try {
    return Parse(yaml_text, overrides, "experiment", "");
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("experiment config: ", e.what()));
  }
}

absl::StatusOr<ExperimentConfig> LoadExperimentConfig(const std::string& path,
                                                      absl::Span<const std::string> overrides) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::exists(path, error)) {
    return absl::NotFoundError(absl::StrCat(path, ": no such experiment config file"));
  }
  if (fs::is_directory(path, error)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a folder, not a config file"));
  }
  // A pipe or a device (/dev/zero) would block or never end: only files are read.
  if (!fs::is_regular_file(path, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file (a pipe or a device?); a config is a file"));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (!in.is_open() || in.bad()) {
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot read: ", std::strerror(errno)));
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": larger than ", kMaxConfigBytes,
                                                   " bytes, the most Cohort reads of a config"));
  }
  const fs::path absolute = fs::absolute(path, error).lexically_normal();
  absl::StatusOr<ExperimentConfig> config;
  try {
    config =
        Parse(text, overrides, fs::path(path).stem().string(), absolute.parent_path().string());
  } catch (const YAML::Exception& e) {
    config = absl::InvalidArgumentError(e.what());
  }
  if (!config.ok()) {
    // Where the file alone is good, the --set overrides made the error: say so, not blame the file.
    bool file_alone_good = false;
    if (!overrides.empty()) {
      try {
        file_alone_good =
            Parse(text, {}, fs::path(path).stem().string(), absolute.parent_path().string()).ok();
      } catch (const YAML::Exception&) {
      }
    }
    return absl::Status(config.status().code(),
                        absl::StrCat(path, file_alone_good ? " as --set changes it: " : ": ",
                                     config.status().message()));
  }
  return config;
}

std::string IgnoredKeyNote(const ExperimentConfig& config, absl::string_view key) {
  constexpr absl::string_view kSearcher = "searcher.";
  if (absl::StartsWith(key, kSearcher)) {
    const std::vector<std::string> readers =
        config_internal::SearchersReading(key.substr(kSearcher.size()));
    if (!readers.empty()) {
      return absl::StrCat(key, " is read by the ", absl::StrJoin(readers, " and "),
                          readers.size() == 1 ? " searcher" : " searchers", ", not by ",
                          config.searcher.name, ": ignored");
    }
  }
  return absl::StrCat(key, " is not used by Cohort and is ignored");
}

}  // namespace cohort
