#include "runtime/search/trial_list_searcher.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace cohort {

TrialListSearcher::TrialListSearcher(std::vector<Hyperparameters> trials, uint64_t max_batches)
    : trials_(std::move(trials)), max_batches_(max_batches) {}

std::vector<SearcherOp> TrialListSearcher::Start() {
  std::vector<SearcherOp> ops;
  training_.assign(trials_.size(), true);
  for (uint64_t i = 0; i < trials_.size(); ++i) {
    ops.emplace_back(CreateTrial{i + 1, std::move(trials_[i])});
    ops.emplace_back(TrainTrial{i + 1, max_batches_});
  }
  trials_.clear();
  return ops;
}

std::vector<SearcherOp> TrialListSearcher::OnValidation(uint64_t request_id, uint64_t batches,
                                                        double /*metric*/) {
  if (batches < max_batches_ || !Finish(request_id)) return {};
  return WithShutdownIfDone({CloseTrial{request_id}});
}

std::vector<SearcherOp> TrialListSearcher::OnTrialExitedEarly(uint64_t request_id) {
  if (!Finish(request_id)) return {};
  return WithShutdownIfDone({});
}

double TrialListSearcher::Progress() const {
  if (training_.empty()) return 0;
  return static_cast<double>(finished_) / static_cast<double>(training_.size());
}

std::optional<uint64_t> TrialListSearcher::TotalBatches() const {
  // Before Start the trials wait in trials_; after it each has its place in training_.
  const auto trials = static_cast<uint64_t>(std::max(trials_.size(), training_.size()));
  if (max_batches_ > std::numeric_limits<uint64_t>::max() / trials) {
    return std::numeric_limits<uint64_t>::max();
  }
  return trials * max_batches_;
}

bool TrialListSearcher::Finish(uint64_t request_id) {
  if (request_id == 0 || request_id > training_.size() || !training_[request_id - 1]) {
    return false;
  }
  training_[request_id - 1] = false;
  ++finished_;
  return true;
}

std::vector<SearcherOp> TrialListSearcher::WithShutdownIfDone(std::vector<SearcherOp> ops) const {
  if (finished_ == training_.size()) ops.emplace_back(Shutdown{});
  return ops;
}

}  // namespace cohort
