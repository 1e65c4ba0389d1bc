#include "runtime/agent/log_batcher.h"

#include <utility>

namespace cohort {

std::optional<LogBatch> LogBatcher::Add(LogLine line, double now) {
  if (batch_.lines.empty()) oldest_ = now;
  batch_.lines.push_back(std::move(line));
  if (batch_.lines.size() >= max_lines_) return Take();
  return std::nullopt;
}

std::optional<LogBatch> LogBatcher::Due(double now) {
  if (batch_.lines.empty() || now - oldest_ < max_delay_seconds_) return std::nullopt;
  return Take();
}

std::optional<LogBatch> LogBatcher::Take() {
  if (batch_.lines.empty()) return std::nullopt;
  LogBatch taken;
  taken.task_id = batch_.task_id;
  taken.lines.swap(batch_.lines);
  return taken;
}

}  // namespace cohort
