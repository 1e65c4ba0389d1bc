#include "harness/cohort/doctor/doctor_findings.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cohort {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kUsualHostMemoryPerGpu = 16 * kGiB;

std::string Gib(uint64_t bytes) {
  return absl::StrFormat("%.1f GiB", static_cast<double>(bytes) / kGiB);
}

DoctorFinding DriverFinding(const HostFacts& f) {
  if (!f.driver.ok()) {
    return {Severity::kProblem, "driver",
            absl::StrCat("no NVIDIA driver: ", f.driver.message(),
                         "\nThis host has no GPU Cohort can use; it runs CPU slots only "
                         "(`cohort agent --slots N`, `cohort run`)."),
            "if it has NVIDIA GPUs, install the NVIDIA driver (580 or later for CUDA 13) and check "
            "that `nvidia-smi` lists them"};
  }
  if (f.gpus.empty()) {
    return {Severity::kProblem, "driver",
            absl::StrCat("driver ", f.driver_version, " lists no GPU"),
            "check `nvidia-smi`; a GPU missing there is missing to every program"};
  }
  std::vector<std::string> lines = {
      absl::StrCat("driver ", f.driver_version, ", ", f.gpus.size(), " GPU(s):")};
  for (size_t i = 0; i < f.gpus.size(); ++i) {
    lines.push_back(absl::StrCat("  ", i, "  ", f.gpus[i].name, "  ", Gib(f.gpus[i].memory_total),
                                 "  ", f.gpus[i].pci_bus_id, "  ", f.gpus[i].uuid));
  }
  if (f.proc_gpus != f.gpus.size()) {
    lines.push_back(absl::StrCat("/proc/driver/nvidia/gpus has ", f.proc_gpus,
                                 " entries, so `cohort agent --slots auto` offers ", f.proc_gpus,
                                 " GPU slot(s)"));
    return {Severity::kWarning, "driver", absl::StrJoin(lines, "\n"),
            "the driver's two views of the GPUs differ: reload the driver, or check the "
            "container's device mounts"};
  }
  return {Severity::kOk, "driver", absl::StrJoin(lines, "\n"), ""};
}

DoctorFinding CudaFinding(const HostFacts& f) {
  std::vector<std::string> stale;
  if (f.cuda_visible_devices) stale = StaleVisibleDevices(*f.cuda_visible_devices, f.gpus);
  const std::string stale_text =
      stale.empty()
          ? ""
          : absl::StrCat("\nCUDA_VISIBLE_DEVICES=", *f.cuda_visible_devices,
                         " names GPUs the driver does not list: ", absl::StrJoin(stale, ", "),
                         " (CUDA stops reading it at the first)");
  constexpr absl::string_view kStaleAdvice =
      "CUDA_VISIBLE_DEVICES is stale (set for another machine, or before GPUs changed): unset it. "
      "The agent needs none: it gives each worker its own GPU";
  if (!f.cuda_built) {
    return {Severity::kProblem, "cuda",
            absl::StrCat("this build of Cohort has no CUDA support", stale_text),
            "build Cohort where nvcc is found (scripts/build); the build summary says "
            "\"CUDA (nvcc, cudart, NCCL): True\""};
  }
  if (!f.cuda_devices.ok()) {
    return {Severity::kProblem, "cuda",
            absl::StrCat("the CUDA runtime sees no device: ", f.cuda_devices.status().message(),
                         stale_text),
            stale.empty() ? "\"insufficient driver\" means the driver is older than CUDA 13 needs "
                            "(580 or later); \"no device\" with a driver present often means "
                            "CUDA_VISIBLE_DEVICES hides every GPU"
                          : std::string(kStaleAdvice)};
  }
  const int seen = *f.cuda_devices;
  const size_t listed = f.gpus.size();
  std::string what =
      absl::StrCat("the CUDA runtime sees ", seen, " of the driver's ", listed, " GPU(s)");
  if (!f.cuda_visible_devices) {
    if (static_cast<size_t>(seen) == listed && seen > 0) return {Severity::kOk, "cuda", what, ""};
    return {Severity::kProblem, "cuda", what,
            "CUDA and the driver disagree: reinstall the driver, or check that no other CUDA "
            "runtime shadows CUDA 13's (LD_LIBRARY_PATH)"};
  }
  absl::StrAppend(&what, ", with CUDA_VISIBLE_DEVICES=", *f.cuda_visible_devices, stale_text);
  if (!stale.empty()) {
    return {seen > 0 ? Severity::kWarning : Severity::kProblem, "cuda", what,
            std::string(kStaleAdvice)};
  }
  if (seen == 0) {
    return {Severity::kProblem, "cuda", what, "unset CUDA_VISIBLE_DEVICES, or name a GPU in it"};
  }
  return {Severity::kNote, "cuda", what,
          "`cohort agent --slots auto`, `cohort run --gpus` and `cohort launch --gpus` offer only "
          "the GPUs CUDA_VISIBLE_DEVICES names here, one slot each (each worker then gets its "
          "own); unset it to offer every GPU"};
}

