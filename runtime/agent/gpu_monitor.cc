#include "runtime/agent/gpu_monitor.h"

#include <algorithm>

namespace cohort {

GpuMonitor::GpuMonitor(absl::StatusOr<std::unique_ptr<GpuQuery>> query)
    : unavailable_(query.status()) {
  if (query.ok()) query_ = *std::move(query);
}

void GpuMonitor::Sample(const std::vector<AgentSlot>& slots) {
  if (query_ == nullptr) return;
  for (const AgentSlot& slot : slots) {
    if (slot.kind != SlotKind::kGpu || slot.device_id < 0) continue;
    const uint32_t gpu = static_cast<uint32_t>(slot.device_id);
    absl::StatusOr<GpuUsage> usage = query_->Usage(gpu);
    if (!usage.ok()) continue;
    latest_[gpu] = *usage;
    Interval& interval = intervals_[gpu];
    interval.utilization_sum += usage->utilization_percent;
    ++interval.readings;
  }
}

std::vector<GpuReading> GpuMonitor::Take(const std::vector<RankAssignment>& ranks,
                                         const std::vector<AgentSlot>& slots) {
  std::vector<GpuReading> readings;
  for (const RankAssignment& rank : ranks) {
    auto slot_of = std::find_if(slots.begin(), slots.end(),
                                [&](const AgentSlot& s) { return s.index == rank.slot_index; });
    if (slot_of == slots.end()) continue;
    const AgentSlot& slot = *slot_of;
    if (slot.kind != SlotKind::kGpu || slot.device_id < 0) continue;
    const uint32_t gpu = static_cast<uint32_t>(slot.device_id);
    auto latest = latest_.find(gpu);
    if (latest == latest_.end()) continue;
    Interval& interval = intervals_[gpu];
    const double utilization = interval.readings > 0 ? interval.utilization_sum / interval.readings
                                                     : latest->second.utilization_percent;
    readings.push_back(GpuReading{rank.rank, gpu, slot.name, utilization,
                                  latest->second.memory_used, latest->second.memory_total});
    interval = Interval{};
  }
  return readings;
}

}  // namespace cohort
