#include "runtime/agent/orchestrator_minor.h"

namespace cohort {

std::optional<ControlMessage> KnownAtMinor(const ControlMessage& message, uint16_t minor) {
  // An older orchestrator would take a restored checkpoint for one just written.
  if (const auto* checkpoint = std::get_if<TaskCheckpointReport>(&message);
      checkpoint != nullptr && checkpoint->restored &&
      minor < kControlMinorWithRestoredCheckpoints) {
    return std::nullopt;
  }
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
