#include "runtime/control/heartbeat_monitor.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace cohort {
namespace {

// Whole seconds elapsed, rounded down: "silent for 30 s" once the threshold is reached.
int64_t WholeSeconds(double seconds) { return static_cast<int64_t>(seconds); }

}  // namespace

std::optional<std::string> HeartbeatMonitor::Beat(uint32_t rank, uint64_t batches_trained,
                                                  double now) {
  RankState& state = ranks_[rank];
  // What its reports said since (Reported) may be ahead of a heartbeat's count.
  const uint64_t batches = std::max(state.batches_trained, batches_trained);
  std::optional<std::string> resumed;
  if (state.reported_silent) {
    resumed =
        absl::StrFormat("rank %d is sending heartbeats again after %d s of silence (at batch %d)",
                        rank, WholeSeconds(now - state.last_beat), batches);
  }
  state = RankState{now, batches, false};
  return resumed;
}

void HeartbeatMonitor::Reported(uint32_t rank, uint64_t batches_trained) {
  const auto found = ranks_.find(rank);
  if (found == ranks_.end()) return;
  found->second.batches_trained = std::max(found->second.batches_trained, batches_trained);
}

std::optional<double> HeartbeatMonitor::LongestSilence(double now) const {
  std::optional<double> longest;
  for (const auto& [rank, state] : ranks_) {
    longest = std::max(longest.value_or(0.0), now - state.last_beat);
  }
  return longest;
}

std::vector<std::string> HeartbeatMonitor::Check(double now) {
  std::vector<std::string> warnings;
  for (auto& [rank, state] : ranks_) {
    const double silent_for = now - state.last_beat;
    if (state.reported_silent || silent_for < silent_warning_seconds_) continue;
    state.reported_silent = true;
    warnings.push_back(absl::StrFormat(
        "rank %d has sent no heartbeat for %d s (it had trained %d batches, as it last said); it "
        "may be stuck in the plugin or in a collective",
        rank, WholeSeconds(silent_for), state.batches_trained));
  }
  return warnings;
}

}  // namespace cohort
