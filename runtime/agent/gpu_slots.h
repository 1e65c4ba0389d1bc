// GPU slots: the NVIDIA GPUs of this machine, found through the driver's /proc files, so the agent
// needs neither the CUDA runtime nor a device context to count them.
//
// The driver lists one folder per GPU, named by its PCI bus id, under /proc/driver/nvidia/gpus/;
// each has an `information` file with a "Model:" line. Slot i is the i-th GPU in PCI bus order,
// and its device_id is i: the CUDA ordinal when CUDA_DEVICE_ORDER=PCI_BUS_ID, which the agent sets
// for the workers of GPU slots (CUDA's default order, fastest first, may differ).
//
//   std::vector<AgentSlot> gpus = DetectGpuSlots();   // empty without the NVIDIA driver
//   options.slots = gpus.empty() ? CpuSlots(cores) : gpus;
//
// Thread-safety: reads files only; safe from any thread.
#ifndef COHORT_RUNTIME_AGENT_GPU_SLOTS_H_
#define COHORT_RUNTIME_AGENT_GPU_SLOTS_H_

#include <string>
#include <vector>

#include "runtime/control/control_messages.h"

namespace cohort {

inline constexpr char kNvidiaGpusFolder[] = "/proc/driver/nvidia/gpus";

// One GPU slot per folder of `gpus_folder`, in folder-name (PCI bus id) order: index and
// device_id 0, 1, ..., kind kGpu, name the model ("NVIDIA H100 80GB HBM3"), or "NVIDIA GPU" when
// the information file has none. Empty when the folder is missing or empty.
std::vector<AgentSlot> DetectGpuSlots(const std::string& gpus_folder = kNvidiaGpusFolder);

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_GPU_SLOTS_H_
