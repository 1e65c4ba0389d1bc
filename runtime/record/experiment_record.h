// ExperimentRecord: what `cohort run` knows about an experiment and its trials, folded from the
// workers' reports, and written to the run folder as experiment.json.
//
//   ExperimentRecord record = ExperimentRecord::For(config, seed);
//   record.Apply(metrics_report);      // latest and best metrics
//   record.Apply(checkpoint_report);   // checkpoint ids, with the searcher metric validated there
//   WriteFileAtomically(path, record.ToJson());
//
// Replaying a trial's metrics.jsonl through Apply rebuilds the same record, which is how a resumed
// run picks up where it left.
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_RECORD_EXPERIMENT_RECORD_H_
#define COHORT_RUNTIME_RECORD_EXPERIMENT_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/config/experiment_config.h"
#include "runtime/control/worker_messages.h"
#include "runtime/record/json_writer.h"

namespace cohort {

// kPaused: an experiment a user paused (`cohort experiment pause`); it goes on when activated.
enum class RunState { kActive, kCompleted, kStopped, kError, kPaused };
// "ACTIVE", "COMPLETED", "STOPPED", "ERROR", "PAUSED" (Determined's words).
const char* RunStateName(RunState state);

struct CheckpointEntry {
  std::string id;
  uint64_t batches = 0;
  std::optional<double> metric;  // searcher metric of the validation after the same batches
};

inline constexpr size_t kMaxUnmatchedValidations = 32;

struct TrialRecord {
  uint64_t id = 1;
  RunState state = RunState::kActive;
  uint64_t batches_trained = 0;
  uint64_t total_batches = 0;
  uint64_t records_trained = 0;
  uint32_t restarts = 0;
  std::optional<MetricsReport> latest_training;
  std::optional<MetricsReport> latest_validation;
  std::optional<MetricsReport> best_validation;
  std::vector<CheckpointEntry> checkpoints;  // kept in storage, oldest first
  // The searcher metric of the latest validations no checkpoint report has passed yet, oldest
  // first, at most kMaxUnmatchedValidations: a checkpoint written in the background is reported
  // after the validations that followed it, and still takes the metric of its own. Not written to
  // experiment.json (replaying metrics.jsonl rebuilds it).
  std::vector<std::pair<uint64_t, double>> unmatched_validations;
  std::string error;
  std::string hyperparameters_json;  // this trial's; empty: the experiment's
};

// One thing an experiment's searcher was told, in the order it was told them: a trial's validation
// at the target of its TrainTrial, or its early exit (errored or killed). Searchers are
// deterministic, so hearing the same events again in order brings a new searcher of the same
// config to the same decisions (adaptive_asha's promotions): how a resumed experiment goes on
// from where its search stood.
struct SearcherEvent {
  uint64_t trial_id = 0;
  bool exited = false;           // an early exit; else a validation
  uint64_t units = 0;            // the validation's target, in the searcher's unit (batches or
                                 // records); 0 for an exit
  std::optional<double> metric;  // the searcher metric there; nullopt: none (it ranked worst)
};

struct ExperimentRecord {
  std::string name;
  RunState state = RunState::kActive;
  std::string searcher_metric;
  bool smaller_is_better = true;
  uint64_t experiment_seed = 0;
  std::string fingerprint;
  std::string hyperparameters_json;  // the single searcher's trial's, as a JSON object
  std::vector<TrialRecord> trials;
  bool archived = false;  // left out of `cohort experiment list` unless --all
  std::vector<SearcherEvent> searcher_events;  // oldest first
  // False for a record read back from an experiment.json written before searcher events were
  // kept (it has no "searcher_events"): its searcher's decisions are unknown.
  bool searcher_events_kept = true;

  static ExperimentRecord For(const ExperimentConfig& config);

  TrialRecord& trial(uint64_t id);  // created on first use
  // The searcher metric in a validation report, if it is there.
  std::optional<double> SearcherMetricOf(const MetricsReport& report) const;
  void Apply(const MetricsReport& report);
  void Apply(const CheckpointReport& report);
  // Forgets what came after `batches` (a resumed trial trains those batches again), its
  // checkpoints past it too.
  void RewindTrial(uint64_t id, uint64_t batches);

  // The trial's kept checkpoint with the best searcher metric (the oldest of equals, as the best
  // validation is), or null when no kept checkpoint was validated at its batches. What Determined
  // calls a trial's best checkpoint: the one to use, while the latest is the one a resume takes.
  const CheckpointEntry* BestCheckpoint(const TrialRecord& trial) const;
  // The trial whose best validation has the best searcher metric (the lowest id of equals), or
  // null before any trial validated it.
  const TrialRecord* BestTrial() const;

  std::string ToJson() const;
};

// The values as one JSON object: {"lr": 0.1, "layers": 2, "optimizer": "adam"}.
std::string HyperparametersJson(const Hyperparameters& hyperparameters);

// Drops from the trial's metrics.jsonl at `path` the reports after `batches` (a resumed trial
// trains those batches again) and returns the reports kept, in order. A missing file keeps
// nothing; lines that do not parse are dropped. `reported_batches`, when given, gets the most
// batches any report of the file held, dropped ones included (0 for none).
absl::StatusOr<std::vector<MetricsReport>> TrimMetricsFile(const std::string& path,
                                                           uint64_t trial_id, uint64_t batches,
                                                           uint64_t* reported_batches = nullptr);

// GPU readings as a JSON array of {rank, gpu, name, utilization, memory_used, memory_total}, as
// metrics.jsonl and `describe --json` hold them.
void WriteGpuReadings(JsonWriter& json, const std::vector<GpuReading>& gpus);

// Ranks' paces (straggler scores) as a JSON array of {rank, compute_seconds, step_seconds,
// vs_fastest, vs_best}, as metrics.jsonl and `describe --json` hold them.
void WriteRankPaces(JsonWriter& json, const std::vector<RankPace>& ranks);

// A metrics report as one line of metrics.jsonl (no newline), and back.
std::string MetricsReportJson(const MetricsReport& report);
absl::StatusOr<MetricsReport> ParseMetricsReportJson(absl::string_view line, uint64_t trial_id);

}  // namespace cohort

#endif  // COHORT_RUNTIME_RECORD_EXPERIMENT_RECORD_H_
