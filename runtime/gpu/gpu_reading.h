// GpuReading: one GPU of a trial over a training report's interval, as the agent running its rank
// read it from the driver; and GpuImbalance, whether a trial's GPUs are unevenly busy. In
// data-parallel training every rank waits for the slowest at each exchange, so one GPU far busier
// than the others ("GPU 0 at 100%, the others at 60%") means the others idle: a slower card, a GPU
// shared with another job, or extra work on one rank.
//
//   if (std::optional<std::string> warning = GpuImbalance(report.gpus)) ...;
//
// Thread-safety: plain values and a pure function.
#ifndef COHORT_RUNTIME_GPU_GPU_READING_H_
#define COHORT_RUNTIME_GPU_GPU_READING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cohort {

// The mean utilization of the readings since the previous report, and memory in use at the latest.
struct GpuReading {
  uint32_t rank = 0;
  uint32_t gpu = 0;           // the GPU's index on its agent (PCI bus order)
  std::string name;           // its model
  double utilization = 0;     // percent of the time a kernel ran
  uint64_t memory_used = 0;   // bytes
  uint64_t memory_total = 0;  // bytes

  friend bool operator==(const GpuReading&, const GpuReading&) = default;
};

// Utilization points between the busiest and the idlest GPU from which a trial is unbalanced.
inline constexpr double kGpuImbalancePoints = 25;

// A warning naming the busiest and the idlest GPU when their mean utilization differs by
// kGpuImbalancePoints or more; nullopt for fewer than two GPUs or a balanced trial.
std::optional<std::string> GpuImbalance(const std::vector<GpuReading>& gpus);

}  // namespace cohort

#endif  // COHORT_RUNTIME_GPU_GPU_READING_H_
