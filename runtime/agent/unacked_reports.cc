#include "runtime/agent/unacked_reports.h"

#include <algorithm>
#include <utility>

namespace cohort {

void UnackedReports::Keep(uint64_t message_id, ControlMessage report) {
  if (capacity_ == 0) {
    ++dropped_;
    return;
  }
  if (reports_.size() == capacity_) {
    if (reports_.front().message_id == 0) --unsent_;
    reports_.pop_front();
    ++dropped_;
  }
  if (message_id == 0) ++unsent_;
  reports_.push_back(Kept{message_id, std::move(report)});
}

bool UnackedReports::Acknowledged(uint64_t message_id) {
  if (message_id == 0) return false;
  // Acks come in the order the reports went: the oldest is almost always the one.
  auto found = std::find_if(reports_.begin(), reports_.end(),
                            [&](const Kept& kept) { return kept.message_id == message_id; });
  if (found == reports_.end()) return false;
  reports_.erase(found);
  return true;
}

void UnackedReports::MarkUnsentBefore(uint64_t before_id) {
  for (Kept& kept : reports_) {
    if (kept.message_id != 0 && kept.message_id < before_id) {
      kept.message_id = 0;
      ++unsent_;
    }
  }
}

void UnackedReports::SendUnsent(const std::function<uint64_t(const ControlMessage&)>& send) {
  for (Kept& kept : reports_) {
    if (unsent_ == 0) return;
    if (kept.message_id != 0) continue;
    kept.message_id = send(kept.report);
    if (kept.message_id == 0) return;
    --unsent_;
  }
}

uint64_t UnackedReports::TakeDropped() { return std::exchange(dropped_, 0); }

}  // namespace cohort
