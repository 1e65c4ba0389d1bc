#include "harness/cohort/commands/orchestrator_command.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/command_exit.h"
#include "harness/cohort/commands/resource_manager_flags.h"
#include "harness/cohort/process/stop_signals.h"
#include "harness/cohort/process/this_process.h"
#include "harness/cohort/web/dashboard.h"
#include "runtime/agent/agent.h"
#include "runtime/base/daemon_log.h"
#include "runtime/base/file_io.h"
#include "runtime/orchestrator/orchestrator_server.h"
#include "runtime/orchestrator/server_security.h"
#include "runtime/orchestrator/state_directory_lock.h"
#include "runtime/security/authorized_keys.h"
#include "runtime/security/curve_keys.h"
#include "runtime/security/listen_policy.h"

namespace cohort {
namespace {

constexpr char kOrchestratorUsage[] =
    "usage: cohort orchestrator [--listen ENDPOINT] [--client-listen ENDPOINT]\n"
    "                           [--state-dir DIR] [--checkpoint-root DIR]\n"
    "                           [--agent-timeout SECONDS]\n"
    "                           [--rendezvous-listen ENDPOINT]\n"
    "                           [--key FILE] [--authorized-keys PATH] [--curve auto|always]\n"
    "                           [--metrics-address [HOST:]PORT]\n"
    "                           [--web-address [HOST:]PORT] [--web-token-file FILE]\n"
    "                           [--resource-manager agents|slurm [--slurm-partition NAME]\n"
    "                            [--slurm-account NAME] [--sbatch-option OPTION]...\n"
    "                            [--slurm-slots-per-node N] [--slurm-gpus]\n"
    "                            [--slurm-agent-key FILE]]\n"
    "\n"
    "Runs the orchestrator: agents (`cohort agent`) register their slots with it, and it runs\n"
    "the experiments clients submit, placing each trial's tasks on the agents' slots\n"
    "(docs/protocol.md).\n"
    "\n"
    "  --listen ENDPOINT         where agents connect (default tcp://127.0.0.1:29400; use\n"
    "                            tcp://0.0.0.0:29400 to accept other machines)\n"
    "  --client-listen ENDPOINT  where clients such as `cohort submit` connect\n"
    "                            (default tcp://127.0.0.1:29401)\n"
    "  --state-dir DIR           where each experiment's record goes, as\n"
    "                            DIR/experiments/<id>/ (default ./cohort-state)\n"
    "  --checkpoint-root DIR     checkpoint storage for experiments whose config names none;\n"
    "                            agents must see it at the same path (default: checkpoints/\n"
    "                            in the state dir)\n"
    "  --agent-timeout SECONDS   an agent silent this long is lost and its tasks fail\n"
    "                            (default 15; more than the agents' heartbeat period, 5 s)\n"
    "  --rendezvous-listen ENDPOINT\n"
    "                            where the workers of a trial spanning agents meet to form\n"
    "                            their Gloo group; agents learn it from each task, and a\n"
    "                            wildcard host (tcp://0.0.0.0:29402) reaches them as the host\n"
    "                            they connect to (default: the --listen host at port 29402,\n"
    "                            or a free port when that one is taken)\n"
    "  --key FILE                the orchestrator's secret key file (`cohort keygen`); its\n"
    "                            .pub goes to every agent and client\n"
    "  --authorized-keys PATH    the agents' and clients' public keys: a file of\n"
    "                            `<public-key> <name>` lines or a folder of NAME.pub files; an\n"
    "                            agent's key must be named as its --id (the workers of a trial\n"
    "                            spanning agents present their agent's key at the rendezvous)\n"
    "  --curve auto|always       auto (default): CURVE on each of --listen, --client-listen and\n"
    "                            --rendezvous-listen that is not on loopback, which then needs\n"
    "                            --key and --authorized-keys; always: on loopback too\n"
    "  --metrics-address [HOST:]PORT\n"
    "                            serve Prometheus metrics at http://HOST:PORT/metrics (agents,\n"
    "                            slots, experiments, trials, records/s, restarts, heartbeat\n"
    "                            ages; HOST 0.0.0.0 when absent)\n"
    "  --web-address [HOST:]PORT serve the live web dashboard at http://HOST:PORT/: the\n"
    "                            experiments, their trials' curves of every metric, the tasks\n"
    "                            and why they wait, the agents, logs and checkpoints; read-only\n"
    "                            (HOST 127.0.0.1 when absent)\n"
    "  --web-token-file FILE     a file holding a secret every dashboard request must carry\n"
    "                            (open http://HOST:PORT/?token=SECRET); required when HOST is\n"
    "                            not loopback\n"
    "  --resource-manager agents|slurm\n"
    "                            agents (default): tasks go on the agents that register;\n"
    "                            slurm: no standing agents, each task is a Slurm job of its\n"
    "                            own (sbatch of srun'd `cohort agent`s), followed with squeue\n"
    "                            and ended with scancel (docs/cluster.md, \"On Slurm\")\n"
    "  --slurm-partition NAME    the partition of every job (default: Slurm's default)\n"
    "  --slurm-account NAME      the account of every job\n"
    "  --sbatch-option OPTION    one more sbatch option for every job, as it is (repeatable),\n"
    "                            e.g. --sbatch-option=--time=04:00:00\n"
    "  --slurm-slots-per-node N  slots of one node (default: sinfo's smallest node of the\n"
    "                            partition, its GPUs with --slurm-gpus, else its CPUs)\n"
    "  --slurm-gpus              slots are GPUs (--gpus-per-node); default: CPU slots, one\n"
    "                            CPU each\n"
    "  --slurm-agent-key FILE    the secret key file the jobs' agents share (`cohort keygen\n"
    "                            --name slurm`, at this path on every node); needed with CURVE,\n"
    "                            its public key authorized under the name slurm\n"
    "\n"
    "SIGINT, SIGTERM or SIGHUP stops it (a second signal ends it at once); under nohup, SIGHUP\n"
    "stays ignored. Exit status: 0 stopped, 1 error, 2 bad usage.\n";

struct OrchestratorArgs {
  std::string listen = "tcp://127.0.0.1:29400";
  std::string client_listen = "tcp://127.0.0.1:29401";
  std::string state_dir = "cohort-state";
  std::string checkpoint_root;
  std::string agent_timeout;
  std::string rendezvous_listen;  // empty: RendezvousListenFor(listen, kRendezvousPort)
  std::string key_file;
  std::string authorized_keys;
  std::string curve = "auto";
  std::string metrics_address;
  std::string web_address;
  std::string web_token_file;
};

constexpr char kRendezvousPort[] = "29402";

int OrchestratorUsage(absl::string_view problem) {
  return UsageError("cohort orchestrator", problem, kOrchestratorUsage);
}

// `listen`'s host ("tcp://HOST:PORT") at `port`; loopback when `listen` is not TCP.
std::string RendezvousListenFor(const std::string& listen, absl::string_view port) {
  const size_t colon = listen.rfind(':');
  if (!absl::StartsWith(listen, "tcp://") || colon < 6) {
    return absl::StrCat("tcp://127.0.0.1:", port);
  }
  return absl::StrCat(listen.substr(0, colon + 1), port);
}

// The dashboard of --web-address: on loopback by default; elsewhere only with a token, since
// anyone who reaches the port would see every experiment. INVALID_ARGUMENT for a bad flag.
absl::StatusOr<std::unique_ptr<Dashboard>> StartDashboard(const OrchestratorArgs& parsed,
                                                          const std::string& state_dir) {
  absl::StatusOr<ListenAddress> address = ParseListenAddress(parsed.web_address, "127.0.0.1");
  if (!address.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--web-address: ", address.status().message()));
  }
  DashboardOptions options;
  options.address = *address;
  options.state_dir = state_dir;
  if (!parsed.web_token_file.empty()) {
    absl::StatusOr<std::string> token = ReadWholeFile(parsed.web_token_file);
    if (!token.ok()) return token.status();
    options.token = std::string(absl::StripAsciiWhitespace(*token));
    if (options.token.size() < 16) {
      return absl::InvalidArgumentError(
          absl::StrCat("--web-token-file: ", parsed.web_token_file,
                       " holds a token of fewer than 16 characters; use a long random one (e.g. "
                       "`head -c 24 /dev/urandom | base64 > FILE`)"));
    }
  } else if (!IsLoopbackHost(address->host)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--web-address ", parsed.web_address,
        " is not on loopback: give --web-token-file too (anyone who reaches the port would "
        "see every experiment), or serve on 127.0.0.1 and reach it through an SSH tunnel or a "
        "TLS proxy"));
  }
  return Dashboard::Start(std::move(options));
}

}  // namespace

