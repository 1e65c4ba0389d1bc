// AshaBracket: one bracket of asynchronous successive halving (ASHA; Li et al., "A System for
// Massively Parallel Hyperparameter Tuning", MLSys 2020), run the way Determined runs it.
//
// Trials start at rung 0, the shortest. A trial that reports at rung k below the top joins rung
// k's ranking (smaller loss first). Once a rung has n results, its best floor(n / divisor) are
// promoted, as soon as that many are known: a newcomer ranking within them is promoted at once,
// and otherwise, when floor(n / divisor) grows, the best trial not yet promoted is. A promoted
// trial trains on to the next rung's length. A report that promotes nobody starts a new trial
// instead, while fewer than max_trials were started, so the bracket keeps about as many trials
// training as it started with. A trial reporting at the top rung is closed. Once every trial has
// reported at rung 0, each rung whose trials and lower rungs' trials have all reported closes the
// trials it did not promote.
//
// A trial that exits early ranks worst (infinite loss) at the rung it was training for. One that
// exits while waiting keeps its rank; if it is promoted anyway, it ranks worst at the next rung at
// once. Exited trials get no CloseTrial.
//
//   AshaBracket bracket(plan, /*divisor=*/4);
//   ops = bracket.Start(new_trial);                          // CreateTrial, TrainTrial to rung 0
//   ops = bracket.OnValidation(id, batches, loss, new_trial);
//
// `new_trial` makes the CreateTrial for each trial started (its request id and hyperparameters).
// Progress follows Determined: (results at rung 0) / (1.2 max_trials) until all max_trials have
// reported there, then at least (trials closed or exited) / max_trials.
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_SEARCH_ASHA_BRACKET_H_
#define COHORT_RUNTIME_SEARCH_ASHA_BRACKET_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "runtime/search/asha_plan.h"
#include "runtime/search/searcher.h"

namespace cohort {

class AshaBracket {
 public:
  using TrialMaker = absl::FunctionRef<CreateTrial()>;

  AshaBracket(AshaBracketPlan plan, double divisor);

  // Starts plan.initial_trials trials.
  std::vector<SearcherOp> Start(TrialMaker new_trial);
  // `loss` ranks the trial: smaller is better; NaN ranks worst. Ignored unless the trial is
  // training and `batches` reaches its rung's length.
  std::vector<SearcherOp> OnValidation(uint64_t request_id, uint64_t batches, double loss,
                                       TrialMaker new_trial);
  // Ignored for trials already closed or exited, and for unknown ones.
  std::vector<SearcherOp> OnTrialExitedEarly(uint64_t request_id, TrialMaker new_trial);

  // Every trial has been started and is closed or has exited.
  bool done() const;
  double Progress() const;

 private:
  enum class State { kTraining, kWaiting, kClosed, kExited };
  struct Trial {
    size_t rung = 0;  // the rung it trains for, or last reported at
    State state = State::kTraining;
  };
  struct Ranked {
    double loss;
    uint64_t request_id;
    bool promoted;
  };
  struct Rung {
    uint64_t batches;
    std::vector<Ranked> ranking;  // by loss, ties in arrival order
    uint64_t training = 0;        // trials training for this rung
  };

  // The trial's result at its rung, with the ops it leads to.
  void Report(uint64_t request_id, double loss, TrialMaker new_trial, std::vector<SearcherOp>& ops);
  // Ranks the result at its rung and returns the trial to promote, if any.
  std::optional<uint64_t> Rank(Rung& rung, uint64_t request_id, double loss);
  void StartTrial(TrialMaker new_trial, std::vector<SearcherOp>& ops);
  void Close(uint64_t request_id, std::vector<SearcherOp>& ops);
  void CloseUnpromoted(std::vector<SearcherOp>& ops);

  std::vector<Rung> rungs_;
  double divisor_;
  uint64_t max_trials_;
  uint64_t initial_trials_;
  std::map<uint64_t, Trial> trials_;  // by request id
  uint64_t reported_at_bottom_ = 0;   // results at rung 0, exits there included
  uint64_t finished_ = 0;             // closed or exited
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_SEARCH_ASHA_BRACKET_H_
