// TraceWriter: one rank's timeline as Chrome trace events (the JSON Array Format that Perfetto
// and chrome://tracing open), appended to a file as they happen: a "[" line, then one event per
// line, each ending in ",". MergeTraces joins the files of a trial's ranks (and attempts) into
// one {"traceEvents": [...]} document.
//
// Each rank is a process named "rank r" (pid r + 1) with a training thread (tid r + 1, its main
// thread) and a gradient-exchange thread (tid kExchangeThreadIds + r): ids no other rank uses
// and never 0, which viewers keep for the kernel's idle process. Callers pass
// Clock::MonotonicSeconds; the file holds whole microseconds of Unix time (the monotonic time
// plus the offset given to Open), so ranks on different machines share a time axis as far as
// their clocks agree, and integers keep every event exactly inside the one that encloses it.
//
//   absl::StatusOr<std::unique_ptr<TraceWriter>> trace = TraceWriter::Open(
//       path, rank, SystemClock().UnixSeconds() - SystemClock().MonotonicSeconds());
//   (*trace)->Complete(kTrainingThread, "inside the plugin's train_batch", begin, end, 12);
//
// Thread-safety: the event methods may be called from any thread.
#ifndef COHORT_RUNTIME_OBSERVE_TRACE_WRITER_H_
#define COHORT_RUNTIME_OBSERVE_TRACE_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

// The batches whose events a TraceWriter keeps (profiling.begin_on_batch, .end_after_batch):
// from `first` to `last`, both included; the others' events are dropped unwritten.
struct TraceBatchWindow {
  uint64_t first = 0;
  uint64_t last = UINT64_MAX;
};

class TraceWriter {
 public:
  // kCheckpointThread: the rank's background checkpoint writes (checkpoint_storage.async).
  enum Thread { kTrainingThread, kExchangeThread, kCheckpointThread };
  static constexpr uint32_t kExchangeThreadIds = 1'000'000;
  static constexpr uint32_t kCheckpointThreadIds = 2'000'000;

  // Creates (or replaces) the file at `path`, writing the names of the rank's process and
  // threads. `clock_offset` (seconds) turns the callers' times into Unix time.
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Open(const std::string& path, uint32_t rank,
                                                           double clock_offset,
                                                           TraceBatchWindow window = {});
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // An event `name` on `thread` from `begin` to `end` (seconds), with the batch it belongs to
  // and, for a collective call, the bytes it moved.
  void Complete(Thread thread, absl::string_view name, double begin, double end, uint64_t batch,
                std::optional<uint64_t> bytes = std::nullopt);
  // A moment `at` on `thread` (an instant event).
  void Instant(Thread thread, absl::string_view name, double at, uint64_t batch);

  // Whether events of `batch` are written (it lies in the window), so that callers can skip
  // preparing the others.
  bool Keeps(uint64_t batch) const { return batch >= window_.first && batch <= window_.last; }

  // The ids in the file of the rank's process and of `thread`.
  static uint32_t ProcessId(uint32_t rank) { return rank + 1; }
  static uint32_t ThreadId(uint32_t rank, Thread thread) {
    switch (thread) {
      case kTrainingThread:
        return ProcessId(rank);
      case kExchangeThread:
        return kExchangeThreadIds + rank;
      case kCheckpointThread:
        return kCheckpointThreadIds + rank;
    }
    return ProcessId(rank);
  }

 private:
  TraceWriter(std::FILE* file, uint32_t rank, int64_t offset_ns, TraceBatchWindow window)
      : file_(file), rank_(rank), offset_ns_(offset_ns), window_(window) {}
  // Whole microseconds of Unix time at `seconds` of the callers' clock.
  int64_t Microseconds(double seconds) const;
  // Writes `json` and its line's ending, flushed so that a kill loses at most the last line.
  void Line(const std::string& json);

  std::mutex mutex_;
  std::FILE* file_;
  const uint32_t rank_;
  const int64_t offset_ns_;
  const TraceBatchWindow window_;
};

// Reads every trace file in `paths` (a TraceWriter's, even one cut short by a kill) and writes
// one {"traceEvents": [...]} document to `out_path` holding all their events, replacing it whole
// (written to out_path + ".partial", then renamed).
absl::Status MergeTraces(const std::vector<std::string>& paths, const std::string& out_path);

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_TRACE_WRITER_H_
