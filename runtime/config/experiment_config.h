// ExperimentConfig: an experiment's YAML config, in Determined AI's format, typed and validated.
//
// A Determined user's config loads as it is: the keys Cohort uses are read and checked, the
// Determined keys it has no use for (environment, data, bind_mounts, ...) are accepted and listed
// in `ignored_keys`, and anything else is an error that suggests the nearest key. Every error is
// INVALID_ARGUMENT and names the field path, what was found and what is allowed:
//
//   absl::StatusOr<ExperimentConfig> config =
//       LoadExperimentConfig("mnist/const.yaml", {"hyperparameters.lr=0.1"});
//   // "searcher.max_length: expected exactly one of batches, records, epochs; got {minutes: 3}"
//   config->hyperparameters.GetDouble("lr");   // 0.1
//   TrainingFingerprint(*config);              // "3f2a9c0d5e1b7a64"
//
// `hyperparameters` holds what the single searcher gives its trial (see SingleSearcherChoice); the
// grid, random and adaptive_asha searchers (runtime/search) draw each trial's values from
// `hyperparameter_spaces`. docs/config.md lists every key.
//
// Thread-safety: the functions are reentrant; an ExperimentConfig is a plain value.
#ifndef COHORT_RUNTIME_CONFIG_EXPERIMENT_CONFIG_H_
#define COHORT_RUNTIME_CONFIG_EXPERIMENT_CONFIG_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/config/compression_options.h"
#include "runtime/plugin/hyperparameters.h"

