#include "harness/cohort/doctor/doctor_findings.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace cohort {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// A healthy host: two identical GPUs joined by NVLink, CUDA sees both, plenty of memory.
HostFacts HealthyHost() {
  HostFacts f;
  f.driver = absl::OkStatus();
  f.driver_version = "580.1";
  f.gpus = {{"NVIDIA H100", "GPU-aaaa", "00000000:10:00.0", 80 * kGiB},
            {"NVIDIA H100", "GPU-bbbb", "00000000:11:00.0", 80 * kGiB}};
  f.paths = {{GpuPath::kUnknown, GpuPath::kNvLink}, {GpuPath::kNvLink, GpuPath::kUnknown}};
  f.proc_gpus = 2;
  f.cuda_built = true;
  f.cuda_devices = 2;
  f.interfaces = {"eth0", "lo"};
  f.host_memory = 256 * kGiB;
  f.modules = {{{RuntimeModuleId::kNccl, "", "", ""}, "/x/nccl.so", absl::OkStatus()}};
  return f;
}

const DoctorFinding* Find(const std::vector<DoctorFinding>& findings, const std::string& topic,
                          Severity severity) {
  auto it = std::find_if(findings.begin(), findings.end(), [&](const DoctorFinding& f) {
    return f.topic == topic && f.severity == severity;
  });
  return it == findings.end() ? nullptr : &*it;
}

TEST(DoctorFindings, HealthyHostCanRunGpuTrials) {
  const std::vector<DoctorFinding> findings = Diagnose(HealthyHost());
  EXPECT_TRUE(CanRunGpuTrials(findings));
  for (const DoctorFinding& f : findings) {
    EXPECT_NE(f.severity, Severity::kWarning) << FormatFinding(f);
  }
}

TEST(DoctorFindings, NoDriverSaysSoPlainly) {
  HostFacts f = HealthyHost();
  f.driver = absl::UnavailableError("libnvidia-ml.so.1: cannot open shared object file");
  f.gpus.clear();
  const std::vector<DoctorFinding> findings = Diagnose(f);
  EXPECT_FALSE(CanRunGpuTrials(findings));
  const DoctorFinding* driver = Find(findings, "driver", Severity::kProblem);
  ASSERT_NE(driver, nullptr);
  EXPECT_NE(driver->what.find("no NVIDIA driver"), std::string::npos);
  EXPECT_NE(driver->what.find("CPU slots only"), std::string::npos);
  EXPECT_NE(driver->advice.find("nvidia-smi"), std::string::npos);
}

TEST(DoctorFindings, StaleVisibleDevicesNamed) {
  HostFacts f = HealthyHost();
  f.cuda_visible_devices = "1,3";
  f.cuda_devices = 1;
  const std::vector<DoctorFinding> findings = Diagnose(f);
  const DoctorFinding* cuda = Find(findings, "cuda", Severity::kWarning);
  ASSERT_NE(cuda, nullptr);
  EXPECT_NE(cuda->what.find("does not list: 3"), std::string::npos) << cuda->what;
  EXPECT_NE(cuda->advice.find("stale"), std::string::npos);

  f.cuda_visible_devices = "GPU-zzzz";
  f.cuda_devices = 0;
  const std::vector<DoctorFinding> findings1 = Diagnose(f);
  const DoctorFinding* none = Find(findings1, "cuda", Severity::kProblem);
  ASSERT_NE(none, nullptr);
  EXPECT_NE(none->what.find("GPU-zzzz"), std::string::npos);
}

TEST(DoctorFindings, StaleVisibleDevicesNamedInABuildWithoutCuda) {
  HostFacts f = HealthyHost();
  f.cuda_built = false;
  f.cuda_visible_devices = "GPU-zzzz";
  const std::vector<DoctorFinding> findings = Diagnose(f);
  const DoctorFinding* cuda = Find(findings, "cuda", Severity::kProblem);
  ASSERT_NE(cuda, nullptr);
  EXPECT_NE(cuda->what.find("no CUDA support"), std::string::npos);
  EXPECT_NE(cuda->what.find("GPU-zzzz"), std::string::npos) << cuda->what;
}

TEST(DoctorFindings, VisibleDevicesByIndexAndUuidPrefix) {
  const std::vector<GpuDevice> gpus = HealthyHost().gpus;
  EXPECT_TRUE(StaleVisibleDevices("0,1", gpus).empty());
  EXPECT_TRUE(StaleVisibleDevices("GPU-bb,0", gpus).empty());
  EXPECT_EQ(StaleVisibleDevices("2,GPU-cc,nonsense", gpus),
            (std::vector<std::string>{"2", "GPU-cc", "nonsense"}));
}

TEST(DoctorFindings, CudaSeeingFewerThanTheDriverIsAProblem) {
  HostFacts f = HealthyHost();
  f.cuda_devices = absl::UnavailableError("cudaErrorInsufficientDriver");
  const std::vector<DoctorFinding> findings2 = Diagnose(f);
  const DoctorFinding* cuda = Find(findings2, "cuda", Severity::kProblem);
  ASSERT_NE(cuda, nullptr);
  EXPECT_NE(cuda->advice.find("580"), std::string::npos);
}

