// ProvisionerCalls: the Orchestrator's requests to its AgentProvisioner, whose batch-system
// commands (sbatch, squeue, scancel) may each take seconds, run in order on a thread of their own
// so that the orchestrator's thread goes on serving agents, clients and rendezvous meanwhile. The
// answers wait until the orchestrator takes them (TakeAnswers), on its own thread.
//
//   ProvisionerCalls calls(provisioner, /*background=*/true);
//   calls.Submit(request);                     // returns at once
//   ... later, on the orchestrator's thread:
//   for (ProvisionerCalls::Answer& answer : calls.TakeAnswers()) { ... }
//
// In the foreground (`background` false) each request runs on the caller's thread before it
// returns, its answer waiting for TakeAnswers all the same: for provisioners that answer at once,
// such as a test's.
//
// Destroying it drops the submissions and polls not yet begun, runs the cancels still queued,
// waits for the request running, and cancels the jobs of the submissions whose answers were never
// taken: no job asked for outlives it unknown. The provisioner must outlive it.
//
// Thread-safety: Submit, Poll, Cancel, polling and TakeAnswers from one thread; the provisioner's
// Submit, States and Cancel run on another, while that thread may call its const methods.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_PROVISIONER_CALLS_H_
#define COHORT_RUNTIME_ORCHESTRATOR_PROVISIONER_CALLS_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/orchestrator/agent_provisioner.h"

namespace cohort {

class ProvisionerCalls {
 public:
  // The answer to Submit, naming the task it was for.
  struct Submitted {
    uint64_t task_id = 0;
    absl::StatusOr<ProvisionedJob> job;
  };
  // The answer to Poll.
  struct Polled {
    absl::StatusOr<std::map<std::string, JobState>> states;
  };
  // The answer to Cancel.
  struct Cancelled {
    std::string job_id;
    absl::Status status;
  };
  using Answer = std::variant<Submitted, Polled, Cancelled>;

  ProvisionerCalls(AgentProvisioner& provisioner, bool background);
  ~ProvisionerCalls();
  ProvisionerCalls(const ProvisionerCalls&) = delete;
  ProvisionerCalls& operator=(const ProvisionerCalls&) = delete;

  // AgentProvisioner's Submit, States and Cancel, answered in TakeAnswers in the order asked.
  void Submit(ProvisionRequest request);
  void Poll(std::vector<std::string> job_ids);
  void Cancel(std::string job_id);

  // Whether a Poll has not been answered yet (taken by TakeAnswers).
  bool polling() const { return polls_asked_ != polls_taken_; }

  // The answers come since the last call, oldest first.
  std::vector<Answer> TakeAnswers();

 private:
  struct PollRequest {
    std::vector<std::string> job_ids;
  };
  struct CancelRequest {
    std::string job_id;
  };
  using Request = std::variant<ProvisionRequest, PollRequest, CancelRequest>;

  void Ask(Request request);
  Answer Run(const Request& request);
  void Serve();  // the thread's loop

  AgentProvisioner& provisioner_;
  uint64_t polls_asked_ = 0;
  uint64_t polls_taken_ = 0;
  std::mutex mutex_;
  std::condition_variable asked_;
  std::deque<Request> requests_;  // guarded by mutex_
  std::vector<Answer> answers_;   // guarded by mutex_
  bool stopping_ = false;         // guarded by mutex_
  std::thread thread_;            // none in the foreground
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_PROVISIONER_CALLS_H_
