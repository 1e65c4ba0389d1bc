// Orchestrator::ScalingBaseline: the 1-slot experiment a wider one's throughput is compared with
// (see orchestrator.h).
#include <algorithm>
#include <vector>

#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"

namespace cohort {

std::optional<Orchestrator::Baseline> Orchestrator::ScalingBaseline(
    const Experiment& experiment) const {
  if (experiment.config.slots_per_trial <= 1) return std::nullopt;
  for (auto it = experiments_.rbegin(); it != experiments_.rend(); ++it) {  // newest first
    const Experiment& candidate = *it->second;
    if (candidate.id == experiment.id || candidate.config.slots_per_trial != 1 ||
        candidate.one_slot_fingerprint != experiment.one_slot_fingerprint) {
      continue;
    }
    std::vector<double> rates;
    for (const TrialRecord& trial : candidate.record.trials) {
      if (trial.latest_training && trial.latest_training->records_per_second > 0) {
        rates.push_back(trial.latest_training->records_per_second);
      }
    }
    if (rates.empty()) continue;
    std::sort(rates.begin(), rates.end());
    const size_t middle = rates.size() / 2;
    const double median =
        rates.size() % 2 == 1 ? rates[middle] : (rates[middle - 1] + rates[middle]) / 2;
    return Baseline{candidate.id, median};
  }
  return std::nullopt;
}

std::optional<double> Orchestrator::ScalingEfficiency(const Experiment& experiment,
                                                      double records_per_second,
                                                      uint64_t* baseline_id) const {
  if (records_per_second <= 0) return std::nullopt;
  const std::optional<Baseline> baseline = ScalingBaseline(experiment);
  if (!baseline) return std::nullopt;
  if (baseline_id != nullptr) *baseline_id = baseline->experiment_id;
  return records_per_second /
         (static_cast<double>(experiment.config.slots_per_trial) * baseline->records_per_second);
}

}  // namespace cohort
