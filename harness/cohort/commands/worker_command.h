// `cohort worker`: the per-slot worker process that `cohort run` and `cohort agent` spawn (not
// meant to be typed).
//
//   cohort worker --run-dir RUN --plugin PATH --trial-id N --rank R --size S --attempt A
//                 --endpoint ENDPOINT --checkpoint-root DIR [--resume CHECKPOINT_ID]
//                 [--rendezvous ENDPOINT --rendezvous-prefix PREFIX]
//
// It reads RUN/config.yaml, loads the plugin, builds the model, the optimizer and the trial loop,
// restores the checkpoint when asked, trains, and reports everything to the supervisor at
// ENDPOINT. With S > 1 it forms the trial's Gloo group through the rendezvous store: the
// supervisor's, or, with --rendezvous, the one where the ranks of a task spanning agents meet
// (keys under PREFIX; Gloo binds $COHORT_GLOO_HOSTNAME, default 127.0.0.1). It ends with a
// TrialFinished message; exit status 0 when the trial completed or stopped on request, 1 on an
// error. SIGINT is ignored (the supervisor decides); SIGTERM asks for a checkpoint and a clean
// stop, like a StopCommand.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_WORKER_COMMAND_H_
#define COHORT_HARNESS_COHORT_COMMANDS_WORKER_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

int RunWorkerCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_WORKER_COMMAND_H_
