#include "runtime/observe/trace_writer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "runtime/observe/json_quote.h"

namespace cohort {
namespace {

std::string NameEvent(absl::string_view kind, uint32_t pid, std::optional<uint32_t> tid,
                      absl::string_view name) {
  return absl::StrCat("{\"ph\":\"M\",\"name\":\"", kind, "\",\"pid\":", pid,
                      tid ? absl::StrCat(",\"tid\":", *tid) : std::string(),
                      ",\"args\":{\"name\":", JsonQuoted(name), "}}");
}

}  // namespace

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Open(const std::string& path,
                                                               uint32_t rank, double clock_offset,
                                                               TraceBatchWindow window) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot write the timeline to ", path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<TraceWriter> writer(
      new TraceWriter(file, rank, std::llround(clock_offset * 1e9), window));
  const uint32_t pid = ProcessId(rank);
  std::fputs("[\n", file);
  writer->Line(NameEvent("process_name", pid, std::nullopt, absl::StrCat("rank ", rank)));
  writer->Line(absl::StrCat("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":", pid,
                            ",\"args\":{\"sort_index\":", rank, "}}"));
  writer->Line(NameEvent("thread_name", pid, ThreadId(rank, kTrainingThread), "training"));
  writer->Line(NameEvent("thread_name", pid, ThreadId(rank, kExchangeThread), "gradient exchange"));
  writer->Line(
      NameEvent("thread_name", pid, ThreadId(rank, kCheckpointThread), "checkpoint writes"));
  return writer;
}

TraceWriter::~TraceWriter() { std::fclose(file_); }

int64_t TraceWriter::Microseconds(double seconds) const {
  const int64_t nanoseconds = std::llround(seconds * 1e9) + offset_ns_;
  // Rounded down alike for every time, so an event inside another stays inside it.
  return nanoseconds >= 0 ? nanoseconds / 1000 : -((-nanoseconds + 999) / 1000);
}

void TraceWriter::Line(const std::string& json) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::fputs(json.c_str(), file_);
  std::fputs(",\n", file_);
  std::fflush(file_);
}

void TraceWriter::Complete(Thread thread, absl::string_view name, double begin, double end,
                           uint64_t batch, std::optional<uint64_t> bytes) {
  if (!Keeps(batch)) return;
  const int64_t ts = Microseconds(begin);
  Line(absl::StrCat("{\"ph\":\"X\",\"name\":", JsonQuoted(name), ",\"pid\":", ProcessId(rank_),
                    ",\"tid\":", ThreadId(rank_, thread), ",\"ts\":", ts, ",\"dur\":",
                    std::max<int64_t>(0, Microseconds(end) - ts), ",\"args\":{\"batch\":", batch,
                    bytes ? absl::StrCat(",\"bytes\":", *bytes) : std::string(), "}}"));
}

void TraceWriter::Instant(Thread thread, absl::string_view name, double at, uint64_t batch) {
  if (!Keeps(batch)) return;
  Line(absl::StrCat("{\"ph\":\"i\",\"s\":\"t\",\"name\":", JsonQuoted(name),
                    ",\"pid\":", ProcessId(rank_), ",\"tid\":", ThreadId(rank_, thread),
                    ",\"ts\":", Microseconds(at), ",\"args\":{\"batch\":", batch, "}}"));
}

absl::Status MergeTraces(const std::vector<std::string>& paths, const std::string& out_path) {
  std::string merged = "{\"traceEvents\":[\n";
  bool first = true;
  for (const std::string& path : paths) {
    std::ifstream in(path);
    if (!in) return absl::NotFoundError(absl::StrCat("cannot read the timeline ", path));
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
      // A line cut short by a kill is not an event: keep only whole ones.
      if (line == "[" || !absl::ConsumeSuffix(&line, ",") || !absl::EndsWith(line, "}")) continue;
      absl::StrAppend(&merged, first ? "" : ",\n", line);
      first = false;
    }
  }
  merged += "\n]}\n";
  // Written aside and renamed over out_path, so a reader sees the old timeline or the new one.
  const std::string partial = out_path + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << merged;
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", partial));
  }
  if (std::rename(partial.c_str(), out_path.c_str()) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot rename ", partial, " to ", out_path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace cohort
