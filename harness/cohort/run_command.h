// `cohort run`: trains an experiment on this machine with an embedded orchestrator.
//
//   cohort run EXPERIMENT.yaml [--output DIR] [--set KEY=VALUE]... [--resume DIR]
//
// It validates the config, creates the run folder (see run_folder.h), spawns the trial's worker
// as a separate process (a crashing plugin becomes a trial error, never a crashed CLI), shows
// live progress, records metrics and checkpoints, applies checkpoint retention, restarts a failed
// worker from its latest checkpoint up to max_restarts times, and on Ctrl-C asks the worker to
// checkpoint and stop (a second Ctrl-C kills it). `--resume DIR` continues a run folder from its
// latest checkpoint. Exit status: 0 when every trial completed, 1 on an error, 2 on bad usage,
// 130 when stopped by an interrupt.
#ifndef COHORT_HARNESS_COHORT_RUN_COMMAND_H_
#define COHORT_HARNESS_COHORT_RUN_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

int RunRunCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_COMMAND_H_
