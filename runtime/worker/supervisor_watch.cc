#include "runtime/worker/supervisor_watch.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include "runtime/base/process_state.h"

namespace cohort {

SupervisorWatch::SupervisorWatch(int supervisor_pid, double period_seconds,
                                 std::function<void(double stopped_seconds)> on_resumed)
    : supervisor_pid_(supervisor_pid),
      period_seconds_(period_seconds),
      on_resumed_(std::move(on_resumed)),
      thread_([this] { Watch(); }) {}

SupervisorWatch::~SupervisorWatch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SupervisorWatch::Watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto period = std::chrono::duration<double>(period_seconds_);
  while (!wake_.wait_for(lock, period, [this] { return done_; })) {
    if (ProcessState(supervisor_pid_) != 'T') continue;
    const auto stopped = std::chrono::steady_clock::now();
    // Every thread, and what the worker started when it leads its own process group (as its
    // agent starts it), until the supervisor's SIGCONT to that group.
    if (::getpgrp() == ::getpid()) {
      ::kill(0, SIGSTOP);
    } else {
      ::raise(SIGSTOP);
    }
    if (on_resumed_) {
      on_resumed_(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count());
    }
  }
}

}  // namespace cohort
