#include "runtime/agent/line_splitter.h"

#include <utility>

namespace cohort {

std::vector<std::string> LineSplitter::Add(absl::string_view chunk) {
  std::vector<std::string> lines;
  for (const char c : chunk) {
    if (c == '\n') {
      // The newline right after a piece cut at the size limit ends that piece's line.
      if (!partial_.empty() || !just_cut_) lines.push_back(std::move(partial_));
      partial_.clear();
      just_cut_ = false;
      continue;
    }
    partial_.push_back(c);
    just_cut_ = false;
    if (partial_.size() == max_line_bytes_) {
      lines.push_back(std::move(partial_));
      partial_.clear();
      just_cut_ = true;
    }
  }
  return lines;
}

std::optional<std::string> LineSplitter::Finish() {
  just_cut_ = false;
  if (partial_.empty()) return std::nullopt;
  std::string rest = std::move(partial_);
  partial_.clear();
  return rest;
}

}  // namespace cohort
