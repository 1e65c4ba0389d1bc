// Diagnose: what `cohort doctor` concludes from the facts it gathered about an agent host, each
// finding with what to do about it. Pure, so tests feed it any host they describe.
//
//   HostFacts facts = ...;   // doctor_command.cc gathers them
//   for (const DoctorFinding& f : Diagnose(facts)) std::cout << FormatFinding(f);
//   return CanRunGpuTrials(findings) ? 0 : 1;
//
// The checks follow the usual causes of GPU training trouble: no driver or GPUs the driver does
// not show, a CUDA_VISIBLE_DEVICES that no longer matches the machine, mixed GPU models (a trial
// runs at its slowest GPU's pace), GPUs joined only through PCIe host bridges, NCCL settings that
// name no interface or turn fast paths off, little host memory per GPU, and runtime modules or
// plugins that do not load.
#ifndef COHORT_HARNESS_COHORT_DOCTOR_DOCTOR_FINDINGS_H_
#define COHORT_HARNESS_COHORT_DOCTOR_DOCTOR_FINDINGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/gpu/gpu_query.h"
#include "runtime/module/runtime_module_check.h"

namespace cohort {

struct HostFacts {
  absl::Status driver;  // NVML opened (not OK: no driver, with the reason)
  std::string driver_version;
  std::vector<GpuDevice> gpus;              // what the driver lists, PCI bus order
  std::vector<std::vector<GpuPath>> paths;  // paths[a][b] for a != b
  size_t proc_gpus = 0;                     // folders in /proc/driver/nvidia/gpus (agent slots)
  bool cuda_built = false;                  // the build has the CUDA modules
  absl::StatusOr<int> cuda_devices = 0;     // what the CUDA runtime sees in this environment
  std::optional<std::string> cuda_visible_devices;
  std::map<std::string, std::string> nccl_env;  // every NCCL_* variable set
  std::vector<std::string> interfaces;          // network interfaces (/sys/class/net)
  std::vector<std::string> infiniband;          // /sys/class/infiniband
  uint64_t host_memory = 0;                     // bytes (MemTotal)
  std::vector<RuntimeModuleLoad> modules;
  std::vector<std::pair<std::string, int>> plugin_folders;  // folder, plugins in it (-1: missing)
};

enum class Severity { kOk, kNote, kWarning, kProblem };

struct DoctorFinding {
  Severity severity;
  std::string topic;  // "driver", "cuda", "models", "links", "nccl", "memory", "modules", "plugins"
  std::string what;   // what was found, one or more lines
  std::string advice;  // what to do; empty when nothing
};

std::vector<DoctorFinding> Diagnose(const HostFacts& facts);

// No finding is a problem: the host can run GPU trials.
bool CanRunGpuTrials(const std::vector<DoctorFinding>& findings);

// "[warning] models: ...\n  what to do: ...\n".
std::string FormatFinding(const DoctorFinding& finding);

// The GPUs CUDA_VISIBLE_DEVICES names that the driver does not list (an index past the last GPU,
// or a UUID no GPU has), in its order; CUDA stops at the first of them.
std::vector<std::string> StaleVisibleDevices(const std::string& value,
                                             const std::vector<GpuDevice>& gpus);

// Whether NCCL_SOCKET_IFNAME's `value` selects at least one of `interfaces`, by NCCL's rules:
// comma-separated prefixes, '=' first for exact names, '^' first to exclude those instead.
bool SocketIfnameMatches(const std::string& value, const std::vector<std::string>& interfaces);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_DOCTOR_DOCTOR_FINDINGS_H_
