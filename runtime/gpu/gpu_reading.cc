#include "runtime/gpu/gpu_reading.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace cohort {

std::optional<std::string> GpuImbalance(const std::vector<GpuReading>& gpus) {
  if (gpus.size() < 2) return std::nullopt;
  const auto [idlest, busiest] = std::minmax_element(
      gpus.begin(), gpus.end(),
      [](const GpuReading& a, const GpuReading& b) { return a.utilization < b.utilization; });
  if (busiest->utilization - idlest->utilization < kGpuImbalancePoints) return std::nullopt;
  auto describe = [](const GpuReading& g) {
    return absl::StrFormat("rank %u (GPU %u, %s) at %.0f%%", g.rank, g.gpu, g.name, g.utilization);
  };
  return absl::StrFormat(
      "unbalanced GPUs: %s, %s; every rank waits for the slowest at each exchange: look for "
      "another job on the busy GPU, mixed GPU models, or work only that rank does",
      describe(*busiest), describe(*idlest));
}

}  // namespace cohort