DoctorFinding ModelsFinding(const HostFacts& f) {
  std::map<std::string, std::vector<size_t>> by_model;
  for (size_t i = 0; i < f.gpus.size(); ++i) by_model[f.gpus[i].name].push_back(i);
  if (by_model.size() <= 1) {
    return {Severity::kOk, "models",
            f.gpus.empty() ? "no GPU" : absl::StrCat("one model: ", f.gpus[0].name), ""};
  }
  std::vector<std::string> parts;
  for (const auto& [model, indexes] : by_model) {
    parts.push_back(absl::StrCat(model, " (GPU ", absl::StrJoin(indexes, ", "), ")"));
  }
  return {Severity::kWarning, "models",
          absl::StrCat("mixed GPU models: ", absl::StrJoin(parts, "; ")),
          "a trial runs at the pace of its slowest GPU: give an agent identical GPUs, or run "
          "one agent per model (`cohort agent` on each, with CUDA_VISIBLE_DEVICES unset and "
          "--slots matching)"};
}

DoctorFinding LinksFinding(const HostFacts& f) {
  const size_t n = f.gpus.size();
  if (n < 2 || f.paths.size() != n) {
    return {Severity::kOk, "links", n < 2 ? "one GPU or none: nothing to link" : "not known", ""};
  }
  std::vector<std::string> lines = {"      " + [&] {
    std::string header;
    for (size_t b = 0; b < n; ++b)
      absl::StrAppend(&header, absl::StrFormat("%-6s", absl::StrCat("GPU", b)));
    return header;
  }()};
  std::vector<std::string> slow;
  for (size_t a = 0; a < n; ++a) {
    std::string row = absl::StrFormat("%-6s", absl::StrCat("GPU", a));
    for (size_t b = 0; b < n; ++b) {
      const GpuPath path = a == b ? GpuPath::kUnknown : f.paths[a][b];
      absl::StrAppend(&row, absl::StrFormat("%-6s", a == b ? "X" : GpuPathName(path)));
      if (a < b && path != GpuPath::kNvLink && path != GpuPath::kPcieSwitch) {
        slow.push_back(absl::StrCat(a, "-", b, " (", GpuPathName(path), ")"));
      }
    }
    lines.push_back(row);
  }
  lines.push_back(
      "NV: NVLink; PIX: PCIe switch; PHB: PCIe host bridge; NODE: within a NUMA node; SYS: "
      "across NUMA nodes");
  if (slow.empty()) return {Severity::kOk, "links", absl::StrJoin(lines, "\n"), ""};
  lines.push_back(
      absl::StrCat("through the CPU's PCIe root or further: ", absl::StrJoin(slow, ", ")));
  return {Severity::kWarning, "links", absl::StrJoin(lines, "\n"),
          "NCCL between these GPUs goes through host bridges, several times slower than NVLink: "
          "keep a multi-GPU trial's slots on GPUs joined by NVLink or one PCIe switch, or use "
          "gradient compression (optimizations.gradient_compression)"};
}

// Set by NVIDIA's container images to the version of the NCCL they ship; not a setting of NCCL.
constexpr char kNcclImageVersion[] = "NCCL_VERSION";

