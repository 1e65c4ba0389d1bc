#include "harness/cohort/commands/follow_patience.h"

#include <string>

namespace cohort {

bool FollowPatience::KeepTrying(const absl::Status& failure, double now) {
  if (!last_answer_ || !absl::IsUnavailable(failure)) return false;
  if (now - *last_answer_ > kFollowPatienceSeconds) {
    std::fprintf(out_, "the orchestrator has not answered for %.0f s: no longer following\n",
                 now - *last_answer_);
    return false;
  }
  if (!waiting_) {
    waiting_ = true;
    std::fprintf(out_,
                 "the orchestrator does not answer (restarting, or its host busy?); still "
                 "following for up to %.0f s (Ctrl-C stops following: the experiment goes on in "
                 "the orchestrator)\n",
                 kFollowPatienceSeconds);
    std::fflush(out_);
  }
  return true;
}

void FollowPatience::Answered(double now) {
  last_answer_ = now;
  if (!waiting_) return;
  waiting_ = false;
  std::fprintf(out_, "the orchestrator answers again: following\n");
  std::fflush(out_);
}

}  // namespace cohort
