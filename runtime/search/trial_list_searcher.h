// TrialListSearcher: trains a fixed list of hyperparameter sets, each to the full length. It is
// Determined's single, grid and random searchers, which differ only in how the list is made.
//
//   TrialListSearcher searcher({hparams_a, hparams_b}, /*max_batches=*/1000);
//   searcher.Start();                     // CreateTrial{1, a}, TrainTrial{1, 1000},
//                                         // CreateTrial{2, b}, TrainTrial{2, 1000}
//   searcher.OnValidation(1, 1000, 0.3);  // CloseTrial{1}
//   searcher.OnTrialExitedEarly(2);       // Shutdown{}
//
// Progress is the share of trials closed or exited.
//
// Thread-safety: not thread-safe (see searcher.h).
#ifndef COHORT_RUNTIME_SEARCH_TRIAL_LIST_SEARCHER_H_
#define COHORT_RUNTIME_SEARCH_TRIAL_LIST_SEARCHER_H_

#include <cstdint>
#include <vector>

#include "runtime/plugin/hyperparameters.h"
#include "runtime/search/searcher.h"

namespace cohort {

class TrialListSearcher final : public Searcher {
 public:
  // Trial i (from 0) gets request id i + 1. `trials` is not empty; max_batches >= 1.
  TrialListSearcher(std::vector<Hyperparameters> trials, uint64_t max_batches);

  std::vector<SearcherOp> Start() override;
  std::vector<SearcherOp> OnValidation(uint64_t request_id, uint64_t batches,
                                       double metric) override;
  std::vector<SearcherOp> OnTrialExitedEarly(uint64_t request_id) override;
  double Progress() const override;
  std::optional<uint64_t> TotalBatches() const override;

 private:
  // Marks the trial finished; true when it was still training.
  bool Finish(uint64_t request_id);
  // `ops`, with Shutdown appended once every trial has finished.
  std::vector<SearcherOp> WithShutdownIfDone(std::vector<SearcherOp> ops) const;

  std::vector<Hyperparameters> trials_;  // moved into the CreateTrial ops by Start
  uint64_t max_batches_;
  std::vector<bool> training_;  // by request id - 1: created and not yet closed or exited
  uint64_t finished_ = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_SEARCH_TRIAL_LIST_SEARCHER_H_