std::vector<DoctorFinding> NcclFindings(const HostFacts& f) {
  std::vector<DoctorFinding> findings;
  std::vector<std::string> set;
  for (const auto& [name, value] : f.nccl_env) {
    if (name != kNcclImageVersion) set.push_back(absl::StrCat(name, "=", value));
  }
  std::string what = set.empty() ? "no NCCL_* variable set: NCCL chooses for itself"
                                 : absl::StrCat("set: ", absl::StrJoin(set, " "));
  if (auto it = f.nccl_env.find(kNcclImageVersion); it != f.nccl_env.end()) {
    absl::StrAppend(&what, "\n", kNcclImageVersion, "=", it->second,
                    " names the NCCL of the container image; NCCL does not read it, and Cohort "
                    "loads the libnccl.so.2 the library path finds");
  }
  findings.push_back({Severity::kOk, "nccl", what,
                      f.nccl_env.count("NCCL_DEBUG") ? ""
                                                     : "NCCL_DEBUG=INFO in the agent's "
                                                       "environment prints what NCCL chose"});
  if (auto it = f.nccl_env.find("NCCL_SOCKET_IFNAME"); it != f.nccl_env.end()) {
    if (!SocketIfnameMatches(it->second, f.interfaces)) {
      findings.push_back(
          {Severity::kProblem, "nccl",
           absl::StrCat("NCCL_SOCKET_IFNAME=", it->second,
                        " selects none of this host's "
                        "interfaces (",
                        absl::StrJoin(f.interfaces, ", "), ")"),
           "NCCL cannot bootstrap a trial that spans machines: name an interface that exists "
           "(a prefix, or '=' for an exact name), or unset it"});
    }
  } else if (f.interfaces.size() > 2) {
    findings.push_back(
        {Severity::kNote, "nccl",
         absl::StrCat("several network interfaces (", absl::StrJoin(f.interfaces, ", "),
                      ") and no NCCL_SOCKET_IFNAME"),
         "for trials across machines, set NCCL_SOCKET_IFNAME to the interface "
         "the machines share, so NCCL does not pick another"});
  }
  auto disabled = [&](const char* name) {
    auto it = f.nccl_env.find(name);
    return it != f.nccl_env.end() && it->second == "1";
  };
  if (!f.infiniband.empty()) {
    if (disabled("NCCL_IB_DISABLE")) {
      findings.push_back({Severity::kWarning, "nccl",
                          absl::StrCat("InfiniBand present (", absl::StrJoin(f.infiniband, ", "),
                                       ") but NCCL_IB_DISABLE=1"),
                          "NCCL falls back to TCP between machines: unset NCCL_IB_DISABLE"});
    } else {
      findings.push_back({Severity::kOk, "nccl",
                          absl::StrCat("InfiniBand: ", absl::StrJoin(f.infiniband, ", "),
                                       "; NCCL uses it between machines"),
                          ""});
    }
  } else {
    findings.push_back({Severity::kNote, "nccl",
                        "no InfiniBand device: NCCL uses TCP sockets between machines", ""});
  }
  for (const char* name : {"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE"}) {
    if (disabled(name)) {
      findings.push_back({Severity::kWarning, "nccl", absl::StrCat(name, "=1"),
                          "this turns off a fast path between GPUs of one machine and slows "
                          "multi-GPU training: unset it unless a fault needs it"});
    }
  }
  return findings;
}

DoctorFinding MemoryFinding(const HostFacts& f) {
  if (f.gpus.empty()) {
    return {Severity::kOk, "memory", absl::StrCat(Gib(f.host_memory), " of host memory"), ""};
  }
  const uint64_t per_gpu = f.host_memory / f.gpus.size();
  std::string what =
      absl::StrCat(Gib(f.host_memory), " of host memory, ", Gib(per_gpu), " per GPU");
  if (per_gpu >= kUsualHostMemoryPerGpu) return {Severity::kOk, "memory", what, ""};
  return {Severity::kWarning, "memory", what,
          "the usual minimum is 16 GB per GPU (data loading, pinned staging, checkpoints): "
          "expect slow or failing trials at full width; offer fewer slots or add memory"};
}

