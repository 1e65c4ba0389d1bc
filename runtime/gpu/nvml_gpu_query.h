// OpenNvml: GpuQuery over NVML, the NVIDIA driver's management library, opened with dlopen at run
// time (libnvidia-ml.so.1, or $COHORT_NVML_LIBRARY) so no binary links it and every binary runs
// where there is no driver.
//
//   absl::StatusOr<std::unique_ptr<GpuQuery>> gpus = OpenNvml();
//   if (!gpus.ok()) ...;   // UNAVAILABLE: no driver, with the reason
//
// Only the long-stable NVML calls are used (init, device count and handles, name, UUID, PCI
// info, memory, utilization, topology, P2P status); their prototypes are declared in
// nvml_gpu_query.cc, so building needs no NVIDIA headers.
#ifndef COHORT_RUNTIME_GPU_NVML_GPU_QUERY_H_
#define COHORT_RUNTIME_GPU_NVML_GPU_QUERY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/gpu/gpu_query.h"

namespace cohort {

// UNAVAILABLE naming the library and the reason when NVML cannot be loaded or initialized.
absl::StatusOr<std::unique_ptr<GpuQuery>> OpenNvml();

}  // namespace cohort

#endif  // COHORT_RUNTIME_GPU_NVML_GPU_QUERY_H_
