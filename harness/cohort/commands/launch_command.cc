#include "harness/cohort/commands/launch_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/cohort/commands/command_exit.h"
#include "harness/cohort/process/this_process.h"
#include "harness/cohort/run/embedded_run.h"
#include "harness/cohort/run/launch_keys.h"
#include "harness/cohort/run/launched_rank.h"
#include "harness/cohort/run/port_probe.h"
#include "harness/cohort/run/resume_checks.h"
#include "harness/cohort/run/run_setup.h"
#include "runtime/agent/gpu_slots.h"
#include "runtime/agent/task_table.h"
#include "runtime/base/clock.h"
#include "runtime/config/experiment_config.h"
#include "runtime/launch/launcher_environment.h"
#include "runtime/launch/rank_network.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/trial_config.h"
#include "runtime/record/run_folder.h"

namespace cohort {
namespace {

constexpr char kLaunchUsage[] =
    "usage: cohort launch EXPERIMENT.yaml [--output DIR] [--set KEY=VALUE]... [--gpus]\n"
    "                     [--keys DIR] [--join-timeout SECONDS]\n"
    "\n"
    "Runs one rank of the experiment's trial where a cluster's launcher started this process,\n"
    "reading the rank, the world size, the local rank and rank 0's address from its variables:\n"
    "  torchrun, Kubernetes: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT\n"
    "  Slurm's srun:         SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_JOB_NODELIST\n"
    "                        (its first host is rank 0's; MASTER_ADDR and MASTER_PORT override)\n"
    "  Open MPI's mpirun:    OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE,\n"
    "                        OMPI_COMM_WORLD_LOCAL_RANK, MASTER_ADDR, MASTER_PORT\n"
    "Rank 0 serves the ranks at MASTER_ADDR:MASTER_PORT (under Slurm and mpirun default port\n"
    "29500; under torchrun, which sets it and whose own agent holds it, the port after it;\n"
    "COHORT_LAUNCH_PORT overrides both)\n"
    "and writes the run folder; the trial has one slot per rank (resources.slots_per_trial is\n"
    "the world size) and trains as under Cohort's agents. max_restarts is the launcher's: a\n"
    "failed rank fails the job, and when the launcher starts it again on the same run folder\n"
    "each trial continues from its latest checkpoint. Ranks on several machines (MASTER_ADDR\n"
    "not a loopback address) meet over CURVE: make the job's keys once with `cohort keygen\n"
    "--out DIR --launch WORLD_SIZE` and give every rank the folder (--keys DIR).\n"
    "\n"
    "  --output DIR            rank 0's run folder (default runs/<name>); an existing one that\n"
    "                          holds this experiment is continued\n"
    "  --set KEY=VALUE         override a config value by its dotted path\n"
    "  --gpus                  each rank trains on the GPU of its local rank (else a CPU slot)\n"
    "  --keys DIR              the job's CURVE keys (`cohort keygen --launch`): needed when\n"
    "                          MASTER_ADDR is not a loopback address\n"
    "  --join-timeout SECONDS  how long rank 0 waits for every rank, and a rank for its task\n"
    "                          (default 300)\n"
    "\n"
    "Exit status: 0 completed, 1 error, 2 bad usage, 130 stopped by SIGINT or SIGTERM (on every\n"
    "rank when rank 0 was: launch them all again to continue).\n";

struct LaunchArgs {
  std::string experiment;
  std::string output;
  std::vector<std::string> overrides;
  std::string keys;
  bool gpus = false;
  double join_seconds = 300;
};

int LaunchUsage(absl::string_view problem) {
  return UsageError("cohort launch", problem, kLaunchUsage);
}

std::optional<LaunchArgs> ParseLaunchArgs(const std::vector<std::string>& args, int* exit_code) {
  LaunchArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kLaunchUsage, stdout);
      *exit_code = 0;
      return std::nullopt;
    }
    if (arg == "--gpus") {
      parsed.gpus = true;
    } else if (arg == "--output" || arg == "--set" || arg == "--keys" || arg == "--join-timeout") {
      if (i + 1 == args.size()) {
        *exit_code = LaunchUsage(absl::StrCat(arg, " needs a value"));
        return std::nullopt;
      }
      const std::string& value = args[++i];
      if (arg == "--output") parsed.output = value;
      if (arg == "--set") parsed.overrides.push_back(value);
      if (arg == "--keys") parsed.keys = value;
      if (arg == "--join-timeout" &&
          (!absl::SimpleAtod(value, &parsed.join_seconds) || !(parsed.join_seconds > 0))) {
        *exit_code = LaunchUsage(
            absl::StrCat("--join-timeout needs a number of seconds > 0, not '", value, "'"));
        return std::nullopt;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      *exit_code = LaunchUsage(absl::StrCat("unknown option '", arg, "'"));
      return std::nullopt;
    } else if (parsed.experiment.empty()) {
      parsed.experiment = arg;
    } else {
      *exit_code = LaunchUsage(absl::StrCat("unexpected argument '", arg, "'"));
      return std::nullopt;
    }
  }
  if (parsed.experiment.empty()) {
    *exit_code = LaunchUsage("missing EXPERIMENT.yaml");
    return std::nullopt;
  }
  return parsed;
}