TEST(DoctorFindings, MixedModelsWarned) {
  HostFacts f = HealthyHost();
  f.gpus[1].name = "NVIDIA A100";
  const std::vector<DoctorFinding> findings3 = Diagnose(f);
  const DoctorFinding* models = Find(findings3, "models", Severity::kWarning);
  ASSERT_NE(models, nullptr);
  EXPECT_NE(models->what.find("NVIDIA A100 (GPU 1)"), std::string::npos) << models->what;
  EXPECT_NE(models->advice.find("slowest"), std::string::npos);
}

TEST(DoctorFindings, LinksThroughHostBridgesWarned) {
  HostFacts f = HealthyHost();
  f.paths = {{GpuPath::kUnknown, GpuPath::kSystem}, {GpuPath::kSystem, GpuPath::kUnknown}};
  const std::vector<DoctorFinding> findings4 = Diagnose(f);
  const DoctorFinding* links = Find(findings4, "links", Severity::kWarning);
  ASSERT_NE(links, nullptr);
  EXPECT_NE(links->what.find("0-1 (SYS)"), std::string::npos) << links->what;
  const std::vector<DoctorFinding> healthy = Diagnose(HealthyHost());
  const DoctorFinding* nvlink = Find(healthy, "links", Severity::kOk);
  ASSERT_NE(nvlink, nullptr);
  EXPECT_NE(nvlink->what.find("NV"), std::string::npos);
}

TEST(DoctorFindings, NcclSettings) {
  EXPECT_TRUE(SocketIfnameMatches("eth", {"eth0", "lo"}));
  EXPECT_TRUE(SocketIfnameMatches("=eth0", {"eth0", "lo"}));
  EXPECT_FALSE(SocketIfnameMatches("=eth", {"eth0", "lo"}));
  EXPECT_TRUE(SocketIfnameMatches("^docker,lo", {"eth0", "lo"}));
  EXPECT_FALSE(SocketIfnameMatches("^eth,lo", {"eth0", "lo"}));
  EXPECT_FALSE(SocketIfnameMatches("ib", {"eth0", "lo"}));

  HostFacts f = HealthyHost();
  f.nccl_env = {{"NCCL_SOCKET_IFNAME", "ib9"}, {"NCCL_P2P_DISABLE", "1"}};
  f.infiniband = {"mlx5_0"};
  f.nccl_env["NCCL_IB_DISABLE"] = "1";
  const std::vector<DoctorFinding> findings = Diagnose(f);
  EXPECT_FALSE(CanRunGpuTrials(findings));
  const DoctorFinding* ifname = Find(findings, "nccl", Severity::kProblem);
  ASSERT_NE(ifname, nullptr);
  EXPECT_NE(ifname->what.find("ib9"), std::string::npos);
  int warnings = 0;
  for (const DoctorFinding& finding : findings) {
    if (finding.topic == "nccl" && finding.severity == Severity::kWarning) ++warnings;
  }
  EXPECT_EQ(warnings, 2);  // InfiniBand turned off, P2P turned off
}

TEST(DoctorFindings, ContainerNcclVersionIsNotASetting) {
  HostFacts f = HealthyHost();
  f.nccl_env = {{"NCCL_VERSION", "2.28.3-1"}};
  const std::vector<DoctorFinding> findings = Diagnose(f);
  EXPECT_TRUE(CanRunGpuTrials(findings));
  const DoctorFinding* nccl = Find(findings, "nccl", Severity::kOk);
  ASSERT_NE(nccl, nullptr);
  EXPECT_NE(nccl->what.find("no NCCL_* variable set"), std::string::npos) << nccl->what;
  EXPECT_NE(nccl->what.find("NCCL_VERSION=2.28.3-1 names the NCCL of the container image"),
            std::string::npos)
      << nccl->what;
}

TEST(DoctorFindings, HostMemoryPerGpu) {
  HostFacts f = HealthyHost();
  f.host_memory = 24 * kGiB;
  const std::vector<DoctorFinding> findings5 = Diagnose(f);
  const DoctorFinding* memory = Find(findings5, "memory", Severity::kWarning);
  ASSERT_NE(memory, nullptr);
  EXPECT_NE(memory->what.find("12.0 GiB per GPU"), std::string::npos) << memory->what;
  EXPECT_NE(memory->advice.find("16 GB per GPU"), std::string::npos);
}

TEST(DoctorFindings, ModuleThatDoesNotLoadIsAProblem) {
  HostFacts f = HealthyHost();
  f.modules.push_back({{RuntimeModuleId::kCudaExchange, "", "", ""},
                       "",
                       absl::UnavailableError("undefined symbol: _ZTIN6cohort13BucketReducerE")});
  const std::vector<DoctorFinding> findings6 = Diagnose(f);
  const DoctorFinding* modules = Find(findings6, "modules", Severity::kProblem);
  ASSERT_NE(modules, nullptr);
  EXPECT_NE(modules->what.find("CUDA exchange module: does not load"), std::string::npos);
}

}  // namespace
}  // namespace cohort
