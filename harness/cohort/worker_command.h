// `cohort worker`: the per-slot worker process that `cohort run` spawns (not meant to be typed).
//
//   cohort worker --run-dir RUN --plugin PATH --trial-id N --endpoint ENDPOINT
//                 --checkpoint-root DIR [--resume CHECKPOINT_ID]
//
// It reads RUN/config.yaml, loads the plugin, builds the model, the optimizer and the trial loop,
// restores the checkpoint when asked, trains, and reports everything to the supervisor at
// ENDPOINT. It ends with a TrialFinished message; exit status 0 when the trial completed or
// stopped on request, 1 on an error. SIGINT is ignored (the supervisor decides); SIGTERM asks
// for a checkpoint and a clean stop, like a StopCommand.
#ifndef COHORT_HARNESS_COHORT_WORKER_COMMAND_H_
#define COHORT_HARNESS_COHORT_WORKER_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

int RunWorkerCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_WORKER_COMMAND_H_
