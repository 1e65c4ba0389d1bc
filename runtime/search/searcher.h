// Searcher: decides which trials an experiment trains, with which hyperparameters and how long.
//
// Determined's model: the searcher emits operations, the orchestrator carries them out and tells
// the searcher what happened. Trials are named by request ids 1, 2, 3, ... in creation order.
//
//   absl::StatusOr<std::unique_ptr<Searcher>> searcher = CreateSearcher(config, max_batches);
//   std::vector<SearcherOp> ops = (*searcher)->Start();
//   // CreateTrial{1, hparams}, TrainTrial{1, 1000}, CreateTrial{2, ...}, ...
//   ops = (*searcher)->OnValidation(1, 1000, 0.25);   // CloseTrial{1}, ...
//   // ... until an op is Shutdown: every trial is closed or has exited.
//
// The orchestrator's side of the contract:
// - CreateTrial: start a trial with these hyperparameters (at most max_concurrent_trials train at
//   once; limiting them is the orchestrator's job, and creates may come well ahead of that limit).
// - TrainTrial: train the trial until `batches` batches in total, validate, and call OnValidation
//   with those batches. A trial waits (keeping its state) between one report and its next
//   TrainTrial or CloseTrial.
// - CloseTrial: the trial is done; stop it.
// - Shutdown: the search is over. It is emitted once, as the last op.
// OnTrialExitedEarly reports a trial that errored or was stopped without being closed; it gets no
// CloseTrial. Validations other than the one a TrainTrial asked for (periodic ones at fewer
// batches) may be reported too: searchers ignore them, as they ignore unknown request ids.
//
// The searchers are pure and deterministic: the same config, seed and sequence of calls give the
// same operations. The random draws derive from reproducibility.experiment_seed (0 when unset;
// an orchestrator that wants a fresh search each run sets a seed first and records it).
//
// Thread-safety: a Searcher is not thread-safe; one caller drives it.
#ifndef COHORT_RUNTIME_SEARCH_SEARCHER_H_
#define COHORT_RUNTIME_SEARCH_SEARCHER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/config/experiment_config.h"
#include "runtime/plugin/hyperparameters.h"

namespace cohort {

struct CreateTrial {
  uint64_t request_id = 0;
  Hyperparameters hparams;  // a value for every hyperparameter, global_batch_size included
};

// Train until `batches` in total, then validate and report through OnValidation.
struct TrainTrial {
  uint64_t request_id = 0;
  uint64_t batches = 0;
};

struct CloseTrial {
  uint64_t request_id = 0;
};

struct Shutdown {};

using SearcherOp = std::variant<CreateTrial, TrainTrial, CloseTrial, Shutdown>;

class Searcher {
 public:
  virtual ~Searcher() = default;

  // The first operations; call once, before anything else.
  virtual std::vector<SearcherOp> Start() = 0;
  // The trial validated after `batches` batches in total; `metric` is searcher.metric's value
  // (NaN ranks worst).
  virtual std::vector<SearcherOp> OnValidation(uint64_t request_id, uint64_t batches,
                                               double metric) = 0;
  // The trial errored or was stopped; it will report nothing more.
  virtual std::vector<SearcherOp> OnTrialExitedEarly(uint64_t request_id) = 0;
  // How far the search is, from 0 to 1 (1 once Shutdown is emitted); never decreases.
  virtual double Progress() const = 0;
  // The batches the whole search trains, when known from the start (every trial of a single, grid
  // or random search trains searcher.max_length); nullopt when it depends on the results (ASHA).
  // Progress in batches (those trained over this) moves while a trial trains.
  virtual std::optional<uint64_t> TotalBatches() const { return std::nullopt; }
  // Whether what the searcher asks next depends on the results it was told and their order
  // (adaptive_asha's promotions): a resumed experiment's searcher of this kind hears the recorded
  // results again before anything trains. Single, grid and random searches ask the same whatever
  // the results: their resumed trials each train to the same target again from their checkpoints.
  virtual bool DecidesFromResults() const { return false; }
};

// The searcher that `config.searcher` names. `max_batches` is searcher.max_length in batches (the
// caller converts records and epochs). INVALID_ARGUMENT when the search cannot run: zero
// max_batches, or a grid or random search of more than kMaxUpFrontTrials trials.
absl::StatusOr<std::unique_ptr<Searcher>> CreateSearcher(const ExperimentConfig& config,
                                                         uint64_t max_batches);

// Grid and random searches create every trial at the start; this bounds their memory.
inline constexpr uint64_t kMaxUpFrontTrials = 100000;

}  // namespace cohort

#endif  // COHORT_RUNTIME_SEARCH_SEARCHER_H_
