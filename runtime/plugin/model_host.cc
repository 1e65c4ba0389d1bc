#include "runtime/plugin/model_host.h"

#include <cstdio>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

cohort_host::cohort_host(cohort::ModelHostOptions opts) : options(std::move(opts)) {
  options.context.struct_size = COHORT_STRUCT_SIZE(cohort_trial_context, stream);
  if (!options.log) options.log = cohort::StderrLogSink();
}

void cohort_host::BeginTrainingBatch() {
  std::lock_guard<std::mutex> lock(ready_mutex);
  if (ready != nullptr) ready->Clear();
}

void cohort_host::NoteReadyBreach(absl::Status refused) {
  std::lock_guard<std::mutex> lock(ready_mutex);
  if (ready_breach.ok()) ready_breach = std::move(refused);
}

absl::Status cohort_host::TakeReadyBreach() {
  std::lock_guard<std::mutex> lock(ready_mutex);
  return std::exchange(ready_breach, absl::OkStatus());
}

namespace cohort {

cohort_trial_context SingleSlotCpuContext() {
  cohort_trial_context c{};
  c.struct_size = COHORT_STRUCT_SIZE(cohort_trial_context, stream);
  c.size = c.local_size = c.cross_size = 1;
  c.global_batch_size = c.per_slot_batch_size = 1;
  c.device = {COHORT_DEVICE_CPU, 0};
  return c;
}

absl::string_view LogLevelName(cohort_log_level level) {
  switch (level) {
    case COHORT_LOG_DEBUG:
      return "debug";
    case COHORT_LOG_INFO:
      return "info";
    case COHORT_LOG_WARNING:
      return "warning";
    case COHORT_LOG_ERROR:
      return "error";
    default:
      return "log";
  }
}

LogSink StderrLogSink() {
  return [](cohort_log_level level, absl::string_view message) {
    // Every line of a message of several gets the level, so each reads as a warning (or error)
    // where lines are told apart (the console notices plugin warnings by their first word); a
    // NUL, which would cut a line short where it is read, is written as \0. One write per
    // message keeps the lines of concurrent threads whole.
    if (absl::EndsWith(message, "\n")) message.remove_suffix(1);
    std::string lines;
    for (absl::string_view line : absl::StrSplit(message, '\n')) {
      absl::StrAppend(&lines, LogLevelName(level), ": ",
                      absl::StrReplaceAll(line, {{absl::string_view("\0", 1), "\\0"}}), "\n");
    }
    std::fwrite(lines.data(), 1, lines.size(), stderr);
  };
}

}  // namespace cohort
