#include "runtime/search/asha_bracket.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace cohort {
namespace {

constexpr double kWorstLoss = std::numeric_limits<double>::infinity();

}  // namespace

AshaBracket::AshaBracket(AshaBracketPlan plan, double divisor)
    : divisor_(divisor), max_trials_(plan.max_trials), initial_trials_(plan.initial_trials) {
  for (uint64_t batches : plan.rung_batches) rungs_.push_back(Rung{batches, {}, 0});
}

std::vector<SearcherOp> AshaBracket::Start(TrialMaker new_trial) {
  std::vector<SearcherOp> ops;
  for (uint64_t i = 0; i < initial_trials_; ++i) StartTrial(new_trial, ops);
  return ops;
}

std::vector<SearcherOp> AshaBracket::OnValidation(uint64_t request_id, uint64_t batches,
                                                  double loss, TrialMaker new_trial) {
  auto it = trials_.find(request_id);
  if (it == trials_.end() || it->second.state != State::kTraining ||
      batches < rungs_[it->second.rung].batches) {
    return {};
  }
  std::vector<SearcherOp> ops;
  Report(request_id, std::isnan(loss) ? kWorstLoss : loss, new_trial, ops);
  return ops;
}

std::vector<SearcherOp> AshaBracket::OnTrialExitedEarly(uint64_t request_id, TrialMaker new_trial) {
  auto it = trials_.find(request_id);
  if (it == trials_.end()) return {};
  const State before = it->second.state;
  if (before == State::kClosed || before == State::kExited) return {};
  it->second.state = State::kExited;
  ++finished_;
  std::vector<SearcherOp> ops;
  // A waiting trial keeps its rank; one in training will never report, so it ranks worst.
  if (before == State::kTraining) Report(request_id, kWorstLoss, new_trial, ops);
  return ops;
}

bool AshaBracket::done() const { return trials_.size() == max_trials_ && finished_ == max_trials_; }

double AshaBracket::Progress() const {
  const auto trials = static_cast<double>(max_trials_);
  double progress = static_cast<double>(reported_at_bottom_) / (1.2 * trials);
  if (reported_at_bottom_ == max_trials_) {
    progress = std::max(progress, static_cast<double>(finished_) / trials);
  }
  return std::min(progress, 1.0);
}

void AshaBracket::Report(uint64_t request_id, double loss, TrialMaker new_trial,
                         std::vector<SearcherOp>& ops) {
  Trial& trial = trials_[request_id];
  Rung& rung = rungs_[trial.rung];
  --rung.training;
  if (trial.rung == 0) ++reported_at_bottom_;
  bool promoted_one = false;
  if (trial.rung + 1 == rungs_.size()) {
    Close(request_id, ops);
  } else {
    if (trial.state == State::kTraining) trial.state = State::kWaiting;
    if (std::optional<uint64_t> promoted = Rank(rung, request_id, loss)) {
      Trial& next = trials_[*promoted];
      Rung& next_rung = rungs_[++next.rung];
      ++next_rung.training;
      if (next.state == State::kExited) {
        // It cannot train on: it reports worst at the next rung, which decides what follows.
        Report(*promoted, kWorstLoss, new_trial, ops);
        return;
      }
      next.state = State::kTraining;
      ops.emplace_back(TrainTrial{*promoted, next_rung.batches});
      promoted_one = true;
    }
  }
  if (!promoted_one && trials_.size() < max_trials_) StartTrial(new_trial, ops);
  if (reported_at_bottom_ == max_trials_) CloseUnpromoted(ops);
}

std::optional<uint64_t> AshaBracket::Rank(Rung& rung, uint64_t request_id, double loss) {
  const auto promotable = [this](size_t results) {
    return static_cast<size_t>(static_cast<double>(results) / divisor_);
  };
  const size_t before = promotable(rung.ranking.size());
  const size_t after = promotable(rung.ranking.size() + 1);
  const auto place =
      std::upper_bound(rung.ranking.begin(), rung.ranking.end(), loss,
                       [](double value, const Ranked& ranked) { return value < ranked.loss; });
  const auto index = static_cast<size_t>(place - rung.ranking.begin());
  const bool promote_now = index < after;
  rung.ranking.insert(place, Ranked{loss, request_id, promote_now});
  if (promote_now) return request_id;
  if (after > before && !rung.ranking[before].promoted) {
    rung.ranking[before].promoted = true;
    return rung.ranking[before].request_id;
  }
  return std::nullopt;
}

void AshaBracket::StartTrial(TrialMaker new_trial, std::vector<SearcherOp>& ops) {
  CreateTrial create = new_trial();
  const uint64_t request_id = create.request_id;
  trials_[request_id] = Trial{0, State::kTraining};
  ++rungs_[0].training;
  ops.emplace_back(std::move(create));
  ops.emplace_back(TrainTrial{request_id, rungs_[0].batches});
}

void AshaBracket::Close(uint64_t request_id, std::vector<SearcherOp>& ops) {
  Trial& trial = trials_[request_id];
  if (trial.state == State::kClosed || trial.state == State::kExited) return;
  trial.state = State::kClosed;
  ++finished_;
  ops.emplace_back(CloseTrial{request_id});
}

void AshaBracket::CloseUnpromoted(std::vector<SearcherOp>& ops) {
  for (const Rung& rung : rungs_) {
    if (rung.training > 0) return;
    for (const Ranked& ranked : rung.ranking) {
      if (!ranked.promoted) Close(ranked.request_id, ops);
    }
  }
}

}  // namespace cohort
