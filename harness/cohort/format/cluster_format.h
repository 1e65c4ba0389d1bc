// What `cohort task list`, `cohort agent list` and `cohort trial logs` print, from the
// orchestrator's answers. Pure functions of their arguments.
//
//   std::fputs(FormatTaskListing(table).c_str(), stdout);
//   // TASK  EXPERIMENT  TRIAL  SLOTS  STATE    AGENTS  REASON
//   // 4     2           7      2      running  node-1
//   // 5     3           9      8      queued   -       needs 8 slots; the largest agent has 4
//
// Thread-safety: reentrant.
#ifndef COHORT_HARNESS_COHORT_FORMAT_CLUSTER_FORMAT_H_
#define COHORT_HARNESS_COHORT_FORMAT_CLUSTER_FORMAT_H_

#include <string>

#include "runtime/client/client_messages.h"

namespace cohort {

// A table TASK EXPERIMENT TRIAL SLOTS STATE AGENTS REASON, as Determined's `det task list`; the
// reason is a queued task's (why it waits), else empty.
std::string FormatTaskListing(const TaskListing& table);

// A table AGENT HOST SLOTS BUSY CONNECTED TASKS.
std::string FormatAgentTable(const AgentTable& table);

// "[rank 1] text", for stdout and stderr lines alike; the orchestrator's own lines ("[cohort]
// ...", of no rank) as they are.
std::string FormatLogLine(const TrialLogLine& line);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_FORMAT_CLUSTER_FORMAT_H_
