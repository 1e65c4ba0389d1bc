#include "runtime/search/searcher.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/search/adaptive_asha_searcher.h"
#include "runtime/search/asha_plan.h"
#include "runtime/search/grid_points.h"
#include "runtime/search/hyperparameter_sampler.h"
#include "runtime/search/trial_list_searcher.h"

namespace cohort {

absl::StatusOr<std::unique_ptr<Searcher>> CreateSearcher(const ExperimentConfig& config,
                                                         uint64_t max_batches) {
  const SearcherConfig& searcher = config.searcher;
  if (max_batches == 0) {
    return absl::InvalidArgumentError(absl::StrCat(MaxLengthKey(searcher), ": ",
                                                   DescribeLength(searcher.max_length),
                                                   " comes to 0 batches; expected at least 1"));
  }
  const uint64_t seed = config.experiment_seed.value_or(0);
  if (searcher.name == "single") {
    return std::make_unique<TrialListSearcher>(std::vector{config.hyperparameters}, max_batches);
  }
  if (searcher.name == "grid") {
    absl::StatusOr<std::vector<Hyperparameters>> grid =
        GridPoints(config.hyperparameter_spaces, kMaxUpFrontTrials);
    if (!grid.ok()) return grid.status();
    return std::make_unique<TrialListSearcher>(*std::move(grid), max_batches);
  }
  if (searcher.name == "random") {
    if (searcher.max_trials == 0 || searcher.max_trials > kMaxUpFrontTrials) {
      return absl::InvalidArgumentError(
          absl::StrCat("searcher.max_trials: expected an integer between 1 and ", kMaxUpFrontTrials,
                       " for the random searcher; got ", searcher.max_trials));
    }
    HyperparameterSampler sampler(seed);
    std::vector<Hyperparameters> trials;
    for (uint64_t i = 0; i < searcher.max_trials; ++i) {
      trials.push_back(sampler.Sample(config.hyperparameter_spaces));
    }
    return std::make_unique<TrialListSearcher>(std::move(trials), max_batches);
  }
  if (searcher.name == "adaptive_asha") {
    const bool rungless =
        searcher.max_rungs == 0 ||
        std::count(searcher.bracket_rungs.begin(), searcher.bracket_rungs.end(), 0u) > 0;
    if (searcher.max_trials == 0 || !(searcher.divisor > 1) || rungless) {
      return absl::InvalidArgumentError(
          "adaptive_asha searcher: expected max_trials >= 1, divisor > 1 and rung counts >= 1");
    }
    return std::make_unique<AdaptiveAshaSearcher>(PlanAdaptiveAsha(searcher, max_batches), searcher,
                                                  config.hyperparameter_spaces, seed);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("searcher.name: expected one of single, grid, random, adaptive_asha; got '",
                   searcher.name, "'"));
}

}  // namespace cohort