// The rank's one slot: a CPU, or the GPU of its local rank.
absl::StatusOr<AgentSlot> RankSlot(const LaunchPlacement& placement, bool gpus) {
  if (!gpus) return CpuSlots(1).front();
  // Under a launcher that hands each job its GPUs (Slurm's --gpus), only those.
  const std::optional<std::string> visible = CudaVisibleDevices();
  absl::StatusOr<std::vector<AgentSlot>> found = VisibleGpuSlots(visible);
  if (!found.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--gpus: ", found.status().message()));
  }
  if (placement.local_rank >= found->size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--gpus: this rank's local rank is ", placement.local_rank, " but this machine shows ",
        found->size(), " NVIDIA GPU(s) (", kNvidiaGpusFolder,
        visible ? absl::StrCat(", of them those CUDA_VISIBLE_DEVICES=", *visible, " names") : "",
        "): start at most one rank per GPU"));
  }
  AgentSlot slot = (*found)[placement.local_rank];
  slot.index = 0;  // the agent's only slot; device_id stays the GPU's
  return slot;
}

// How this rank meets the others: where rank 0 listens, this machine's address as they reach it,
// and the job's CURVE keys when the ranks meet off loopback.
struct RankNetwork {
  bool loopback = true;
  std::string advertise_address;
  std::optional<CurveClientConfig> agent_keys;
  ServerSecurityOptions server_security;  // rank 0's
};

absl::StatusOr<RankNetwork> MeetRanks(const LaunchArgs& args, const LaunchPlacement& placement) {
  RankNetwork network;
  network.loopback = IsLoopbackName(placement.master_addr);
  if (!network.loopback && args.keys.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rank 0's address is ", placement.master_addr,
        " (MASTER_ADDR, or the first host of SLURM_JOB_NODELIST), not this machine's loopback: "
        "ranks on several machines meet over CURVE; make the job's keys once with `cohort keygen "
        "--out DIR --launch ",
        placement.world_size, "` and give every rank the folder with --keys DIR"));
  }
  // Rank 0's name may resolve only once its host is up (a Kubernetes pod's, say): retried.
  absl::StatusOr<std::string> address = AddressToward(placement.master_addr);
  for (const double start = SystemClock().MonotonicSeconds();
       absl::IsUnavailable(address.status()) &&
       SystemClock().MonotonicSeconds() - start < args.join_seconds;
       address = AddressToward(placement.master_addr)) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (!address.ok()) return address.status();
  network.advertise_address = *address;
  if (args.keys.empty()) return network;
  absl::StatusOr<CurveClientConfig> mine =
      LaunchAgentKeys(args.keys, LaunchedAgentId(placement.rank, placement.world_size));
  if (!mine.ok()) return mine.status();
  network.agent_keys = *std::move(mine);
  if (placement.rank == 0) {
    absl::StatusOr<ServerSecurityOptions> server = LaunchServerSecurity(args.keys);
    if (!server.ok()) return server.status();
    network.server_security = *std::move(server);
    network.server_security.policy = CurvePolicy::kAlways;  // the agents use their keys anyway
  }
  return network;
}

// The overrides every rank loads the experiment with: its own, then what the launch decides.
std::vector<std::string> LaunchOverrides(const LaunchArgs& args, const LaunchPlacement& placement) {
  std::vector<std::string> overrides = args.overrides;
  overrides.push_back(absl::StrCat("resources.slots_per_trial=", placement.world_size));
  overrides.push_back("max_restarts=0");
  return overrides;
}

