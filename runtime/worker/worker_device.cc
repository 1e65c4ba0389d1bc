#include "runtime/worker/worker_device.h"

#include "absl/strings/str_cat.h"
#include "runtime/arena/device_memory.h"

namespace cohort {

absl::StatusOr<WorkerDevice> OpenWorkerDevice(const char* variable) {
  WorkerDevice opened;
  if (variable == nullptr || variable[0] == '\0') return opened;
  absl::StatusOr<cohort_device> device = ParseDeviceName(variable);
  if (!device.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("COHORT_DEVICE: ", device.status().message()));
  }
  opened.device = *device;
  if (device->kind == COHORT_DEVICE_CUDA) {
    absl::StatusOr<std::unique_ptr<DeviceExchange>> cuda = OpenCudaExchange(device->ordinal);
    if (!cuda.ok()) {
      return absl::UnavailableError(
          absl::StrCat("this worker's slot is ", variable,
                       ", but that GPU cannot be used: ", cuda.status().message()));
    }
    absl::StatusOr<std::unique_ptr<DeviceUpdateKernels>> kernels =
        OpenCudaUpdateKernels(device->ordinal, (*cuda)->compute_stream());
    if (!kernels.ok()) {
      return absl::UnavailableError(
          absl::StrCat("this worker's slot is ", variable,
                       ", but the optimizer cannot run on that GPU: ", kernels.status().message()));
    }
    opened.cuda = *std::move(cuda);
    opened.update_kernels = *std::move(kernels);
  }
  return opened;
}

bool HasDeviceBlocks(const TensorArena& arena) {
  for (const ArenaBlock& block : arena.blocks()) {
    if (block.device.kind != COHORT_DEVICE_CPU) return true;
  }
  return false;
}

}  // namespace cohort
