#include "runtime/agent/agent_metrics.h"

#include "absl/strings/str_cat.h"
#include "runtime/observe/prometheus_text.h"

namespace cohort {

std::string AgentMetricsPage(const AgentMetricsSnapshot& snapshot) {
  PrometheusText page;
  const PrometheusText::Labels agent = {{"agent", snapshot.agent_id}};
  page.Gauge("cohort_agent_slots", "Slots this agent offers.", snapshot.slots, agent);
  page.Gauge("cohort_agent_slots_busy", "Slots held by the agent's tasks.", snapshot.busy_slots,
             agent);
  page.Gauge("cohort_agent_registered", "1 once the orchestrator acknowledged the agent, else 0.",
             snapshot.registered ? 1 : 0, agent);
  page.Gauge("cohort_agent_orchestrator_connected",
             "1 while the connection to the orchestrator is up (ZeroMQ's handshake done, not "
             "lost since), else 0.",
             snapshot.orchestrator_connected ? 1 : 0, agent);
  if (snapshot.orchestrator_silence_seconds) {
    page.Gauge("cohort_agent_orchestrator_silence_seconds",
               "Seconds since the orchestrator's last message.",
               *snapshot.orchestrator_silence_seconds, agent);
  }
  page.Gauge("cohort_agent_tasks", "Tasks the agent runs.",
             static_cast<double>(snapshot.tasks.size()), agent);
  const auto labels = [&](const AgentMetricsSnapshot::Task& task) {
    return PrometheusText::Labels{{"agent", snapshot.agent_id},
                                  {"task", absl::StrCat(task.task_id)},
                                  {"trial", absl::StrCat(task.trial_id)}};
  };
  for (const AgentMetricsSnapshot::Task& task : snapshot.tasks) {
    if (!task.records) continue;
    page.Counter("cohort_agent_task_records_total",
                 "Records a task has trained, from its latest progress (rate() gives records per "
                 "second).",
                 static_cast<double>(*task.records), labels(task));
  }
  for (const AgentMetricsSnapshot::Task& task : snapshot.tasks) {
    if (!task.heartbeat_age_seconds) continue;
    page.Gauge("cohort_agent_task_heartbeat_age_seconds",
               "The longest a rank of a task has gone without a heartbeat.",
               *task.heartbeat_age_seconds, labels(task));
  }
  for (const AgentMetricsSnapshot::Task& task : snapshot.tasks) {
    page.Counter("cohort_agent_task_exchanged_bytes_total",
                 "Bytes a task's reporting rank handed to its gradient collectives.",
                 static_cast<double>(task.exchanged_bytes), labels(task));
  }
  const auto gpu_labels = [&](const AgentMetricsSnapshot::Gpu& gpu) {
    return PrometheusText::Labels{
        {"agent", snapshot.agent_id}, {"gpu", absl::StrCat(gpu.gpu)}, {"model", gpu.model}};
  };
  for (const AgentMetricsSnapshot::Gpu& gpu : snapshot.gpus) {
    page.Gauge("cohort_agent_gpu_utilization_percent",
               "Percent of the last sample period a kernel ran on the GPU (NVML).",
               gpu.utilization_percent, gpu_labels(gpu));
  }
  for (const AgentMetricsSnapshot::Gpu& gpu : snapshot.gpus) {
    page.Gauge("cohort_agent_gpu_memory_used_bytes", "GPU memory in use (NVML).",
               static_cast<double>(gpu.memory_used), gpu_labels(gpu));
  }
  for (const AgentMetricsSnapshot::Gpu& gpu : snapshot.gpus) {
    page.Gauge("cohort_agent_gpu_memory_total_bytes", "GPU memory in all (NVML).",
               static_cast<double>(gpu.memory_total), gpu_labels(gpu));
  }
  return page.Text();
}

}  // namespace cohort
