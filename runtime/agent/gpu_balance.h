// GpuImbalance: whether the GPUs of one trial are unevenly busy. In data-parallel training every
// rank waits for the slowest at each exchange, so one GPU far busier than the others ("GPU 0 at
// 100%, the others at 60%") means the others idle: a slower card, a GPU shared with another job,
// or extra work on one rank.
//
//   if (std::optional<std::string> warning = GpuImbalance(report.gpus)) ...;
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_AGENT_GPU_BALANCE_H_
#define COHORT_RUNTIME_AGENT_GPU_BALANCE_H_

#include <optional>
#include <string>
#include <vector>

#include "runtime/control/worker_messages.h"

namespace cohort {

// Utilization points between the busiest and the idlest GPU from which a trial is unbalanced.
inline constexpr double kGpuImbalancePoints = 25;

// A warning naming the busiest and the idlest GPU when their mean utilization differs by
// kGpuImbalancePoints or more; nullopt for fewer than two GPUs or a balanced trial.
std::optional<std::string> GpuImbalance(const std::vector<GpuReading>& gpus);

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_GPU_BALANCE_H_
