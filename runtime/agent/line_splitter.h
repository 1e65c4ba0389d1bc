// LineSplitter: cuts a worker's output stream, which arrives in chunks of any size, into lines.
//
// A line is returned without its newline once the newline arrives; a line longer than
// `max_line_bytes` is returned in pieces of that size (so one runaway line cannot grow memory
// without bound). Finish returns what is left after the last newline, when the stream ends.
//
//   LineSplitter splitter;
//   for (std::string& line : splitter.Add("epoch 1\nepo")) Log(line);   // "epoch 1"
//   for (std::string& line : splitter.Add("ch 2\n")) Log(line);         // "epoch 2"
//   if (std::optional<std::string> rest = splitter.Finish()) Log(*rest);
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_AGENT_LINE_SPLITTER_H_
#define COHORT_RUNTIME_AGENT_LINE_SPLITTER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cohort {

// The longest log line the agent forwards in one piece.
inline constexpr size_t kMaxLogLineBytes = 16 * 1024;

class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line_bytes = kMaxLogLineBytes)
      : max_line_bytes_(max_line_bytes == 0 ? 1 : max_line_bytes) {}

  // The lines `chunk` completes, in order.
  std::vector<std::string> Add(absl::string_view chunk);

  // The unterminated rest of the stream, if any; the splitter is then empty.
  std::optional<std::string> Finish();

 private:
  size_t max_line_bytes_;
  std::string partial_;
  bool just_cut_ = false;  // the last character completed a piece at the size limit
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_LINE_SPLITTER_H_
