#include "runtime/search/asha_plan.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace cohort {
namespace {

// 1 + floor(log_d(x)), counting no further than `limit`.
uint32_t RungsThatFit(double x, double divisor, uint32_t limit) {
  uint32_t rungs = 1;
  for (double reach = divisor; rungs < limit && reach <= x; reach *= divisor) ++rungs;
  return rungs;
}

// Step 1: the rung count of every bracket, most first.
std::vector<uint32_t> BracketRungCounts(const SearcherConfig& s, uint64_t max_batches) {
  std::vector<uint32_t> counts = s.bracket_rungs;
  if (counts.empty()) {
    uint32_t most = RungsThatFit(static_cast<double>(max_batches), s.divisor, s.max_rungs);
    most = RungsThatFit(static_cast<double>(s.max_trials), s.divisor, most);
    const uint32_t fewest = s.mode == AshaMode::kAggressive     ? most
                            : s.mode == AshaMode::kConservative ? 1
                                                                : (most - 1) / 2 + 1;
    for (uint32_t rungs = fewest; rungs <= most; ++rungs) counts.push_back(rungs);
  }
  std::sort(counts.begin(), counts.end(), std::greater<>());
  return counts;
}

// Step 2.
std::vector<uint64_t> RungBatches(uint32_t rungs, double divisor, uint64_t max_batches) {
  std::vector<uint64_t> batches;
  for (uint32_t k = 0; k < rungs; ++k) {
    const double shrink = std::pow(divisor, static_cast<double>(rungs - 1 - k));
    const uint64_t target =
        k + 1 == rungs
            ? max_batches
            : std::max<uint64_t>(
                  1, static_cast<uint64_t>(std::floor(static_cast<double>(max_batches) / shrink)));
    if (batches.empty() || target > batches.back()) batches.push_back(target);
  }
  return batches;
}

// Step 3. Weights are compared in log space, so a large divisor cannot overflow them.
std::vector<uint64_t> BracketTrials(const std::vector<uint32_t>& counts, double divisor,
                                    uint64_t max_trials) {
  std::vector<double> log_weights;
  for (uint32_t rungs : counts) {
    log_weights.push_back((rungs - 1) * std::log(divisor) - std::log(static_cast<double>(rungs)));
  }
  const double heaviest = *std::max_element(log_weights.begin(), log_weights.end());
  std::vector<double> weights;
  double total = 0;
  for (double log_weight : log_weights) {
    weights.push_back(std::exp(log_weight - heaviest));
    total += weights.back();
  }
  std::vector<uint64_t> trials;
  uint64_t allotted = 0;
  for (double w : weights) {
    trials.push_back(
        std::max<uint64_t>(1, static_cast<uint64_t>(w / total * static_cast<double>(max_trials))));
    allotted += trials.back();
  }
  while (allotted > max_trials) {
    allotted -= trials.back();
    trials.pop_back();
  }
  trials.front() += max_trials - allotted;
  return trials;
}

}  // namespace

std::vector<AshaBracketPlan> PlanAdaptiveAsha(const SearcherConfig& searcher,
                                              uint64_t max_batches) {
  const std::vector<uint32_t> counts = BracketRungCounts(searcher, max_batches);
  const std::vector<uint64_t> trials = BracketTrials(counts, searcher.divisor, searcher.max_trials);
  const uint64_t brackets = trials.size();
  const uint64_t concurrent = std::max(searcher.max_concurrent_trials, brackets);
  // Step 4, for max_concurrent_trials 0; floor(d) is capped where no bracket could use more.
  const uint64_t unlimited_share = std::max(
      trials.back(), static_cast<uint64_t>(std::min(std::floor(searcher.divisor),
                                                    static_cast<double>(searcher.max_trials))));
  std::vector<AshaBracketPlan> plans;
  for (uint64_t i = 0; i < brackets; ++i) {
    AshaBracketPlan& plan = plans.emplace_back();
    plan.rung_batches = RungBatches(counts[i], searcher.divisor, max_batches);
    plan.max_trials = trials[i];
    const uint64_t share = searcher.max_concurrent_trials == 0
                               ? unlimited_share
                               : concurrent / brackets + (i < concurrent % brackets ? 1 : 0);
    plan.initial_trials = std::min(share, plan.max_trials);
  }
  return plans;
}

}  // namespace cohort
