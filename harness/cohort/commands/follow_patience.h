// FollowPatience: what a command that follows the orchestrator (`submit --follow`, `trial logs
// --follow`) does when the orchestrator stops answering after it answered: it waits, saying so
// once, for up to kFollowPatienceSeconds (an orchestrator restarting, or its host busy), and goes
// on when the orchestrator answers again, rather than failing at the first unanswered request
// while the experiment goes on.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_FOLLOW_PATIENCE_H_
#define COHORT_HARNESS_COHORT_COMMANDS_FOLLOW_PATIENCE_H_

#include <cstdio>
#include <optional>

#include "absl/status/status.h"

namespace cohort {

inline constexpr double kFollowPatienceSeconds = 300;

class FollowPatience {
 public:
  // Says what it does on `out` (stderr).
  explicit FollowPatience(std::FILE* out) : out_(out) {}

  // After a request failed with `failure`, at `now` (monotonic seconds): whether to try again
  // (after the caller's usual pause). Only an orchestrator that answered before and does not
  // answer now (UNAVAILABLE) is waited for, and only until kFollowPatienceSeconds after its last
  // answer.
  bool KeepTrying(const absl::Status& failure, double now);
  // After an answer at `now`: says that the orchestrator answers again, after a wait.
  void Answered(double now);

 private:
  std::FILE* out_;
  std::optional<double> last_answer_;
  bool waiting_ = false;  // told that it waits, and not yet that the orchestrator is back
};

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_FOLLOW_PATIENCE_H_
