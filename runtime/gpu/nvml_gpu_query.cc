#include "runtime/gpu/nvml_gpu_query.h"

#include <dlfcn.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace cohort {

namespace {

// NVML's C types, as nvml.h declares them.
using NvmlReturn = int;  // nvmlReturn_t: 0 is NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned int gpu, memory;
};
struct NvmlPciInfo {  // nvmlPciInfo_t, as nvmlDeviceGetPciInfo_v3 fills it
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
constexpr int kNvmlP2pCapsNvLink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kNvmlP2pStatusOk = 0;    // NVML_P2P_STATUS_OK

class NvmlGpuQuery final : public GpuQuery {
 public:
  explicit NvmlGpuQuery(void* library) : library_(library) {}
  ~NvmlGpuQuery() override {
    if (initialized_) shutdown_();
    ::dlclose(library_);
  }

  absl::Status Bind() {
    bool ok = Load(init_, "nvmlInit_v2") && Load(shutdown_, "nvmlShutdown") &&
              Load(error_string_, "nvmlErrorString") &&
              Load(driver_version_, "nvmlSystemGetDriverVersion") &&
              Load(count_, "nvmlDeviceGetCount_v2") &&
              Load(handle_, "nvmlDeviceGetHandleByIndex_v2") && Load(name_, "nvmlDeviceGetName") &&
              Load(uuid_, "nvmlDeviceGetUUID") && Load(pci_, "nvmlDeviceGetPciInfo_v3") &&
              Load(memory_, "nvmlDeviceGetMemoryInfo") &&
              Load(utilization_, "nvmlDeviceGetUtilizationRates") &&
              Load(ancestor_, "nvmlDeviceGetTopologyCommonAncestor") &&
              Load(p2p_, "nvmlDeviceGetP2PStatus");
    if (!ok) return absl::UnavailableError(absl::StrCat("NVML lacks ", missing_));
    if (NvmlReturn r = init_(); r != 0) return Failed("nvmlInit", r);
    initialized_ = true;
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> DriverVersion() override {
    char version[96] = {};
    if (NvmlReturn r = driver_version_(version, sizeof version); r != 0) {
      return Failed("nvmlSystemGetDriverVersion", r);
    }
    return std::string(version);
  }

  absl::StatusOr<std::vector<GpuDevice>> Devices() override {
    unsigned int count = 0;
    if (NvmlReturn r = count_(&count); r != 0) return Failed("nvmlDeviceGetCount", r);
    std::vector<GpuDevice> devices;
    for (unsigned int i = 0; i < count; ++i) {
      absl::StatusOr<NvmlDevice> device = Handle(i);
      if (!device.ok()) return device.status();
      GpuDevice d;
      char text[128] = {};
      if (name_(*device, text, sizeof text) == 0) d.name = text;
      if (uuid_(*device, text, sizeof text) == 0) d.uuid = text;
      NvmlPciInfo pci = {};
      if (pci_(*device, &pci) == 0) d.pci_bus_id = pci.bus_id;
      NvmlMemory memory = {};
      if (memory_(*device, &memory) == 0) d.memory_total = memory.total;
      devices.push_back(std::move(d));
    }
    return devices;
  }

  absl::StatusOr<GpuUsage> Usage(uint32_t index) override {
    absl::StatusOr<NvmlDevice> device = Handle(index);
    if (!device.ok()) return device.status();
    NvmlUtilization utilization = {};
    if (NvmlReturn r = utilization_(*device, &utilization); r != 0) {
      return Failed("nvmlDeviceGetUtilizationRates", r);
    }
    NvmlMemory memory = {};
    if (NvmlReturn r = memory_(*device, &memory); r != 0)
      return Failed("nvmlDeviceGetMemoryInfo", r);
    return GpuUsage{utilization.gpu, memory.used, memory.total};
  }

  absl::StatusOr<GpuPath> Path(uint32_t a, uint32_t b) override {
    absl::StatusOr<NvmlDevice> first = Handle(a);
    if (!first.ok()) return first.status();
    absl::StatusOr<NvmlDevice> second = Handle(b);
    if (!second.ok()) return second.status();
    int status = -1;
    if (p2p_(*first, *second, kNvmlP2pCapsNvLink, &status) == 0 && status == kNvmlP2pStatusOk) {
      return GpuPath::kNvLink;
    }
    int level = -1;  // nvmlGpuTopologyLevel_t
    if (NvmlReturn r = ancestor_(*first, *second, &level); r != 0) {
      return Failed("nvmlDeviceGetTopologyCommonAncestor", r);
    }
    if (level <= 20) return GpuPath::kPcieSwitch;  // INTERNAL, SINGLE, MULTIPLE
    if (level == 30) return GpuPath::kHostBridge;
    if (level == 40) return GpuPath::kNumaNode;
    if (level == 50) return GpuPath::kSystem;
    return GpuPath::kUnknown;
  }

 private:
  template <typename Fn>
  bool Load(Fn& fn, const char* symbol) {
    fn = reinterpret_cast<Fn>(::dlsym(library_, symbol));
    if (fn == nullptr && missing_.empty()) missing_ = symbol;
    return fn != nullptr;
  }

  absl::StatusOr<NvmlDevice> Handle(uint32_t index) {
    NvmlDevice device = nullptr;
    if (NvmlReturn r = handle_(index, &device); r != 0) {
      return Failed(absl::StrCat("nvmlDeviceGetHandleByIndex(", index, ")").c_str(), r);
    }
    return device;
  }

  absl::Status Failed(const char* call, NvmlReturn r) const {
    const char* text = error_string_ != nullptr ? error_string_(r) : nullptr;
    return absl::UnavailableError(
        absl::StrCat(call, " failed: ", text != nullptr ? text : "unknown error", " (", r, ")"));
  }

  void* library_;
  bool initialized_ = false;
  std::string missing_;
  NvmlReturn (*init_)() = nullptr;
  NvmlReturn (*shutdown_)() = nullptr;
  const char* (*error_string_)(NvmlReturn) = nullptr;
  NvmlReturn (*driver_version_)(char*, unsigned int) = nullptr;
  NvmlReturn (*count_)(unsigned int*) = nullptr;
  NvmlReturn (*handle_)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*name_)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*uuid_)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*pci_)(NvmlDevice, NvmlPciInfo*) = nullptr;
  NvmlReturn (*memory_)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*utilization_)(NvmlDevice, NvmlUtilization*) = nullptr;
  NvmlReturn (*ancestor_)(NvmlDevice, NvmlDevice, int*) = nullptr;
  NvmlReturn (*p2p_)(NvmlDevice, NvmlDevice, int, int*) = nullptr;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuQuery>> OpenNvml() {
  const char* env = std::getenv("COHORT_NVML_LIBRARY");
  const std::string path = env != nullptr && env[0] != '\0' ? env : "libnvidia-ml.so.1";
  void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("the NVIDIA driver's library does not load (", ::dlerror(), ")"));
  }
  auto query = std::make_unique<NvmlGpuQuery>(library);
  if (absl::Status s = query->Bind(); !s.ok()) return s;
  return std::unique_ptr<GpuQuery>(std::move(query));
}

}  // namespace cohort