namespace cohort {

enum class LengthUnit { kBatches, kRecords, kEpochs };

// YAML: `batches: 100`, `records: 6400` or `epochs: 2` (one key only); a bare integer is batches.
struct Length {
  LengthUnit unit = LengthUnit::kBatches;
  uint64_t value = 0;
};

// "100 batches", "1 epoch".
std::string DescribeLength(const Length& length);

// One entry under `hyperparameters:` as written (before the searcher picks a value). A nested map
// without `type` is a group: its entries are named "group.entry".
struct HyperparameterSpace {
  enum class Kind { kConst, kInt, kDouble, kLog, kCategorical };
  Kind kind = Kind::kConst;
  Hyperparameters::Value value;              // kConst
  double minval = 0, maxval = 0;             // kInt, kDouble, kLog (exponents for kLog)
  double base = 10;                          // kLog
  std::vector<Hyperparameters::Value> vals;  // kCategorical
  std::optional<uint64_t> count;             // kInt, kDouble, kLog: grid points, >= 1
};

// The value the single searcher gives a trial: the constant; the midpoint of an int range
// (rounded down) or of a double range; base^(midpoint of the exponents); the first categorical
// value.
Hyperparameters::Value SingleSearcherChoice(const HyperparameterSpace& space);

// `space` as a YAML flow would write it, each value's type kept: "{type: log, minval: -3.0,
// maxval: -1.0, base: 10.0}", "{type: categorical, vals: [16, \"16\", 16.0]}", a const's value.
std::string DescribeSpace(const HyperparameterSpace& space);

// The config's policies: each a closed set of values, spelled in the YAML by the names
// PolicyNames<P>::kNames gives in the order of the enumerators (PolicyName turns a value back).

// searcher.mode of adaptive_asha: how many rungs its brackets get.
enum class AshaMode { kAggressive, kStandard, kConservative };
// optimizations.nonfinite_gradients: Cohort's guard against NaN or infinite gradients before an
// optimizer step: step anyway, as Determined does (ignore); drop the step's gradients and go on
// (skip); end the trial with an error naming the batch and the tensor (fail).
enum class NonfiniteGradients { kIgnore, kSkip, kFail };
// optimizations.learning_rate_scaling: how the built-in optimizer's learning rate follows the
// trial's slots (see ScaledLearningRate).
enum class LearningRateScaling { kNone, kLinear, kSqrt };
// checkpoint_policy: after a validation, checkpoint when it is the best so far (best), always
// (all) or never (none).
enum class CheckpointPolicy { kBest, kAll, kNone };

template <class Policy>
struct PolicyNames;
template <>
struct PolicyNames<AshaMode> {
  static constexpr std::array<absl::string_view, 3> kNames = {"aggressive", "standard",
                                                              "conservative"};
};
template <>
struct PolicyNames<NonfiniteGradients> {
  static constexpr std::array<absl::string_view, 3> kNames = {"ignore", "skip", "fail"};
};
template <>
struct PolicyNames<LearningRateScaling> {
  static constexpr std::array<absl::string_view, 3> kNames = {"none", "linear", "sqrt"};
};
template <>
struct PolicyNames<CheckpointPolicy> {
  static constexpr std::array<absl::string_view, 3> kNames = {"best", "all", "none"};
};

// The name the config spells `value` with: PolicyName(CheckpointPolicy::kAll) is "all".
template <class Policy>
absl::string_view PolicyName(Policy value) {
  return PolicyNames<Policy>::kNames[static_cast<size_t>(value)];
}

// Determined's `searcher` section for the searchers Cohort runs: single, grid, random and
// adaptive_asha. A key that another searcher reads keeps its default here.
struct SearcherConfig {
  std::string name = "single";  // single, grid, random or adaptive_asha
  std::string metric;           // required: the validation metric that ranks trials and checkpoints
  bool smaller_is_better = true;
  Length max_length;        // required, >= 1: the longest a trial trains
  // max_length was given as Determined's newer `max_time` and `time_metric` (batches, records or
  // epochs): the same length, which a trial's config states as max_length instead.
  bool max_length_as_time = false;
  uint64_t max_trials = 1;  // random, adaptive_asha: required, >= 1
  // grid, random, adaptive_asha: trials trained at once; 0 means as many as possible.
  uint64_t max_concurrent_trials = 16;
  // adaptive_asha only.
  AshaMode mode = AshaMode::kStandard;
  double divisor = 4;                   // > 1
  uint32_t max_rungs = 5;               // 1..64
  std::vector<uint32_t> bracket_rungs;  // each 1..64; empty: chosen by mode and max_rungs
};

// The key a searcher's length was written with, as messages name it: "searcher.max_time" (given
// with time_metric) or "searcher.max_length".
const char* MaxLengthKey(const SearcherConfig& searcher);

// Determined's `optimizations`, with its defaults.
struct OptimizationsConfig {
  uint32_t aggregation_frequency = 1;  // batches per optimizer step, >= 1
  bool average_aggregated_gradients = true;
  bool average_training_metrics = true;
  // Determined's bool (true means fp16), or Cohort's "fp16", "bf16", {type: topk, ratio: R} or
  // {type: powersgd, rank: N, start_iter: S}; absent or false: none (see compression_options.h).
  CompressionOptions gradient_compression;
  std::string mixed_precision = "O0";     // O0..O3 accepted; only O0 has a meaning now
  uint32_t tensor_fusion_threshold = 64;  // MB, >= 1
  uint32_t tensor_fusion_cycle_time = 1;  // ms
  // `tensor_fusion_threshold: auto` sets it (the threshold stays 64): the exchange compares bucket
  // sizes up to the threshold in the first exchanged batches and keeps the fastest.
  bool auto_tune_tensor_fusion = false;
  NonfiniteGradients nonfinite_gradients = NonfiniteGradients::kIgnore;
  // The built-in optimizer's learning rate times slots / learning_rate_reference_slots (linear),
  // or its square root (sqrt); none leaves the hyperparameter as it is. A training setting.
  LearningRateScaling learning_rate_scaling = LearningRateScaling::kNone;
  uint32_t learning_rate_reference_slots = 1;
  // ZeRO: 0 replicates the built-in optimizer's state on every slot; 1 shards it, each slot
  // stepping 1/slots of the parameters and broadcasting them after the step; 2 also sums each
  // shard's gradient on its owner only (a reduce instead of an allreduce). Not a training setting:
  // stage 1 trains bitwise as 0 (stage 2 too at 2 slots; beyond, the engine's reduce may round
  // otherwise), and a checkpoint holds the whole state either way.
  uint32_t zero_stage = 0;
  // Cohort's bound, in seconds, on any one collective of a trial's ranks (a bucket of the
  // gradient exchange, a metrics merge, the start): a rank that stops taking part for longer
  // ends the trial with an error naming the batch and the phase, instead of a hang.
  uint32_t collective_timeout = 300;
  // Cohort's straggler warning: a rank whose step (its own work per batch, waiting for the others
  // left out) stays slower than the fastest rank's by more than this fraction for 3 training
  // reports in a row is named, with its agent; 0 turns the warning off (the scores are reported
  // either way). Not a training setting.
  double straggler_threshold = 0.2;
};

struct CheckpointStorageConfig {
  std::string type =
      "shared_fs";           // the only storage; Determined's others (s3, gcs, ...) are errors
  std::string host_path;     // empty when not given: the caller picks (the run folder)
  std::string storage_path;  // relative to host_path ("" for host_path itself)
  uint32_t save_trial_latest = 1;
  uint32_t save_trial_best = 1;
  uint32_t save_experiment_best = 0;
  // async: rank 0 copies the state into host memory at the step boundary and writes it on a thread
  // of its own while training goes on (at most one write in flight); false: training waits for the
  // write. Either way a checkpoint is whole or absent, and resuming is bitwise.
  bool async = true;
};

struct ExperimentConfig {
  std::string name;  // as given; else the config file's stem, or "experiment" for text
  std::string description;
  std::string entrypoint;           // required: a plugin .so path or a plugin name, kept as written
  std::string config_dir;           // absolute folder of the file it was loaded from ("" for text)
  Hyperparameters hyperparameters;  // what a trial sees: SingleSearcherChoice of every space
  std::map<std::string, HyperparameterSpace> hyperparameter_spaces;  // as written
  // hyperparameters.global_batch_size: required, an int >= 1, or a search space of them (an int
  // range or a categorical of ints), each trial training with its own; then this is the single
  // searcher's choice (SingleSearcherChoice) and global_batch_size_searched is set.
  uint64_t global_batch_size = 0;
  bool global_batch_size_searched = false;
  uint32_t slots_per_trial = 1;    // resources.slots_per_trial, >= 1
  // resources.min_slots_per_trial, from 1 to slots_per_trial (0 when absent: slots_per_trial).
  // Below slots_per_trial a trial is elastic: when its slots_per_trial do not fit (an agent was
  // lost), it trains on the largest count that fits, down to this one, from its latest
  // checkpoint, and grows back when the slots return (see ElasticSlotCounts). Not a training
  // setting.
  uint32_t min_slots_per_trial = 0;
  // Under `cohort orchestrator --resource-manager slurm`: resources.resource_pool, the Slurm
  // partition of the experiment's jobs ("": the orchestrator's), and slurm.sbatch_args, options
  // added to each of its jobs' sbatch. Unused elsewhere.
  std::string resource_pool;
  std::vector<std::string> slurm_sbatch_args;
  SearcherConfig searcher;
  std::optional<uint64_t> records_per_epoch;    // >= 1
  std::optional<Length> min_validation_period;  // absent (or 0): only at the end
  std::optional<Length> min_checkpoint_period;  // absent (or 0): only at the end
  uint64_t scheduling_unit = 100;               // batches between training metric reports, >= 1
  OptimizationsConfig optimizations;
  CheckpointStorageConfig checkpoint_storage;
  CheckpointPolicy checkpoint_policy = CheckpointPolicy::kBest;
  uint32_t max_restarts = 5;
  std::optional<uint64_t> experiment_seed;  // reproducibility.experiment_seed, 0..2^31-1
  bool perform_initial_validation = false;
  // profiling.enabled (Determined's key): each rank writes a Chrome trace of its phases and
  // gradient buckets, merged per trial into the run folder's trials/<id>/timeline.json; only
  // the batches from profiling.begin_on_batch to profiling.end_after_batch (counted from 1, both
  // included; none: to the end) are recorded.
  bool profiling_enabled = false;
  uint64_t profiling_begin_on_batch = 0;
  std::optional<uint64_t> profiling_end_after_batch;
  // Paths of keys Cohort accepts but does not use, e.g. "environment", "data",
  // "resources.resource_pool", "searcher.source_trial_id": top-level keys first, then each
  // section's. A searcher key that only another searcher reads is among them (IgnoredKeyNote
  // says so).
  std::vector<std::string> ignored_keys;
  // The config after overrides, re-emitted as YAML, so a run folder can store exactly what ran.
  // Parsing it again gives the same config (name and config_dir aside, which come from the file).
  std::string effective_yaml;
};

// What Cohort reads of a config, at most: bytes of the file (and of the config once `--set` is
// applied), YAML nodes once aliases are expanded, and levels of nesting. A config past one is
// refused with an error naming the limit.
inline constexpr uint64_t kMaxConfigBytes = uint64_t{1} << 20;
inline constexpr uint64_t kMaxConfigNodes = 100000;
inline constexpr uint32_t kMaxConfigDepth = 64;
// hyperparameters.global_batch_size, at most: records of one step over every slot.
inline constexpr int64_t kMaxGlobalBatchSize = int64_t{1} << 24;

// Parses and validates. `overrides` are "dotted.path=value" strings from `--set`, applied in order
// before validation: the value is read as a YAML scalar or flow value, and the path may create
// keys (hyperparameters.lr=0.1, searcher.max_length.batches=500). A YAML syntax error names its
// line and column; a config past a limit above names the limit.
absl::StatusOr<ExperimentConfig> ParseExperimentConfig(
    absl::string_view yaml_text, absl::Span<const std::string> overrides = {});

// Reads the file, then parses as above; `name` defaults to the file's stem and `config_dir` is the
// file's absolute folder. NOT_FOUND names the path; every error message starts with the path
// ("<path> as --set changes it: ..." where the file alone is good and `overrides` made the error).
absl::StatusOr<ExperimentConfig> LoadExperimentConfig(const std::string& path,
                                                      absl::Span<const std::string> overrides = {});

// A hex digest of everything that changes a trial's numbers: the hyperparameters a trial sees
// (global_batch_size among them), the experiment seed, slots_per_trial and the optimizations that
// change the maths (aggregation_frequency, average_aggregated_gradients, gradient_compression
// with its parameters, mixed_precision). Not the name, description, entrypoint, lengths, periods,
// storage or restarts.
// Stable across processes, builds and platforms; a checkpoint records it and a resume refuses a
// different one.
std::string TrainingFingerprint(const ExperimentConfig& config);

// TrainingFingerprint of `config` as if it ran on one slot: runs equal in it are one experiment at
// different slot counts, whose throughputs a scaling efficiency compares.
std::string OneSlotFingerprint(ExperimentConfig config);

// The warning for `key`, one of `config.ignored_keys`: "searcher.bracket_rungs is read by the
// adaptive_asha searcher, not by single: ignored" for a searcher key another searcher reads, else
// "<key> is not used by Cohort and is ignored".
std::string IgnoredKeyNote(const ExperimentConfig& config, absl::string_view key);

// The settings TrainingFingerprint covers that differ from `before` to `after`, one line each
// with both values: "hyperparameters.learning_rate: 0.1 before, 0.01 now" ("...: not set before,
// true now" for one set in `after` alone). `before_name` and `after_name` name the two sides
// otherwise ("0.1 at rank 0, 0.01 here"). Empty when the fingerprints are equal.
std::vector<std::string> TrainingChanges(const ExperimentConfig& before,
                                         const ExperimentConfig& after,
                                         absl::string_view before_name = "before",
                                         absl::string_view after_name = "now");

// Whether a trial checkpointed under `before` may go on under `after`, which differs at most in
// resources.slots_per_trial: OK when the slots are the same, or when the global batch stays the
// same ((global_batch_size / slots) * slots records in both) and no gradient compression keeps
// state of its own per slot; otherwise FAILED_PRECONDITION naming the key and what would do.
absl::Status CheckSlotChange(const ExperimentConfig& before, const ExperimentConfig& after);

// The learning rate the built-in optimizer uses for a hyperparameter's `learning_rate` on `slots`
// slots: learning_rate x (slots / reference) with linear scaling, x sqrt(slots / reference) with
// sqrt, unchanged with none.
double ScaledLearningRate(const OptimizationsConfig& optimizations, double learning_rate,
                          uint32_t slots);

// The slot counts a trial of `config` training global batches of `global_batch_size` records may
// run on, largest first: slots_per_trial, then each count down to min_slots_per_trial that
// CheckSlotChange allows from slots_per_trial (the same records per batch). Just slots_per_trial
// for a trial that is not elastic.
std::vector<uint32_t> ElasticSlotCounts(const ExperimentConfig& config, uint64_t global_batch_size);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONFIG_EXPERIMENT_CONFIG_H_
