// GpuQuery: what the NVIDIA driver says of this machine's GPUs (models, memory, utilization and
// the links between them), behind an interface so `cohort doctor` and the agent can be tested
// with GPUs described by the test. OpenNvml (nvml_gpu_query.h) is the real one.
//
// Index i is the i-th GPU in PCI bus order, the driver's order and the agent's slot i.
//
// Thread-safety: one thread at a time per object.
#ifndef COHORT_RUNTIME_GPU_GPU_QUERY_H_
#define COHORT_RUNTIME_GPU_GPU_QUERY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cohort {

struct GpuDevice {
  std::string name;           // "NVIDIA H100 80GB HBM3"
  std::string uuid;           // "GPU-6f1f..."
  std::string pci_bus_id;     // "00000000:1B:00.0"
  uint64_t memory_total = 0;  // bytes
};

// One reading: utilization over the driver's last sample period (percent of time a kernel ran),
// and memory in use now.
struct GpuUsage {
  uint32_t utilization_percent = 0;
  uint64_t memory_used = 0;   // bytes
  uint64_t memory_total = 0;  // bytes
};

// How two GPUs reach each other, as `nvidia-smi topo -m` names it: NVLink, or the closest PCIe
// point they share.
enum class GpuPath {
  kNvLink,      // NV: NVLink
  kPcieSwitch,  // PIX / PXB: one or more PCIe switches, no host bridge
  kHostBridge,  // PHB: a PCIe host bridge
  kNumaNode,    // NODE: host bridges within one NUMA node
  kSystem,      // SYS: across NUMA nodes (the SMP interconnect)
  kUnknown,
};

class GpuQuery {
 public:
  virtual ~GpuQuery() = default;
  virtual absl::StatusOr<std::string> DriverVersion() = 0;
  virtual absl::StatusOr<std::vector<GpuDevice>> Devices() = 0;
  virtual absl::StatusOr<GpuUsage> Usage(uint32_t index) = 0;
  virtual absl::StatusOr<GpuPath> Path(uint32_t a, uint32_t b) = 0;
};

// "NV", "PIX", "PHB", "NODE", "SYS", "?": the column names of `nvidia-smi topo -m`.
const char* GpuPathName(GpuPath path);

}  // namespace cohort

#endif  // COHORT_RUNTIME_GPU_GPU_QUERY_H_
