// Gate: a point one thread waits at until another opens it. Waiting is bounded (10 s), so that
// code that waits for the wrong thing fails its test rather than hanging it.
//
//   Gate written;
//   storage.before_write = [&] { return written.Pass(); };   // the writer's thread waits here
//   ... written.Open();                                      // the test's thread lets it go
//
// Thread-safety: any thread may call either method.
#ifndef COHORT_TEST_COMMON_GATE_H_
#define COHORT_TEST_COMMON_GATE_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/status/status.h"

namespace cohort::testing {

class Gate {
 public:
  void Open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    opened_.notify_all();
  }
  // OK once the gate is open; DEADLINE_EXCEEDED when it stays shut for 10 s.
  absl::Status Pass() {
    std::unique_lock lock(mutex_);
    if (opened_.wait_for(lock, std::chrono::seconds(10), [this] { return open_; })) {
      return absl::OkStatus();
    }
    return absl::DeadlineExceededError("the gate stayed shut for 10 s");
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

}  // namespace cohort::testing

#endif  // COHORT_TEST_COMMON_GATE_H_
