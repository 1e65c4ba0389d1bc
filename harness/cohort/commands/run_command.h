// `cohort run`: trains an experiment on this machine with an embedded orchestrator.
//
//   cohort run EXPERIMENT.yaml [--output DIR] [--set KEY=VALUE]... [--resume DIR]
//
// It validates the config (a bad one creates no run folder), creates the run folder (see
// run_folder.h) and trains the experiment with RunEmbedded (embedded_run.h): an orchestrator and
// an agent in this process, whose workers are separate processes (a crashing plugin becomes a
// trial error, never a crashed CLI). `--resume DIR` continues a run folder, each trial from its
// latest checkpoint. Exit status: 0 when the experiment completed, 1 on an error, 2 on bad usage,
// 130 when stopped by an interrupt.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_RUN_COMMAND_H_
#define COHORT_HARNESS_COHORT_COMMANDS_RUN_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

int RunRunCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_RUN_COMMAND_H_
