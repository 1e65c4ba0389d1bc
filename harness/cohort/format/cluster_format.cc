#include "harness/cohort/format/cluster_format.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/cohort/format/text_table.h"

namespace cohort {

std::string FormatTaskListing(const TaskListing& table) {
  // The JOB column only where tasks run on a batch system's jobs (`--resource-manager slurm`).
  const bool jobs = std::any_of(table.tasks.begin(), table.tasks.end(),
                                [](const TaskRow& task) { return !task.job.empty(); });
  std::vector<std::string> header = {"TASK", "EXPERIMENT", "TRIAL", "SLOTS", "STATE", "AGENTS"};
  if (jobs) header.push_back("JOB");
  header.push_back("REASON");
  TextTable text(header);
  for (const TaskRow& task : table.tasks) {
    std::vector<std::string> row = {
        absl::StrCat(task.task_id),
        absl::StrCat(task.experiment_id),
        absl::StrCat(task.trial_id),
        absl::StrCat(task.slots),
        std::string(TaskRowStateName(task.state)),
        task.agents.empty() ? "-" : absl::StrJoin(task.agents, ","),
    };
    if (jobs) row.push_back(task.job.empty() ? "-" : task.job);
    row.push_back(task.state == TaskRowState::kQueued ? task.reason : "");
    text.AddRow(row);
  }
  return text.Render();
}

std::string FormatAgentTable(const AgentTable& table) {
  TextTable text({"AGENT", "HOST", "SLOTS", "BUSY", "CONNECTED", "TASKS"});
  for (const AgentRow& agent : table.agents) {
    text.AddRow({
        agent.agent_id,
        agent.hostname,
        absl::StrCat(agent.slots),
        absl::StrCat(agent.busy_slots),
        agent.connected ? "yes" : "no",
        agent.task_ids.empty() ? "-" : absl::StrJoin(agent.task_ids, ","),
    });
  }
  return text.Render();
}

std::string FormatLogLine(const TrialLogLine& line) {
  if (line.orchestrator_line) return line.text;
  return absl::StrCat("[rank ", line.rank, "] ", line.text);
}

}  // namespace cohort
