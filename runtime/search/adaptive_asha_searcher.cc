#include "runtime/search/adaptive_asha_searcher.h"

#include <utility>

namespace cohort {

AdaptiveAshaSearcher::AdaptiveAshaSearcher(std::vector<AshaBracketPlan> plans,
                                           const SearcherConfig& searcher,
                                           std::map<std::string, HyperparameterSpace> spaces,
                                           uint64_t seed)
    : smaller_is_better_(searcher.smaller_is_better), spaces_(std::move(spaces)), sampler_(seed) {
  for (AshaBracketPlan& plan : plans) brackets_.emplace_back(std::move(plan), searcher.divisor);
}

std::vector<SearcherOp> AdaptiveAshaSearcher::Start() {
  std::vector<SearcherOp> ops;
  for (size_t b = 0; b < brackets_.size(); ++b) {
    for (SearcherOp& op : brackets_[b].Start([this, b] { return NewTrial(b); })) {
      ops.push_back(std::move(op));
    }
  }
  return ops;
}

std::vector<SearcherOp> AdaptiveAshaSearcher::OnValidation(uint64_t request_id, uint64_t batches,
                                                           double metric) {
  auto owner = bracket_of_.find(request_id);
  if (owner == bracket_of_.end()) return {};
  const size_t b = owner->second;
  const double loss = smaller_is_better_ ? metric : -metric;
  return WithShutdownIfDone(
      brackets_[b].OnValidation(request_id, batches, loss, [this, b] { return NewTrial(b); }));
}

std::vector<SearcherOp> AdaptiveAshaSearcher::OnTrialExitedEarly(uint64_t request_id) {
  auto owner = bracket_of_.find(request_id);
  if (owner == bracket_of_.end()) return {};
  const size_t b = owner->second;
  return WithShutdownIfDone(
      brackets_[b].OnTrialExitedEarly(request_id, [this, b] { return NewTrial(b); }));
}

double AdaptiveAshaSearcher::Progress() const {
  if (shut_down_) return 1;
  double sum = 0;
  for (const AshaBracket& bracket : brackets_) sum += bracket.Progress();
  return sum / static_cast<double>(brackets_.size());
}

CreateTrial AdaptiveAshaSearcher::NewTrial(size_t bracket) {
  const uint64_t request_id = next_request_id_++;
  bracket_of_[request_id] = bracket;
  return CreateTrial{request_id, sampler_.Sample(spaces_)};
}

std::vector<SearcherOp> AdaptiveAshaSearcher::WithShutdownIfDone(std::vector<SearcherOp> ops) {
  if (shut_down_) return ops;
  for (const AshaBracket& bracket : brackets_) {
    if (!bracket.done()) return ops;
  }
  shut_down_ = true;
  ops.emplace_back(Shutdown{});
  return ops;
}

}  // namespace cohort
