// HeartbeatMonitor: notices when a rank of a trial stops sending heartbeats, and when it comes
// back. The supervisor hands it every sign of life (a WorkerHello, a Heartbeat) with the time it
// arrived, and asks it on every tick what to say. It only decides what to say: nothing is killed.
//
// A rank is watched from its first sign of life until it is forgotten (it finished). Once silent
// for `silent_warning_seconds`, it is reported exactly once; its next beat is reported as a
// resumption, and a later silence is reported again.
//
// Times are seconds on the supervisor's monotonic clock (Clock::MonotonicSeconds), never the
// worker's unix_time, so workers whose clocks disagree with the supervisor's change nothing.
//
//   HeartbeatMonitor monitor;
//   monitor.Beat(hello.rank, hello.batches_trained, clock.MonotonicSeconds());
//   if (std::optional<std::string> line = monitor.Beat(beat.rank, beat.batches_trained, now)) {
//     Log(*line);  // "rank 1 is sending heartbeats again after 42 s of silence (at batch 900)"
//   }
//   for (const std::string& line : monitor.Check(now)) Log(line);  // "rank 1 has sent no ..."
//   monitor.Forget(rank);  // it sent TrialFinished: its silence from now on is expected
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_CONTROL_HEARTBEAT_MONITOR_H_
#define COHORT_RUNTIME_CONTROL_HEARTBEAT_MONITOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cohort {

// How long a rank may send nothing before the supervisor warns that it may be stuck.
inline constexpr double kSilentWarningSeconds = 30.0;

class HeartbeatMonitor {
 public:
  explicit HeartbeatMonitor(double silent_warning_seconds = kSilentWarningSeconds)
      : silent_warning_seconds_(silent_warning_seconds) {}

  // A sign of life from `rank` at `now`, when it had trained `batches_trained` batches; the first
  // one starts watching the rank. Returns the line announcing that the rank is back when Check
  // had reported it silent, else nullopt.
  std::optional<std::string> Beat(uint32_t rank, uint64_t batches_trained, double now);

  // One warning line for each watched rank that has been silent for silent_warning_seconds or
  // more at `now` and was not reported since its last beat, in rank order:
  //   "rank 1 has sent no heartbeat for 30 s (it had trained 812 batches, as it last said); it
  //    may be stuck in the plugin or in a collective"
  std::vector<std::string> Check(double now);

  // `rank` reported (metrics, progress) that it had trained `batches_trained` batches: what a
  // later silence warning names as its last, where heartbeats came too seldom to say (a loop
  // faster than their interval). Not a sign of life; unknown ranks are ignored.
  void Reported(uint32_t rank, uint64_t batches_trained);

  // Stops watching `rank`; a later Beat watches it again. Unknown ranks are ignored.
  void Forget(uint32_t rank) { ranks_.erase(rank); }

  // The longest time a watched rank has been silent at `now`; nullopt when none is watched.
  std::optional<double> LongestSilence(double now) const;

  // Whether `rank` is watched now.
  bool Watches(uint32_t rank) const { return ranks_.count(rank) != 0; }

 private:
  struct RankState {
    double last_beat = 0;
    uint64_t batches_trained = 0;
    bool reported_silent = false;
  };

  double silent_warning_seconds_;
  std::map<uint32_t, RankState> ranks_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_HEARTBEAT_MONITOR_H_