int RunOrchestratorCommand(const std::vector<std::string>& args) {
  OrchestratorArgs parsed;
  ResourceManagerArgs resource_manager;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kOrchestratorUsage, stdout);
      return 0;
    }
    absl::StatusOr<bool> took = TakeResourceManagerFlag(args, &i, &resource_manager);
    if (!took.ok()) return OrchestratorUsage(took.status().message());
    if (*took) continue;
    std::string* value = arg == "--listen"              ? &parsed.listen
                         : arg == "--client-listen"     ? &parsed.client_listen
                         : arg == "--state-dir"         ? &parsed.state_dir
                         : arg == "--checkpoint-root"   ? &parsed.checkpoint_root
                         : arg == "--agent-timeout"     ? &parsed.agent_timeout
                         : arg == "--rendezvous-listen" ? &parsed.rendezvous_listen
                         : arg == "--key"               ? &parsed.key_file
                         : arg == "--authorized-keys"   ? &parsed.authorized_keys
                         : arg == "--curve"             ? &parsed.curve
                         : arg == "--metrics-address"   ? &parsed.metrics_address
                         : arg == "--web-address"       ? &parsed.web_address
                         : arg == "--web-token-file"    ? &parsed.web_token_file
                                                        : nullptr;
    if (value == nullptr) return OrchestratorUsage(absl::StrCat("unexpected argument '", arg, "'"));
    if (i + 1 == args.size()) return OrchestratorUsage(absl::StrCat(arg, " needs a value"));
    *value = args[++i];
  }
  if (parsed.listen.empty()) return OrchestratorUsage("--listen needs an endpoint");
  if (parsed.client_listen.empty()) return OrchestratorUsage("--client-listen needs an endpoint");
  if (parsed.state_dir.empty()) return OrchestratorUsage("--state-dir needs a folder");
  if (parsed.curve != "auto" && parsed.curve != "always") {
    return OrchestratorUsage(
        absl::StrCat("--curve needs auto or always, not '", parsed.curve, "'"));
  }
  if (absl::Status checked = CheckResourceManagerArgs(resource_manager); !checked.ok()) {
    return OrchestratorUsage(checked.message());
  }

  OrchestratorOptions options;
  options.state_dir = AbsolutePath(parsed.state_dir);
  if (!parsed.checkpoint_root.empty()) {
    options.checkpoint_root = AbsolutePath(parsed.checkpoint_root);
  }
  if (!parsed.agent_timeout.empty()) {
    double seconds = 0;
    if (!absl::SimpleAtod(parsed.agent_timeout, &seconds) || !std::isfinite(seconds) ||
        seconds <= 0) {
      return OrchestratorUsage(absl::StrCat("--agent-timeout needs a number of seconds > 0, not '",
                                            parsed.agent_timeout, "'"));
    }
    if (seconds <= kAgentHeartbeatSeconds) {
      // An idle agent is heard only at its heartbeats: it would be lost between two of them.
      return OrchestratorUsage(
          absl::StrCat("--agent-timeout needs more seconds than the agents' "
                       "heartbeat period (",
                       kAgentHeartbeatSeconds, " s), not '", parsed.agent_timeout, "'"));
    }
    options.agent_timeout_seconds = seconds;
  }
  const bool default_rendezvous = parsed.rendezvous_listen.empty();
  options.rendezvous_endpoint = default_rendezvous
                                    ? RendezvousListenFor(parsed.listen, kRendezvousPort)
                                    : parsed.rendezvous_listen;
  OrchestratorServerOptions server_options;
  server_options.agent_endpoint = parsed.listen;
  server_options.client_endpoint = parsed.client_listen;
  ServerSecurityOptions& security = server_options.security;
  security.policy = parsed.curve == "always" ? CurvePolicy::kAlways : CurvePolicy::kUnlessLocal;
  if (!parsed.key_file.empty()) {
    absl::StatusOr<CurveKeyPair> keys = ReadSecretKeyFile(parsed.key_file);
    if (!keys.ok()) return CommandError(keys.status().message());
    security.server_keys = *std::move(keys);
  }
  if (!parsed.authorized_keys.empty()) {
    absl::StatusOr<AuthorizedKeys> keys = AuthorizedKeys::Load(parsed.authorized_keys);
    if (!keys.ok()) return CommandError(keys.status().message());
    security.authorized_keys = *std::move(keys);
  }

  std::unique_ptr<SlurmProvisioner> slurm;
  if (resource_manager.resource_manager == "slurm") {
    absl::StatusOr<std::unique_ptr<SlurmProvisioner>> started =
        StartSlurm(resource_manager, options.state_dir, parsed.listen,
                   CurveRequired(parsed.listen, security.policy), security.server_keys);
    if (!started.ok()) {
      return absl::IsInvalidArgument(started.status())
                 ? OrchestratorUsage(started.status().message())
                 : CommandError(started.status().message());
    }
    slurm = *std::move(started);
    options.provisioner = slurm.get();
    security.agent_key_families.push_back(kSlurmAgentKeyName);
  }

  std::unique_ptr<MetricsEndpoint> metrics;
  if (!parsed.metrics_address.empty()) {
    absl::StatusOr<ListenAddress> address = ParseListenAddress(parsed.metrics_address);
    if (!address.ok())
      return OrchestratorUsage(absl::StrCat("--metrics-address: ", address.status().message()));
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> started = MetricsEndpoint::Start(*address);
    if (!started.ok()) return CommandError(started.status().message());
    metrics = *std::move(started);
    server_options.metrics = metrics.get();
  }

  std::unique_ptr<Dashboard> dashboard;
  if (!parsed.web_address.empty()) {
    absl::StatusOr<std::unique_ptr<Dashboard>> started = StartDashboard(parsed, options.state_dir);
    if (!started.ok()) {
      return absl::IsInvalidArgument(started.status())
                 ? OrchestratorUsage(started.status().message())
                 : CommandError(started.status().message());
    }
    dashboard = *std::move(started);
    server_options.each_second =
        [&dashboard](const OrchestratorServerOptions::AskOrchestrator& ask) {
          dashboard->Refresh(ask);
        };
  } else if (!parsed.web_token_file.empty()) {
    return OrchestratorUsage("--web-token-file needs --web-address");
  }

  const std::string state_dir = options.state_dir;
  // After every refusal of the flags (a refused command makes no state directory), before the
  // orchestrator reads or writes the directory; held to the end of the command (of the process,
  // however it ends).
  // The folders the lock is about to make, deepest first: a start refused at its bind (a port
  // taken) leaves none of them behind, as it found the disk.
  std::vector<std::filesystem::path> made;
  std::error_code missing;
  for (std::filesystem::path at = std::filesystem::absolute(state_dir, missing).lexically_normal();
       !missing && !at.empty() && !std::filesystem::exists(at, missing) && at != at.parent_path();
       at = at.parent_path()) {
    made.push_back(at);
  }
  const auto unmake = [&made] {
    std::error_code ignored;
    if (!made.empty())
      std::filesystem::remove(made.front() / StateDirectoryLock::kFileName, ignored);
    for (const std::filesystem::path& folder : made) std::filesystem::remove(folder, ignored);
  };
  absl::StatusOr<StateDirectoryLock> state_lock = StateDirectoryLock::Acquire(state_dir);
  if (!state_lock.ok()) return CommandError(state_lock.status().message());
  // Before the start line, which tells scripts it is listening.
  const StopSignals signals(StopSignals::Second::kEndsProcess);
  absl::StatusOr<std::unique_ptr<OrchestratorServer>> server =
      OrchestratorServer::Bind(server_options, options, SystemClock());
  if (!server.ok() && default_rendezvous &&
      absl::StrContains(server.status().message(), "the rendezvous endpoint")) {
    // The default port is a preference only: agents learn the endpoint from each StartTask.
    options.rendezvous_endpoint = RendezvousListenFor(parsed.listen, "*");
    server = OrchestratorServer::Bind(server_options, options, SystemClock());
  }
  if (!server.ok()) {
    unmake();
    return CommandError(server.status().message());
  }
  // Stamped as every later line of the orchestrator's is.
  LogDaemonLine("orchestrator", absl::StrCat("agents connect to ", (*server)->agent_endpoint(),
                                             "; clients to ", (*server)->client_endpoint(),
                                             "; state in ", state_dir));
  LogDaemonLine("orchestrator", absl::StrCat("the workers of trials spanning agents meet at ",
                                             (*server)->rendezvous_endpoint()));
  if (metrics) {
    LogDaemonLine("orchestrator",
                  absl::StrCat("metrics at port ", metrics->port(), ", path /metrics"));
  }
  if (dashboard) {
    // The address to open: the one given (on every interface: this machine's name), the port it
    // got, and where the token comes from (never the token itself: logs are read by others).
    std::string host = ParseListenAddress(parsed.web_address, "127.0.0.1")->host;
    if (host == "0.0.0.0") host = HostName();
    LogDaemonLine("orchestrator",
                  absl::StrCat("web dashboard at http://", host, ":", dashboard->port(), "/",
                               parsed.web_token_file.empty()
                                   ? ""
                                   : absl::StrCat(" (add ?token= and the secret in ",
                                                  parsed.web_token_file, ")")));
  }
  if (absl::Status status = (*server)->Run(StopSignals::requested()); !status.ok()) {
    return CommandError(status.message());
  }
  LogDaemonLine("orchestrator", "stopped");
  return 0;
}

}  // namespace cohort
