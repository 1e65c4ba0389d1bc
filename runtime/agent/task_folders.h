// What the agent keeps of its tasks' folders (<work_dir>/tasks/<task id>/, written by TaskRun:
// config.yaml and log.txt) once the tasks ended.
//
// A folder is needed while its task runs: the workers read config.yaml as they start and the
// agent appends their output to log.txt. Once the task ended, the orchestrator holds its trial's
// log, and the folder stays only for a look on this host; an agent that runs for months would
// otherwise keep one folder per task it ever ran. So the folders of the newest ended tasks stay
// (by task id: the orchestrator hands them out in order) and older ones go.
//
//   PrunedTaskFolders pruned = PruneEndedTaskFolders(work_dir, running_task_ids, 32);
//
// Left alone: the folders of running tasks, any folder holding a checkpoints/ folder (a task whose
// StartTask named no checkpoint root keeps its checkpoints there), and entries whose name is not
// a task id.
//
// Thread-safety: a function of the file system; one caller per work dir at a time.
#ifndef COHORT_RUNTIME_AGENT_TASK_FOLDERS_H_
#define COHORT_RUNTIME_AGENT_TASK_FOLDERS_H_

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace cohort {

// How many ended tasks' folders an agent keeps by default (`cohort agent --keep-task-folders`).
inline constexpr size_t kEndedTaskFoldersKept = 32;

struct PrunedTaskFolders {
  std::vector<uint64_t> removed;      // task ids whose folders went, ascending
  std::vector<std::string> problems;  // what could not be listed or removed, and why
};

// Removes the folders under <work_dir>/tasks/ of the tasks not in `running`, all but the `keep`
// of highest id among them (see above for what is left alone). A work dir without tasks/ holds
// nothing to remove.
PrunedTaskFolders PruneEndedTaskFolders(const std::string& work_dir,
                                        const std::set<uint64_t>& running, size_t keep);

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_TASK_FOLDERS_H_
