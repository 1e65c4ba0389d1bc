// AdaptiveAshaSearcher: Determined's adaptive_asha searcher. Several ASHA brackets (AshaBracket)
// run side by side, each with its share of max_trials and of max_concurrent_trials, as
// PlanAdaptiveAsha lays them out; every event goes to the bracket that started the trial.
//
//   AdaptiveAshaSearcher searcher(PlanAdaptiveAsha(config.searcher, 1024), config.searcher,
//                                 config.hyperparameter_spaces, /*seed=*/0);
//   searcher.Start();  // for every bracket, its first trials: CreateTrial, TrainTrial to rung 0
//
// Request ids count up across brackets in the order trials are started; each new trial's
// hyperparameters are the next draw of one HyperparameterSampler. Shutdown follows the op that
// leaves every bracket done. Progress is the mean of the brackets' progress.
//
// Thread-safety: not thread-safe (see searcher.h).
#ifndef COHORT_RUNTIME_SEARCH_ADAPTIVE_ASHA_SEARCHER_H_
#define COHORT_RUNTIME_SEARCH_ADAPTIVE_ASHA_SEARCHER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/config/experiment_config.h"
#include "runtime/search/asha_bracket.h"
#include "runtime/search/asha_plan.h"
#include "runtime/search/hyperparameter_sampler.h"
#include "runtime/search/searcher.h"

namespace cohort {

class AdaptiveAshaSearcher final : public Searcher {
 public:
  // `plans` is not empty; `searcher` gives divisor and smaller_is_better.
  AdaptiveAshaSearcher(std::vector<AshaBracketPlan> plans, const SearcherConfig& searcher,
                       std::map<std::string, HyperparameterSpace> spaces, uint64_t seed);

  std::vector<SearcherOp> Start() override;
  std::vector<SearcherOp> OnValidation(uint64_t request_id, uint64_t batches,
                                       double metric) override;
  std::vector<SearcherOp> OnTrialExitedEarly(uint64_t request_id) override;
  double Progress() const override;
  bool DecidesFromResults() const override { return true; }

 private:
  // A new trial for bracket `bracket`: the next request id and the next draw.
  CreateTrial NewTrial(size_t bracket);
  // `ops`, with Shutdown appended the first time every bracket is done.
  std::vector<SearcherOp> WithShutdownIfDone(std::vector<SearcherOp> ops);

  std::vector<AshaBracket> brackets_;
  bool smaller_is_better_;
  std::map<std::string, HyperparameterSpace> spaces_;
  HyperparameterSampler sampler_;
  std::map<uint64_t, size_t> bracket_of_;  // request id -> bracket
  uint64_t next_request_id_ = 1;
  bool shut_down_ = false;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_SEARCH_ADAPTIVE_ASHA_SEARCHER_H_
