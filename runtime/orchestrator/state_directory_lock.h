// StateDirectoryLock: one orchestrator per state directory. Two on the same directory would give
// their experiments the same ids, continue the same active experiments twice over and write into
// the same run folders.
//
//   absl::StatusOr<StateDirectoryLock> lock = StateDirectoryLock::Acquire(options.state_dir);
//   if (!lock.ok()) ...;  // another orchestrator uses it: its pid is in the message
//   // ... the orchestrator runs; the lock ends with `lock`, or with the process however it ends
//
// The lock is an open file description lock on <root>/orchestrator.lock, which also holds the
// holder's pid (for the message). The kernel drops it when the process ends, a crash included,
// so a stale file never blocks the next orchestrator.
// Thread-safety: a lock is one thread's.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_STATE_DIRECTORY_LOCK_H_
#define COHORT_RUNTIME_ORCHESTRATOR_STATE_DIRECTORY_LOCK_H_

#include <string>

#include "absl/status/statusor.h"

namespace cohort {

class StateDirectoryLock {
 public:
  // The lock file's name in the locked directory.
  static constexpr char kFileName[] = "orchestrator.lock";

  // How a refusal names what is locked, who holds it and what to do.
  struct Wording {
    std::string what;  // empty: "the state directory <root>"
    std::string holder = "another orchestrator";
    std::string remedy = "stop that one, or give this one another --state-dir";
  };

  // Creates `root` (and its parents) if missing and locks it: FAILED_PRECONDITION naming the
  // holder's pid when another process holds the lock ("<what> is in use by <holder> (pid N, as
  // <root>/orchestrator.lock says): <remedy>"), another error when the file cannot be made.
  static absl::StatusOr<StateDirectoryLock> Acquire(const std::string& root,
                                                    const Wording& wording);
  // With the state directory's wording.
  static absl::StatusOr<StateDirectoryLock> Acquire(const std::string& root);

  StateDirectoryLock(StateDirectoryLock&& other) noexcept;
  StateDirectoryLock& operator=(StateDirectoryLock&& other) noexcept;
  StateDirectoryLock(const StateDirectoryLock&) = delete;
  StateDirectoryLock& operator=(const StateDirectoryLock&) = delete;
  ~StateDirectoryLock();  // releases the lock

 private:
  explicit StateDirectoryLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_STATE_DIRECTORY_LOCK_H_
