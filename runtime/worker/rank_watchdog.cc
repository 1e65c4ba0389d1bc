#include "runtime/worker/rank_watchdog.h"

#include <chrono>
#include <cstdio>

#include "runtime/base/clock.h"

namespace cohort {
namespace {

constexpr auto kLookEvery = std::chrono::milliseconds(250);
// How long a rank must have been in its own work when stopped for that to be worth a line.
constexpr double kStuckWhenStoppedSeconds = 1.0;

}  // namespace

RankWatchdog::RankWatchdog(uint32_t rank, const PhaseBoard& board, double timeout_seconds,
                           std::function<bool()> stopping)
    : rank_(rank),
      board_(board),
      timeout_seconds_(timeout_seconds),
      stopping_(std::move(stopping)),
      thread_([this] { Watch(); }) {}

RankWatchdog::~RankWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void RankWatchdog::Watch() {
  // Each line is written once per phase entered (a phase is told apart by when it began).
  double overdue_told = -1;
  double stopped_told = -1;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kLookEvery, [this] { return done_; })) {
    const PhaseBoard::Snapshot now = board_.Read();
    if (!IsOwnWork(now.phase)) continue;
    const double elapsed = SystemClock().MonotonicSeconds() - now.since;
    const auto batch = static_cast<unsigned long long>(now.batch);
    if (elapsed > timeout_seconds_ && overdue_told != now.since) {
      overdue_told = now.since;
      std::fprintf(stderr,
                   "rank %u has been %s of batch %llu for %.1f s, longer than "
                   "optimizations.collective_timeout (%.0f s): the other ranks stop waiting for "
                   "it\n",
                   rank_, TrialPhaseName(now.phase), batch, elapsed, timeout_seconds_);
      std::fflush(stderr);
    }
    if (stopping_() && elapsed > kStuckWhenStoppedSeconds && stopped_told != now.since) {
      stopped_told = now.since;
      std::fprintf(stderr, "rank %u was told to stop while %s of batch %llu, for %.1f s\n", rank_,
                   TrialPhaseName(now.phase), batch, elapsed);
      std::fflush(stderr);
    }
  }
}

}  // namespace cohort
