// GPU slots: the NVIDIA GPUs of this machine, found through the driver's /proc files, so the agent
// needs neither the CUDA runtime nor a device context to count them.
//
// The driver lists one folder per GPU, named by its PCI bus id, under /proc/driver/nvidia/gpus/;
// each has an `information` file with "Model:" and "GPU UUID:" lines. The i-th GPU in PCI bus
// order has device_id i: the CUDA ordinal when CUDA_DEVICE_ORDER=PCI_BUS_ID, which the agent sets
// for the workers of GPU slots (CUDA's default order, fastest first, may differ).
//
//   absl::StatusOr<std::vector<AgentSlot>> gpus = VisibleGpuSlots(getenv("CUDA_VISIBLE_DEVICES"));
//   options.slots = gpus->empty() ? CpuSlots(cores) : *gpus;
//
// Thread-safety: reads files only; safe from any thread.
#ifndef COHORT_RUNTIME_AGENT_GPU_SLOTS_H_
#define COHORT_RUNTIME_AGENT_GPU_SLOTS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/control/control_messages.h"

namespace cohort {

inline constexpr char kNvidiaGpusFolder[] = "/proc/driver/nvidia/gpus";

// One GPU the driver lists.
struct DetectedGpu {
  std::string bus_id;  // the folder's name, e.g. "0000:3b:00.0"
  std::string model;   // "NVIDIA H100 80GB HBM3", or "NVIDIA GPU" when the file has none
  std::string uuid;    // "GPU-8932f937-...", or "" when the file has none
};

// Every GPU of `gpus_folder`, in folder-name (PCI bus id) order; empty when the folder is missing
// or empty.
std::vector<DetectedGpu> DetectGpus(const std::string& gpus_folder = kNvidiaGpusFolder);

// One GPU slot per GPU DetectGpus finds: index and device_id 0, 1, ..., kind kGpu, name the model.
std::vector<AgentSlot> DetectGpuSlots(const std::string& gpus_folder = kNvidiaGpusFolder);

// The GPU slots a process with CUDA_VISIBLE_DEVICES `visible` may use: with it unset (nullopt),
// DetectGpuSlots's; set, the GPUs it names, in its order, as CUDA shows them with
// CUDA_DEVICE_ORDER=PCI_BUS_ID. An entry is an index among the driver's GPUs in PCI bus order, or
// a UUID ("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", or a prefix of one that names one GPU); a
// negative index ends the list, as it does for CUDA ("-1" names none). Slot i is the i-th GPU
// named; its device_id stays the GPU's index in PCI bus order (what a worker is given). Where the
// driver lists no GPU, none, whatever `visible` says (a variable left from elsewhere is moot).
// INVALID_ARGUMENT, naming the entry and the GPUs the driver lists, for an index past the last
// GPU, a UUID that names no GPU or several, a MIG instance ("MIG-..."), anything else, or a GPU
// named twice.
absl::StatusOr<std::vector<AgentSlot>> VisibleGpuSlots(
    const std::optional<std::string>& visible, const std::string& gpus_folder = kNvidiaGpusFolder);

// CUDA_VISIBLE_DEVICES from this process's environment; nullopt when unset.
std::optional<std::string> CudaVisibleDevices();

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_GPU_SLOTS_H_
