#include "harness/cohort/commands/doctor_command.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "harness/cohort/doctor/doctor_findings.h"
#include "harness/cohort/process/entrypoint.h"
#include "runtime/agent/gpu_slots.h"
#include "runtime/arena/cuda/cuda_memory_module.h"
#include "runtime/gpu/nvml_gpu_query.h"

extern char** environ;

namespace cohort {
namespace {

constexpr char kDoctorUsage[] =
    "usage: cohort doctor\n"
    "\n"
    "Checks whether this host can run GPU trials and explains what stands in the way: the\n"
    "NVIDIA driver and its GPUs, what CUDA sees (a stale CUDA_VISIBLE_DEVICES), mixed GPU\n"
    "models, the links between GPUs, NCCL settings, host memory per GPU, Cohort's runtime\n"
    "modules and the plugin folders. Exits 0 when GPU trials can run, 1 when they cannot.\n";

std::vector<std::string> FolderNames(const std::filesystem::path& folder) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

uint64_t HostMemory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib * 1024;
  }
  return 0;
}

// What the CUDA runtime sees, through the CUDA memory module (the cohort binary never links it).
absl::StatusOr<int> CudaDevices() {
  absl::StatusOr<void*> module = OpenRuntimeModule(RuntimeModuleId::kCudaMemory);
  if (!module.ok()) return module.status();
  absl::StatusOr<void*> count =
      RuntimeModuleSymbol(*module, COHORT_CUDA_DEVICE_COUNT_SYMBOL, "CUDA memory");
  if (!count.ok()) return count.status();
  char error[512] = {};
  const int devices = reinterpret_cast<cohort_cuda_device_count_fn>(*count)(error, sizeof error);
  if (devices < 0) return absl::UnavailableError(error);
  return devices;
}

int PluginsIn(const std::string& folder) {
  std::error_code error;
  if (!std::filesystem::is_directory(folder, error)) return -1;
  int count = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder, error)) {
    if (entry.path().extension() == ".so") ++count;
  }
  return count;
}

HostFacts GatherHostFacts() {
  HostFacts facts;
  absl::StatusOr<std::unique_ptr<GpuQuery>> nvml = OpenNvml();
  facts.driver = nvml.status();
  if (nvml.ok()) {
    GpuQuery& gpus = **nvml;
    if (absl::StatusOr<std::string> version = gpus.DriverVersion(); version.ok()) {
      facts.driver_version = *version;
    }
    if (absl::StatusOr<std::vector<GpuDevice>> devices = gpus.Devices(); devices.ok()) {
      facts.gpus = *devices;
    } else {
      facts.driver = devices.status();
    }
    const size_t n = facts.gpus.size();
    facts.paths.assign(n, std::vector<GpuPath>(n, GpuPath::kUnknown));
    for (uint32_t a = 0; a < n; ++a) {
      for (uint32_t b = 0; b < n; ++b) {
        if (a == b) continue;
        if (absl::StatusOr<GpuPath> path = gpus.Path(a, b); path.ok()) facts.paths[a][b] = *path;
      }
    }
  }
  facts.proc_gpus = DetectGpuSlots().size();
  facts.cuda_built = !RuntimeModules().empty();
  if (facts.cuda_built) facts.cuda_devices = CudaDevices();
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"))
    facts.cuda_visible_devices = visible;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    absl::string_view entry = *variable;
    if (!absl::StartsWith(entry, "NCCL_")) continue;
    const size_t equals = entry.find('=');
    if (equals == absl::string_view::npos) continue;
    facts.nccl_env[std::string(entry.substr(0, equals))] = std::string(entry.substr(equals + 1));
  }
  facts.interfaces = FolderNames("/sys/class/net");
  facts.infiniband = FolderNames("/sys/class/infiniband");
  facts.host_memory = HostMemory();
  facts.modules = CheckRuntimeModules();
  for (const std::string& folder : PluginFolders()) {
    facts.plugin_folders.emplace_back(folder, PluginsIn(folder));
  }
  return facts;
}

}  // namespace

int RunDoctorCommand(const std::vector<std::string>& args) {
  if (!args.empty()) {
    const bool help = args[0] == "--help" || args[0] == "-h";
    std::fputs(kDoctorUsage, help ? stdout : stderr);
    return help ? 0 : 2;
  }
  const std::vector<DoctorFinding> findings = Diagnose(GatherHostFacts());
  const bool can = CanRunGpuTrials(findings);
  const bool no_gpu =
      findings.front().topic == "driver" && findings.front().severity == Severity::kProblem;
  std::printf("%s\n\n", can      ? "This host can run GPU trials."
                        : no_gpu ? "This host has no usable NVIDIA GPU: it cannot run GPU trials "
                                   "(CPU trials run as usual)."
                                 : "This host cannot run GPU trials; the PROBLEM lines say why.");
  for (const DoctorFinding& finding : findings) std::fputs(FormatFinding(finding).c_str(), stdout);
  return can ? 0 : 1;
}

}  // namespace cohort
