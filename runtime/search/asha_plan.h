// PlanAdaptiveAsha: how Determined's adaptive_asha searcher splits a search into brackets of
// asynchronous successive halving, and each bracket into rungs. With d = divisor, L = max_length
// in batches and T = max_trials:
//
// 1. Brackets. With bracket_rungs given, one bracket per entry, with that many rungs. Otherwise
//    R = min(max_rungs, 1 + floor(log_d L), 1 + floor(log_d T)) (so the lowest rung trains at least
//    one batch and some trial can reach the top), and the mode picks the rung counts:
//    aggressive {R}; standard {R, R-1, ..., floor((R-1)/2) + 1}; conservative {R, R-1, ..., 1}.
//    Brackets are ordered by rung count, most rungs (most early stopping) first.
// 2. Rungs. A bracket of r rungs trains to max(1, floor(L / d^(r-1-k))) batches in all at rung
//    k = 0 .. r-1, so its top rung trains to L. A rung that would train no further than the rung
//    below is left out (only possible with a small L and bracket_rungs, or d < 2).
// 3. Trials. Bracket i gets max(1, floor(T w_i / sum of w)) trials, w_i = d^(r_i - 1) / r_i, which
//    gives every bracket about the same training budget; what is left of T goes to the first
//    bracket. While the brackets' trials add up to more than T (more brackets than trials), the
//    last bracket is dropped.
// 4. Concurrency. max_concurrent_trials c > 0 is split evenly over the n brackets (c is raised
//    to n, and the first c mod n brackets get one more); c = 0 gives each bracket
//    max(the last bracket's trials, floor(d)). A bracket starts that many trials (at most its
//    own trials) and then one more whenever a report promotes none.
//
// Example: L = 1024, T = 100, d = 4, max_rungs 5, standard, c = 16: R = min(5, 6, 4) = 4, so
// brackets of {4, 3, 2} rungs training to {16, 64, 256, 1024}, {64, 256, 1024} and {256, 1024}
// batches; weights 16, 16/3, 2 give {68, 22, 8} trials plus the 2 left over: {70, 22, 8}; 16
// concurrent trials split as {6, 5, 5}.
//
// Rung lengths count batches, where Determined counts max_length's own unit (epochs, records or
// batches); for a length in batches the two agree.
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_SEARCH_ASHA_PLAN_H_
#define COHORT_RUNTIME_SEARCH_ASHA_PLAN_H_

#include <cstdint>
#include <vector>

#include "runtime/config/experiment_config.h"

namespace cohort {

struct AshaBracketPlan {
  std::vector<uint64_t> rung_batches;  // total batches trained at each rung, increasing
  uint64_t max_trials = 0;             // >= 1
  uint64_t initial_trials = 0;         // 1 .. max_trials: its share of max_concurrent_trials
};

// `searcher` is a valid adaptive_asha config (divisor > 1, max_trials >= 1, rung counts >= 1);
// max_batches >= 1. The result is never empty.
std::vector<AshaBracketPlan> PlanAdaptiveAsha(const SearcherConfig& searcher, uint64_t max_batches);

}  // namespace cohort

#endif  // COHORT_RUNTIME_SEARCH_ASHA_PLAN_H_
