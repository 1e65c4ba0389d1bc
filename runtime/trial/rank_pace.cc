#include "runtime/trial/rank_pace.h"

#include <algorithm>
#include <array>
#include <limits>

#include "runtime/collective/recorded_collective.h"

namespace cohort {
namespace {

double Seconds(const std::vector<NamedValue>& timings, const char* key) {
  for (const NamedValue& value : timings) {
    if (value.name == key) return value.value;
  }
  return 0;
}

}  // namespace

absl::StatusOr<std::vector<RankPace>> RankPaceTracker::Gather(
    CollectiveBackend& collective, const std::vector<NamedValue>& timings, uint64_t batches) {
  // [compute, step, batches]: every rank trains the same batches, but each says how many it
  // counted so a rank that reports none is not scored.
  const double compute = Seconds(timings, "compute");
  const double step = Seconds(timings, "data") + compute + Seconds(timings, "optimizer");
  const std::array<double, 3> mine = {compute, step, static_cast<double>(batches)};
  std::vector<std::array<double, 3>> all(collective.size());
  CollectiveTagScope tag({.purpose = CollectivePurpose::kMetrics});
  if (absl::Status status = collective.Allgather(mine.data(), sizeof(mine), all.data());
      !status.ok()) {
    return status;
  }
  std::vector<std::vector<double>> per_rank;
  for (const std::array<double, 3>& rank : all) {
    if (rank[2] < 1) return std::vector<RankPace>();
    per_rank.push_back({rank[0] / rank[2], rank[1] / rank[2]});
  }
  return Score(per_rank);
}

std::vector<RankPace> RankPaceTracker::Score(const std::vector<std::vector<double>>& per_rank) {
  best_step_.resize(per_rank.size(), std::numeric_limits<double>::infinity());
  double fastest = std::numeric_limits<double>::infinity();
  for (const std::vector<double>& rank : per_rank) fastest = std::min(fastest, rank[1]);
  std::vector<RankPace> paces;
  for (uint32_t rank = 0; rank < per_rank.size(); ++rank) {
    const double step = per_rank[rank][1];
    best_step_[rank] = std::min(best_step_[rank], step);
    RankPace pace;
    pace.rank = rank;
    pace.compute_seconds = per_rank[rank][0];
    pace.step_seconds = step;
    // A rank that took no time at all is as fast as can be.
    pace.vs_fastest = step > 0 ? fastest / step : 1;
    pace.vs_best = step > 0 ? best_step_[rank] / step : 1;
    paces.push_back(pace);
  }
  return paces;
}

}  // namespace cohort