DoctorFinding ModulesFinding(const HostFacts& f) {
  std::vector<std::string> lines;
  bool all = true;
  for (const RuntimeModuleLoad& load : f.modules) {
    lines.push_back(FormatRuntimeModuleLoad(load));
    all = all && load.status.ok();
  }
  if (f.modules.empty()) {
    return {Severity::kProblem, "modules", "this build has no runtime modules (built without nvcc)",
            "build where nvcc is found"};
  }
  return {all ? Severity::kOk : Severity::kProblem, "modules", absl::StrJoin(lines, "\n"),
          all ? "" : "rebuild Cohort; a module that does not load is a build fault (report it)"};
}

DoctorFinding PluginsFinding(const HostFacts& f) {
  std::vector<std::string> lines;
  bool missing = false;
  for (const auto& [folder, count] : f.plugin_folders) {
    lines.push_back(count < 0 ? absl::StrCat(folder, ": missing")
                              : absl::StrCat(folder, ": ", count, " plugin(s)"));
    missing = missing || count < 0;
  }
  return {Severity::kOk, "plugins",
          absl::StrCat("entrypoint names are looked up in:\n  ", absl::StrJoin(lines, "\n  ")),
          missing ? "a missing folder is skipped; COHORT_PLUGIN_PATH adds folders (colon-separated)"
                  : ""};
}

}  // namespace

std::vector<std::string> StaleVisibleDevices(const std::string& value,
                                             const std::vector<GpuDevice>& gpus) {
  std::vector<std::string> stale;
  for (absl::string_view entry : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    entry = absl::StripAsciiWhitespace(entry);
    int index = -1;
    bool known;
    if (absl::SimpleAtoi(entry, &index)) {
      known = index >= 0 && static_cast<size_t>(index) < gpus.size();
    } else if (absl::StartsWith(entry, "GPU-") || absl::StartsWith(entry, "MIG-")) {
      // CUDA takes any unique prefix of a UUID; a MIG instance lives on a GPU the driver lists.
      known = absl::StartsWith(entry, "MIG-") ||
              std::any_of(gpus.begin(), gpus.end(),
                          [&](const GpuDevice& gpu) { return absl::StartsWith(gpu.uuid, entry); });
    } else {
      known = false;
    }
    if (!known) stale.emplace_back(entry);
  }
  return stale;
}

bool SocketIfnameMatches(const std::string& value, const std::vector<std::string>& interfaces) {
  absl::string_view rest = value;
  const bool exclude = absl::ConsumePrefix(&rest, "^");
  const bool exact = absl::ConsumePrefix(&rest, "=");
  const std::vector<std::string> names = absl::StrSplit(rest, ',', absl::SkipEmpty());
  for (const std::string& interface : interfaces) {
    const bool named = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
      return exact ? interface == name : absl::StartsWith(interface, name);
    });
    if (named != exclude) return true;
  }
  return false;
}

std::vector<DoctorFinding> Diagnose(const HostFacts& facts) {
  std::vector<DoctorFinding> findings = {DriverFinding(facts)};
  if (facts.driver.ok()) {
    findings.push_back(CudaFinding(facts));
    findings.push_back(ModelsFinding(facts));
    findings.push_back(LinksFinding(facts));
  }
  for (DoctorFinding& f : NcclFindings(facts)) findings.push_back(std::move(f));
  findings.push_back(MemoryFinding(facts));
  findings.push_back(ModulesFinding(facts));
  findings.push_back(PluginsFinding(facts));
  return findings;
}

bool CanRunGpuTrials(const std::vector<DoctorFinding>& findings) {
  return std::none_of(findings.begin(), findings.end(),
                      [](const DoctorFinding& f) { return f.severity == Severity::kProblem; });
}

std::string FormatFinding(const DoctorFinding& finding) {
  static constexpr const char* kLabels[] = {"ok", "note", "warning", "PROBLEM"};
  std::string text =
      absl::StrCat("[", kLabels[static_cast<int>(finding.severity)], "] ", finding.topic, ": ",
                   absl::StrReplaceAll(finding.what, {{"\n", "\n    "}}), "\n");
  if (!finding.advice.empty()) absl::StrAppend(&text, "    what to do: ", finding.advice, "\n");
  return text;
}

}  // namespace cohort
