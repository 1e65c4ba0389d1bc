// WorkerDevice: the device of a worker's slot and what the worker needs there. The agent names
// the slot's device in COHORT_DEVICE: "cuda:0" on a GPU slot (whose CUDA_VISIBLE_DEVICES leaves
// the worker that one GPU), "cpu" on a CPU slot; unset means "cpu". On a GPU the CUDA exchange
// module is opened on the device (its compute stream is the plugin's, cohort_trial_context.stream;
// its communication stream NCCL's), and the CUDA optimizer module's kernels, which step the
// built-in optimizer on the compute stream.
//
//   absl::StatusOr<WorkerDevice> device = OpenWorkerDevice(std::getenv("COHORT_DEVICE"));
//   host.context.device = device->device;
//   host.context.stream = device->stream();
//
// Thread-safety: as DeviceExchange.
#ifndef COHORT_RUNTIME_WORKER_WORKER_DEVICE_H_
#define COHORT_RUNTIME_WORKER_WORKER_DEVICE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "cohort/plugin.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/exchange/device_exchange.h"
#include "runtime/optim/device_update_kernels.h"

namespace cohort {

struct WorkerDevice {
  cohort_device device = {COHORT_DEVICE_CPU, 0};
  std::unique_ptr<DeviceExchange> cuda;  // set on a GPU
  // Set on a GPU, enqueueing on cuda's compute stream (so declared after it: destroyed first).
  std::unique_ptr<DeviceUpdateKernels> update_kernels;

  // The plugin's stream: the CUDA compute stream, or nullptr on the CPU.
  cohort_stream* stream() const {
    return cuda ? static_cast<cohort_stream*>(cuda->compute_stream()) : nullptr;
  }
};

// The device `variable` names (nullptr or "" for the CPU), opened. INVALID_ARGUMENT for a value
// that is not a device; UNAVAILABLE, naming the device and why, when a GPU cannot be used.
absl::StatusOr<WorkerDevice> OpenWorkerDevice(const char* variable);

// Whether any block of `arena` is in device memory (the plugin put tensors on the GPU).
bool HasDeviceBlocks(const TensorArena& arena);

}  // namespace cohort

#endif  // COHORT_RUNTIME_WORKER_WORKER_DEVICE_H_
