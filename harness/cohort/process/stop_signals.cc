#include "harness/cohort/process/stop_signals.h"

#include <pthread.h>

#include <utility>

#include "runtime/base/hangup_ignored.h"

namespace cohort {
namespace {

std::atomic<int> received{0};
std::atomic<bool> stop_requested{false};
static_assert(std::atomic<int>::is_always_lock_free, "set in a signal handler");
static_assert(std::atomic<bool>::is_always_lock_free, "set in a signal handler");

void Count(int) {
  received.fetch_add(1);
  stop_requested.store(true);
}

}  // namespace

StopSignals::StopSignals(Second second) {
  received.store(0);
  stop_requested.store(false);
  struct sigaction action = {};
  action.sa_handler = Count;
  action.sa_flags = second == Second::kEndsProcess ? SA_RESETHAND : 0;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_[0]);
  sigaction(SIGTERM, &action, &previous_[1]);
  hangup_handled_ = !HangupIgnored();
  if (hangup_handled_) sigaction(SIGHUP, &action, &previous_[2]);
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &previous_[3]);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &previous_[0], nullptr);
  sigaction(SIGTERM, &previous_[1], nullptr);
  if (hangup_handled_) sigaction(SIGHUP, &previous_[2], nullptr);
  sigaction(SIGPIPE, &previous_[3], nullptr);
}

int StopSignals::count() { return received.load(); }

const std::atomic<bool>& StopSignals::requested() { return stop_requested; }

std::thread StartWithoutStopSignals(std::function<void()> body) {
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  std::thread thread(std::move(body));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return thread;
}

}  // namespace cohort
