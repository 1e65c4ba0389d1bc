#include "runtime/agent/orchestrator_minor.h"

namespace cohort {

std::optional<ControlMessage> KnownAtMinor(const ControlMessage& message, uint16_t minor) {
  if (minor >= kControlMinorWithProgress) return message;
  if (std::holds_alternative<TaskProgress>(message)) return std::nullopt;
  if (const auto* batch = std::get_if<LogBatch>(&message)) {
    LogBatch known{batch->task_id, {}};
    for (const LogLine& line : batch->lines) {
      if (line.stream != LogStream::kAgent) known.lines.push_back(line);
    }
    if (known.lines.empty() && !batch->lines.empty()) return std::nullopt;
    return known;
  }
  return message;
}

}  // namespace cohort
