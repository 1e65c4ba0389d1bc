// GpuMonitor: the agent's readings of its GPUs (through a GpuQuery, NVML in production), for its
// Prometheus page and for the training reports of the tasks on them.
//
//   GpuMonitor monitor(OpenNvml());          // no query: nothing is measured
//   monitor.Sample();                        // about once a second, on the agent's loop
//   report.gpus = monitor.Take(task.ranks, slots);
//
// Take gives, per GPU slot of the ranks, the mean utilization of the readings since that GPU's
// previous Take (the interval of one training report), and the latest memory in use.
//
// Thread-safety: one thread (the agent's loop).
#ifndef COHORT_RUNTIME_AGENT_GPU_MONITOR_H_
#define COHORT_RUNTIME_AGENT_GPU_MONITOR_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/control/control_messages.h"
#include "runtime/gpu/gpu_query.h"

namespace cohort {

class GpuMonitor {
 public:
  // A query that could not be opened leaves the monitor empty; why is in unavailable().
  explicit GpuMonitor(absl::StatusOr<std::unique_ptr<GpuQuery>> query);

  // Reads every GPU `slots` names (GPU slots only). A GPU that cannot be read is skipped.
  void Sample(const std::vector<AgentSlot>& slots);

  // The GPU slots of `ranks` (AgentSlot::index of `slots`), one reading each, in rank order; empty
  // without a query or before the first Sample. Starts a new interval for those GPUs.
  std::vector<GpuReading> Take(const std::vector<RankAssignment>& ranks,
                               const std::vector<AgentSlot>& slots);

  // The latest reading of each GPU sampled, by device index.
  const std::map<uint32_t, GpuUsage>& latest() const { return latest_; }
  // Why nothing is measured (no driver); OK when the query opened.
  const absl::Status& unavailable() const { return unavailable_; }

 private:
  struct Interval {
    double utilization_sum = 0;
    uint32_t readings = 0;
  };
  std::unique_ptr<GpuQuery> query_;
  absl::Status unavailable_;
  std::map<uint32_t, GpuUsage> latest_;
  std::map<uint32_t, Interval> intervals_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_GPU_MONITOR_H_
