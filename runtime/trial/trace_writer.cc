#include "runtime/trial/trace_writer.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cohort {
namespace {

// `text` as a JSON string.
std::string Quoted(absl::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string NameEvent(absl::string_view kind, uint32_t rank, int64_t thread,
                      absl::string_view name) {
  return absl::StrCat("{\"ph\":\"M\",\"name\":\"", kind, "\",\"pid\":", rank,
                      thread >= 0 ? absl::StrCat(",\"tid\":", thread) : std::string(),
                      ",\"args\":{\"name\":", Quoted(name), "}}");
}

}  // namespace

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Open(const std::string& path,
                                                               uint32_t rank) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot write the timeline to ", path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<TraceWriter> writer(new TraceWriter(file, rank));
  std::fputs("[\n", file);
  writer->Line(NameEvent("process_name", rank, -1, absl::StrCat("rank ", rank)));
  writer->Line(absl::StrCat("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":", rank,
                            ",\"args\":{\"sort_index\":", rank, "}}"));
  writer->Line(NameEvent("thread_name", rank, kTrainingThread, "training"));
  writer->Line(NameEvent("thread_name", rank, kExchangeThread, "gradient exchange"));
  return writer;
}

TraceWriter::~TraceWriter() { std::fclose(file_); }

void TraceWriter::Line(const std::string& json) {
  std::fputs(json.c_str(), file_);
  std::fputs(",\n", file_);
}

void TraceWriter::Complete(uint32_t thread, absl::string_view name, double begin, double end,
                           uint64_t batch) {
  const std::string event = absl::StrFormat(
      "{\"ph\":\"X\",\"name\":%s,\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
      "\"args\":{\"batch\":%u}}",
      Quoted(name), rank_, thread, begin * 1e6, (end - begin) * 1e6, batch);
  std::lock_guard<std::mutex> lock(mutex_);
  Line(event);
  std::fflush(file_);
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
  std::ofstream out(out_path, std::ios::trunc);
  out << merged;
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", out_path));
  return absl::OkStatus();
}

}  // namespace cohort
