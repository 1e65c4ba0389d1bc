#include "runtime/security/refusal_log.h"

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

// Distinct lines remembered; past this (peers rotating keys) the memory starts over.
constexpr size_t kMaxRememberedLines = 4096;

}  // namespace

void PrintSecurityLine(absl::string_view line) {
  std::fprintf(stderr, "cohort security: %.*s\n", static_cast<int>(line.size()), line.data());
}

RefusalLog::RefusalLog(SecurityLogSink sink, double repeat_seconds)
    : sink_(sink ? std::move(sink) : SecurityLogSink(PrintSecurityLine)),
      repeat_seconds_(repeat_seconds) {}

void RefusalLog::Report(const std::string& key, const std::string& line, double now) {
  auto it = seen_.find(key);
  if (it == seen_.end()) {
    if (seen_.size() >= kMaxRememberedLines) seen_.clear();
    seen_.emplace(key, Seen{now, 0});
    sink_(line);
    return;
  }
  Seen& seen = it->second;
  if (now - seen.last_reported < repeat_seconds_) {
    ++seen.held_back;
    return;
  }
  sink_(seen.held_back == 0
            ? line
            : absl::StrCat(line, " (", seen.held_back, " more since the last report)"));
  seen = Seen{now, 0};
}

}  // namespace cohort
