// The agent's Prometheus page (`cohort agent --metrics-port`): what it offers and runs, built
// from a snapshot the agent takes on its loop. Every sample carries the agent's id as `agent`.
//
//   cohort_agent_slots                      slots offered
//   cohort_agent_slots_busy                 slots held by tasks
//   cohort_agent_registered                 1 once the orchestrator acknowledged it, else 0
//   cohort_agent_orchestrator_connected     1 while the connection to the orchestrator is up
//   cohort_agent_orchestrator_silence_seconds  since the orchestrator's last message (absent
//                                           before the first)
//   cohort_agent_tasks                      tasks it runs
//   cohort_agent_task_records_total         {task, trial}: records trained, from the task's latest
//                                           progress (a counter: rate() gives records/s)
//   cohort_agent_task_heartbeat_age_seconds {task, trial}: the longest a rank of it has been
//                                           silent (absent until a rank said hello)
//   cohort_agent_task_exchanged_bytes_total {task, trial}: bytes its reporting rank handed to the
//                                           gradient collectives (a counter)
//   cohort_agent_gpu_utilization_percent    {gpu, model}: each GPU slot's latest NVML reading
//   cohort_agent_gpu_memory_used_bytes      {gpu, model}
//   cohort_agent_gpu_memory_total_bytes     {gpu, model}
//
// Thread-safety: pure function.
#ifndef COHORT_RUNTIME_AGENT_AGENT_METRICS_H_
#define COHORT_RUNTIME_AGENT_AGENT_METRICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cohort {

struct AgentMetricsSnapshot {
  struct Task {
    uint64_t task_id = 0;
    uint64_t trial_id = 0;
    std::optional<uint64_t> records;  // from its latest progress; absent before any
    std::optional<double> heartbeat_age_seconds;
    uint64_t exchanged_bytes = 0;
  };
  std::string agent_id;
  uint32_t slots = 0;
  uint32_t busy_slots = 0;
  bool registered = false;
  bool orchestrator_connected = false;
  std::optional<double> orchestrator_silence_seconds;
  std::vector<Task> tasks;
  struct Gpu {
    uint32_t gpu = 0;  // device index (PCI bus order)
    std::string model;
    uint32_t utilization_percent = 0;
    uint64_t memory_used = 0;
    uint64_t memory_total = 0;
  };
  std::vector<Gpu> gpus;  // GPU slots read so far (none without NVML)
};

std::string AgentMetricsPage(const AgentMetricsSnapshot& snapshot);

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_AGENT_METRICS_H_
