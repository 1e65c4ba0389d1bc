// A stand-in for the NVIDIA driver's NVML library (libnvidia-ml.so.1) for tests on machines
// without a driver: Cohort opens it through COHORT_NVML_LIBRARY and finds the GPUs that
// COHORT_FAKE_NVML describes, one per ';'-separated entry:
//
//   NAME,UTILIZATION_PERCENT,MEMORY_USED_MIB,MEMORY_TOTAL_MIB[,UUID]
//
// COHORT_FAKE_NVML_LINK names how every pair of GPUs is joined: "NV" (NVLink) or a topology
// level number (30: a PCIe host bridge, the default). COHORT_FAKE_NVML_UTILIZATION_FILE, when
// set, names a file whose ','-separated percentages replace the utilizations on each reading, so a
// test can change them while an agent runs. It exports exactly the calls Cohort makes, with
// NVML's C signatures.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct FakeGpu {
  std::string name, uuid;
  unsigned utilization = 0;
  unsigned long long used = 0, total = 0;
};

std::vector<FakeGpu> Gpus() {
  std::vector<FakeGpu> gpus;
  const char* spec = std::getenv("COHORT_FAKE_NVML");
  std::stringstream entries(spec != nullptr ? spec : "");
  std::string entry;
  while (std::getline(entries, entry, ';')) {
    std::stringstream fields(entry);
    std::vector<std::string> f;
    std::string field;
    while (std::getline(fields, field, ',')) f.push_back(field);
    if (f.size() < 4) continue;
    FakeGpu gpu;
    gpu.name = f[0];
    gpu.utilization = static_cast<unsigned>(std::stoul(f[1]));
    gpu.used = std::stoull(f[2]) << 20;
    gpu.total = std::stoull(f[3]) << 20;
    gpu.uuid = f.size() > 4 ? f[4] : "GPU-fake-" + std::to_string(gpus.size());
    gpus.push_back(gpu);
  }
  if (const char* file = std::getenv("COHORT_FAKE_NVML_UTILIZATION_FILE")) {
    std::ifstream in(file);
    std::string value;
    for (size_t i = 0; i < gpus.size() && std::getline(in, value, ','); ++i) {
      gpus[i].utilization = static_cast<unsigned>(std::stoul(value));
    }
  }
  return gpus;
}

// A device handle is its index plus one, so no handle is null.
using Handle = void*;
long IndexOf(Handle h) { return reinterpret_cast<long>(h) - 1; }

}  // namespace

extern "C" {

struct FakeMemory {
  unsigned long long total, free, used;
};
struct FakeUtilization {
  unsigned gpu, memory;
};
struct FakePci {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

__attribute__((visibility("default"))) int nvmlInit_v2() { return 0; }
__attribute__((visibility("default"))) int nvmlShutdown() { return 0; }
__attribute__((visibility("default"))) const char* nvmlErrorString(int) {
  return "fake NVML error";
}
__attribute__((visibility("default"))) int nvmlSystemGetDriverVersion(char* out, unsigned len) {
  std::snprintf(out, len, "%s", "999.99-fake");
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = static_cast<unsigned>(Gpus().size());
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned i, Handle* h) {
  if (i >= Gpus().size()) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *h = reinterpret_cast<Handle>(static_cast<long>(i) + 1);
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetName(Handle h, char* out, unsigned len) {
  std::snprintf(out, len, "%s", Gpus()[IndexOf(h)].name.c_str());
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetUUID(Handle h, char* out, unsigned len) {
  std::snprintf(out, len, "%s", Gpus()[IndexOf(h)].uuid.c_str());
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPciInfo_v3(Handle h, FakePci* pci) {
  std::memset(pci, 0, sizeof *pci);
  std::snprintf(pci->bus_id, sizeof pci->bus_id, "00000000:%02lX:00.0", IndexOf(h) + 0x10);
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(Handle h, FakeMemory* m) {
  const FakeGpu gpu = Gpus()[IndexOf(h)];
  *m = {gpu.total, gpu.total - gpu.used, gpu.used};
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(Handle h,
                                                                         FakeUtilization* u) {
  *u = {Gpus()[IndexOf(h)].utilization, 0};
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetP2PStatus(Handle, Handle, int,
                                                                  int* status) {
  const char* link = std::getenv("COHORT_FAKE_NVML_LINK");
  *status = link != nullptr && std::strcmp(link, "NV") == 0 ? 0 : 5;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetTopologyCommonAncestor(Handle, Handle,
                                                                               int* level) {
  const char* link = std::getenv("COHORT_FAKE_NVML_LINK");
  *level = link != nullptr && std::strcmp(link, "NV") != 0 ? std::atoi(link) : 30;
  return 0;
}

}  // extern "C"
