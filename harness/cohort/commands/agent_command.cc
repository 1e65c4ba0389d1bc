#include "harness/cohort/commands/agent_command.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/cohort/commands/command_exit.h"
#include "harness/cohort/process/this_process.h"
#include "runtime/agent/agent.h"
#include "runtime/agent/gpu_slots.h"
#include "runtime/base/daemon_log.h"
#include "runtime/control/endpoint_text.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {
namespace {

constexpr char kAgentUsage[] =
    "usage: cohort agent --orchestrator ENDPOINT [--id ID] [--slots N|auto] [--work-dir DIR]\n"
    "                    [--advertise-address HOST] [--key FILE --orchestrator-key KEY]\n"
    "                    [--metrics-address [HOST:]PORT] [--keep-task-folders N]\n"
    "\n"
    "Runs this machine's agent: registers its slots with the orchestrator and runs the tasks\n"
    "it is given, one worker process per slot (docs/protocol.md).\n"
    "\n"
    "  --orchestrator ENDPOINT  the orchestrator's ZeroMQ endpoint, e.g. tcp://10.0.0.5:29400\n"
    "  --id ID                  this agent's id, unique among the orchestrator's agents\n"
    "                           (default: the host name)\n"
    "  --slots N|auto           slots to offer: N CPU slots, or auto (the default): one per\n"
    "                           NVIDIA GPU when the driver lists any (those CUDA_VISIBLE_DEVICES\n"
    "                           names, when it is set), else one per CPU core\n"
    "  --work-dir DIR           where each task's folder (config, log, checkpoints) goes, as\n"
    "                           DIR/tasks/<task id>/ (default: <temp dir>/cohort-agent-<id>)\n"
    "  --keep-task-folders N    how many ended tasks' folders stay in DIR/tasks (default 32):\n"
    "                           older ones are removed as tasks end (the orchestrator keeps\n"
    "                           each trial's log); a folder holding checkpoints/ stays\n"
    "  --advertise-address HOST this machine's address as other agents' workers reach it: the\n"
    "                           workers of a trial spanning agents bind their Gloo connections\n"
    "                           there and publish it to their peers (COHORT_GLOO_HOSTNAME);\n"
    "                           give an address of this machine when agents are on several\n"
    "                           machines (default 127.0.0.1)\n"
    "  --key FILE               this agent's secret key file (`cohort keygen --name ID`): the\n"
    "                           connection uses CURVE, and the orchestrator must authorize the\n"
    "                           key under the name ID\n"
    "  --orchestrator-key KEY   the orchestrator's public key: its .pub file or the 40\n"
    "                           characters of Z85; needed with --key\n"
    "  --metrics-address [HOST:]PORT\n"
    "                           serve Prometheus metrics at http://HOST:PORT/metrics (slots,\n"
    "                           tasks, records/s, heartbeat ages; HOST 0.0.0.0 when absent)\n"
    "\n"
    "SIGINT, SIGTERM or SIGHUP stops every task (10 s to checkpoint, then SIGKILL; a second "
    "signal\n"
    "kills at once) and exits 0; under nohup, SIGHUP stays ignored. Exit status: 0 stopped,\n"
    "1 error, 2 bad usage.\n";

struct AgentArgs {
  std::string orchestrator;
  std::string id;
  bool id_given = false;  // --id was given (an empty one is refused)
  std::string slots = "auto";
  std::string work_dir;
  std::string advertise_address = "127.0.0.1";
  std::string key_file;
  std::string orchestrator_key;
  std::string metrics_address;
  std::string keep_task_folders;
};

int AgentUsage(absl::string_view problem) {
  return UsageError("cohort agent", problem, kAgentUsage);
}

// `--slots auto`: one slot per NVIDIA GPU this process may use (every one the driver lists, or
// those CUDA_VISIBLE_DEVICES names, as said in the log), else one per CPU core. VisibleGpuSlots's
// error for a CUDA_VISIBLE_DEVICES naming what is not there.
absl::StatusOr<std::vector<AgentSlot>> AutoSlots() {
  const std::optional<std::string> visible = CudaVisibleDevices();
  absl::StatusOr<std::vector<AgentSlot>> gpus = VisibleGpuSlots(visible);
  if (!gpus.ok()) return gpus;
  if (const size_t listed = DetectGpuSlots().size(); visible && listed > 0) {
    std::vector<int32_t> devices;
    for (const AgentSlot& slot : *gpus) devices.push_back(slot.device_id);
    LogDaemonLine("cohort agent",
                  devices.empty() ? absl::StrCat("CUDA_VISIBLE_DEVICES=", *visible,
                                                 " names none of the driver's ", listed,
                                                 " GPUs: offering CPU slots")
                                  : absl::StrCat("CUDA_VISIBLE_DEVICES=", *visible,
                                                 ": offering GPU ", absl::StrJoin(devices, ", "),
                                                 " (PCI bus order) of the driver's ", listed));
  }
  if (!gpus->empty()) return gpus;
  return CpuSlots(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

int RunAgentCommand(const std::vector<std::string>& args) {
  AgentArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kAgentUsage, stdout);
      return 0;
    }
    std::string* value = arg == "--orchestrator"        ? &parsed.orchestrator
                         : arg == "--id"                ? &parsed.id
                         : arg == "--slots"             ? &parsed.slots
                         : arg == "--work-dir"          ? &parsed.work_dir
                         : arg == "--advertise-address" ? &parsed.advertise_address
                         : arg == "--key"               ? &parsed.key_file
                         : arg == "--orchestrator-key"  ? &parsed.orchestrator_key
                         : arg == "--metrics-address"   ? &parsed.metrics_address
                         : arg == "--keep-task-folders" ? &parsed.keep_task_folders
                                                        : nullptr;
    if (value == nullptr) return AgentUsage(absl::StrCat("unexpected argument '", arg, "'"));
    if (i + 1 == args.size()) return AgentUsage(absl::StrCat(arg, " needs a value"));
    *value = args[++i];
    if (arg == "--id") parsed.id_given = true;
  }
  if (parsed.orchestrator.empty()) return AgentUsage("--orchestrator is required");
  if (absl::Status text = CheckEndpointText("--orchestrator", parsed.orchestrator); !text.ok()) {
    return AgentUsage(text.message());
  }
  if (parsed.id_given && parsed.id.empty()) {
    return AgentUsage("--id needs a name (leave it out for the host name)");
  }
  if (parsed.advertise_address.empty()) return AgentUsage("--advertise-address needs a host");
  uint32_t count = 0;  // --slots N: N CPU slots
  if (parsed.slots != "auto" && (!absl::SimpleAtoi(parsed.slots, &count) || count == 0)) {
    return AgentUsage(
        absl::StrCat("--slots needs a number >= 1 or auto, not '", parsed.slots, "'"));
  }
  size_t keep_task_folders = kEndedTaskFoldersKept;
  if (!parsed.keep_task_folders.empty() &&
      !absl::SimpleAtoi(parsed.keep_task_folders, &keep_task_folders)) {
    return AgentUsage(absl::StrCat("--keep-task-folders needs a number >= 0, not '",
                                   parsed.keep_task_folders, "'"));
  }
  absl::StatusOr<std::vector<AgentSlot>> slots = count > 0 ? CpuSlots(count) : AutoSlots();
  if (!slots.ok()) return CommandError(slots.status());
  absl::StatusOr<std::optional<CurveClientConfig>> curve =
      LoadCurveClientConfig(parsed.key_file, parsed.orchestrator_key);
  if (!curve.ok()) {
    if (curve.status().code() == absl::StatusCode::kInvalidArgument &&
        (parsed.key_file.empty() || parsed.orchestrator_key.empty())) {
      return AgentUsage(curve.status().message());
    }
    return CommandError(curve.status());
  }
  absl::StatusOr<std::string> executable = SelfExecutable();
  if (!executable.ok()) {
    return CommandError(executable.status());
  }