// What a rank other than 0 asks of each task rank 0 places on it: rank 0 trains a world of this
// rank's size, places this rank's launcher rank here, and trains what this rank's own experiment
// and --set say (rank 0's alone would train otherwise, and say nothing).
absl::Status CheckTaskAgainstThisRank(const StartTask& task, const LaunchPlacement& placement,
                                      const ExperimentConfig& mine) {
  const std::string rank = absl::StrCat("rank ", placement.rank);
  if (task.world_size != placement.world_size) {
    return absl::FailedPreconditionError(
        absl::StrCat(rank, ": rank 0 trains a world of ", task.world_size, " ranks, but ",
                     placement.launcher, " started this one in a world of ", placement.world_size,
                     ": every rank needs the same world size"));
  }
  for (const RankAssignment& assigned : task.ranks) {
    if (assigned.rank != placement.rank) {
      return absl::FailedPreconditionError(
          absl::StrCat(rank, ": rank 0 placed trial rank ", assigned.rank, " here, but ",
                       placement.launcher, " started this process as rank ", placement.rank));
    }
  }
  // Rank 0 sends its trial's config (TrialConfigYaml): this rank's experiment is made the same
  // way, with the same length, and with the single searcher's hyperparameters, or the trial's
  // under another searcher (whose choice only rank 0 makes).
  absl::StatusOr<ExperimentConfig> theirs = ParseExperimentConfig(task.worker.config_yaml);
  if (!theirs.ok()) return absl::OkStatus();  // the workers' to refuse, naming the problem
  absl::StatusOr<uint64_t> batches = MaxLengthInBatches(*theirs);
  if (!batches.ok()) return absl::OkStatus();
  // A seed the file leaves out is drawn by rank 0 (LoadRunConfig): this rank takes the same.
  ExperimentConfig seeded = mine;
  if (!mine.experiment_seed && theirs->experiment_seed) {
    absl::StatusOr<ExperimentConfig> reseeded = ParseExperimentConfig(
        mine.effective_yaml,
        {absl::StrCat("reproducibility.experiment_seed=", *theirs->experiment_seed)});
    if (!reseeded.ok()) return reseeded.status();
    seeded = *std::move(reseeded);
  }
  absl::StatusOr<std::string> yaml = TrialConfigYaml(
      seeded, mine.searcher.name == "single" ? mine.hyperparameters : theirs->hyperparameters,
      *batches);
  absl::StatusOr<ExperimentConfig> compared =
      yaml.ok() ? ParseExperimentConfig(*yaml) : absl::StatusOr<ExperimentConfig>(yaml.status());
  if (!compared.ok()) return compared.status();
  const std::vector<std::string> changes = TrainingChanges(*theirs, *compared, "at rank 0", "here");
  if (changes.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      rank, ": this rank's experiment (", mine.name.empty() ? "its config" : mine.name,
      " with its --set) trains otherwise than rank 0's: ", absl::StrJoin(changes, "; "),
      "; start every rank with the same experiment and --set"));
}

