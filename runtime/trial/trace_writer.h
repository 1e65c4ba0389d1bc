// TraceWriter: one rank's timeline as Chrome trace events (the JSON Array Format that Perfetto
// and chrome://tracing open), appended to a file as they happen: a "[" line, then one complete
// event per line, each ending in ",". MergeTraces joins the files of a trial's ranks into one
// {"traceEvents": [...]} document. Process id = the rank; thread 0 = the training thread,
// thread 1 = the gradient exchange's thread. Times are Clock::MonotonicSeconds, in microseconds,
// so the ranks of one machine share a time axis.
//
//   absl::StatusOr<std::unique_ptr<TraceWriter>> trace = TraceWriter::Open(path, rank);
//   (*trace)->Complete(kTrainingThread, "inside the plugin's train_batch", begin, end, 12);
//
// Thread-safety: Complete may be called from any thread.
#ifndef COHORT_RUNTIME_TRIAL_TRACE_WRITER_H_
#define COHORT_RUNTIME_TRIAL_TRACE_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

class TraceWriter {
 public:
  static constexpr uint32_t kTrainingThread = 0;
  static constexpr uint32_t kExchangeThread = 1;

  // Creates (or replaces) the file at `path`, writing the names of the rank's process and threads.
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Open(const std::string& path, uint32_t rank);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // An event `name` on `thread` from `begin` to `end` (seconds), with the batch it belongs to.
  void Complete(uint32_t thread, absl::string_view name, double begin, double end,
                uint64_t batch);

 private:
  TraceWriter(std::FILE* file, uint32_t rank) : file_(file), rank_(rank) {}
  void Line(const std::string& json);

  std::mutex mutex_;
  std::FILE* file_;
  const uint32_t rank_;
};

// Reads every trace file in `paths` (a TraceWriter's, even one cut short by a kill) and writes
// one {"traceEvents": [...]} document to `out_path` holding all their events.
absl::Status MergeTraces(const std::vector<std::string>& paths, const std::string& out_path);

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_TRACE_WRITER_H_