  AgentOptions options;
  options.orchestrator = parsed.orchestrator;
  options.hostname = HostName();
  options.agent_id = parsed.id.empty() ? options.hostname : parsed.id;
  options.cohort_version = COHORT_VERSION;
  options.slots = *std::move(slots);
  std::error_code error;
  options.work_dir = std::filesystem::absolute(
      parsed.work_dir.empty()
          ? std::filesystem::temp_directory_path(error) / ("cohort-agent-" + options.agent_id)
          : std::filesystem::path(parsed.work_dir),
      error);
  options.executable = *executable;
  options.base_environment = InheritedEnvironment();
  options.advertise_address = parsed.advertise_address;
  options.ended_task_folders_kept = keep_task_folders;
  options.curve = *std::move(curve);
  if (options.curve && options.curve->key_name != options.agent_id) {
    std::fprintf(stderr,
                 "warning: the key in %s is named '%s', not '%s': the orchestrator accepts an "
                 "agent's messages only when its key is authorized under its id (--id)\n",
                 parsed.key_file.c_str(), options.curve->key_name.c_str(),
                 options.agent_id.c_str());
  }
  std::unique_ptr<MetricsEndpoint> metrics;
  if (!parsed.metrics_address.empty()) {
    absl::StatusOr<ListenAddress> address = ParseListenAddress(parsed.metrics_address);
    if (!address.ok())
      return AgentUsage(absl::StrCat("--metrics-address: ", address.status().message()));
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> started = MetricsEndpoint::Start(*address);
    if (!started.ok()) {
      return CommandError(started.status());
    }
    metrics = *std::move(started);
    options.metrics = metrics.get();
    LogDaemonLine("cohort agent",
                  absl::StrCat("metrics at port ", metrics->port(), ", path /metrics"));
  }
  // Log lines to a reader that went away (`cohort agent | tee`, killed) fail; the agent goes on.
  std::signal(SIGPIPE, SIG_IGN);
  if (absl::Status status = Agent(std::move(options)).Run(); !status.ok()) {
    return CommandError(status);
  }
  return 0;
}

}  // namespace cohort