// Rank 0: the orchestrator, its own agent, and the run folder.
int RunRankZero(const LaunchArgs& args, const LaunchPlacement& placement, const AgentSlot& slot,
                const std::string& executable, const RankNetwork& network) {
  // The config as asked, for its name and slot count; the launch then sets what it decides.
  absl::StatusOr<ExperimentConfig> asked = LoadExperimentConfig(args.experiment, args.overrides);
  if (!asked.ok()) return CommandError(asked.status());
  const std::string path = args.output.empty() ? "runs/" + asked->name : args.output;

  // An existing run folder of this experiment is continued.
  std::optional<StoredRun> stored;
  if (absl::StatusOr<StoredRun> opened = OpenStoredRun(path); opened.ok()) {
    stored = *std::move(opened);
  } else if (!absl::IsNotFound(opened.status())) {
    return CommandError(opened.status());
  }
  absl::StatusOr<ExperimentConfig> config =
      LoadRunConfig(args.experiment, LaunchOverrides(args, placement),
                    stored ? stored->config.experiment_seed : std::nullopt);
  if (!config.ok()) return CommandError(config.status());
  std::optional<std::string> slot_change;  // said once nothing else refuses the run
  if (stored) {
    if (absl::Status can = CheckCanContinue(*stored, *config, "cohort launch"); !can.ok()) {
      return CommandError(can);
    }
    slot_change = SlotChangeNote(*stored, *config);
  }
  if (asked->slots_per_trial != placement.world_size) {
    std::fprintf(stderr,
                 "resources.slots_per_trial is %u in the config; the launcher's world size, %u, "
                 "decides\n",
                 asked->slots_per_trial, placement.world_size);
  }
  // A port another job holds is refused before the run folder is written.
  const std::string host = network.loopback ? "127.0.0.1" : "0.0.0.0";
  const std::string port_hint = absl::StrCat(
      "rank 0 serves the ranks at port ", placement.master_port,
      ", from MASTER_PORT (under torchrun with its agent's store, the port after it) or "
      "COHORT_LAUNCH_PORT: if another job holds it, give this job another");
  if (absl::Status free = CheckTcpPortFree(host, placement.master_port); !free.ok()) {
    std::fprintf(stderr, "error: %s; %s\n", std::string(free.message()).c_str(), port_hint.c_str());
    return 1;
  }
  absl::StatusOr<PreparedRun> prepared = PrepareSubmission(
      *std::move(config), stored ? std::optional<RunFolder>(stored->folder) : std::nullopt, path);
  if (!prepared.ok()) return CommandError(prepared.status());
  LocalSubmission& submission = prepared->submission;
  std::fprintf(stderr, "experiment %s: %srun folder %s; rank 0 of %u (%s) at %s:%u\n",
               submission.config.name.c_str(), stored ? "continuing the " : "",
               submission.folder.path().c_str(), placement.world_size, placement.launcher.c_str(),
               placement.master_addr.c_str(), placement.master_port);
  if (slot_change) std::fprintf(stderr, "%s\n", slot_change->c_str());

  EmbeddedRunOptions options;
  options.slots = {slot};
  options.executable = executable;
  options.agent_endpoint = absl::StrCat("tcp://", host, ":", placement.master_port);
  options.rendezvous_endpoint = absl::StrCat("tcp://", host, ":*");
  options.agent_id = LaunchedAgentId(0, placement.world_size);
  options.advertise_address = network.advertise_address;
  options.security = network.server_security;
  options.agent_curve = network.agent_keys;
  for (uint32_t rank = 0; rank < placement.world_size; ++rank) {
    options.rank_agent_ids.push_back(LaunchedAgentId(rank, placement.world_size));
  }
  options.registration_seconds = args.join_seconds;
  options.agent_endpoint_hint = port_hint;
  options.continue_command =
      absl::StrCat("every rank's launch again: cohort launch ", args.experiment, " --output");
  return RunEmbedded(std::move(submission), options);
}

}  // namespace

int RunLaunchCommand(const std::vector<std::string>& arguments) {
  int exit_code = 0;
  std::optional<LaunchArgs> args = ParseLaunchArgs(arguments, &exit_code);
  if (!args) return exit_code;
  absl::StatusOr<LaunchPlacement> placement = ReadLauncherEnvironment(SystemEnvironment());
  if (!placement.ok()) return CommandError(placement.status());
  absl::StatusOr<RankNetwork> network = MeetRanks(*args, *placement);
  if (!network.ok()) return CommandError(network.status());
  absl::StatusOr<AgentSlot> slot = RankSlot(*placement, args->gpus);
  if (!slot.ok()) return CommandError(slot.status());
  absl::StatusOr<std::string> executable = SelfExecutable();
  if (!executable.ok()) return CommandError(executable.status());
  if (placement->rank == 0) {
    return RunRankZero(*args, *placement, *slot, *executable, *network);
  }
  // Every rank reads the experiment: one it cannot read, or one that trains otherwise than rank
  // 0's, is an error here rather than silence.
  absl::StatusOr<ExperimentConfig> mine =
      LoadExperimentConfig(args->experiment, LaunchOverrides(*args, *placement));
  if (!mine.ok()) return CommandError(mine.status());

  LaunchedRankOptions options;
  options.rank_zero_host = placement->master_addr;
  options.rank_zero_port = placement->master_port;
  options.agent_id = LaunchedAgentId(placement->rank, placement->world_size);
  options.slot = *slot;
  options.advertise_address = network->advertise_address;
  options.curve = network->agent_keys;
  std::error_code error;
  // Its own folder: a later job at the same port (or a second process started as this rank) must
  // not write into this one's task folders.
  options.work_dir = (std::filesystem::temp_directory_path(error) /
                      absl::StrCat("cohort-launch-", placement->master_port, "-", options.agent_id,
                                   "-", ::getpid()))
                         .string();
  options.executable = *executable;
  options.join_seconds = args->join_seconds;
  options.check_task = [placement = *placement, mine = *std::move(mine)](const StartTask& task) {
    return CheckTaskAgainstThisRank(task, placement, mine);
  };
  return RunLaunchedRank(options);
}

}  // namespace cohort
