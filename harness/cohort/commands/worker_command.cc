#include "harness/cohort/commands/worker_command.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/base/clock.h"
#include "runtime/base/collective_failure.h"
#include "runtime/base/permanent_failure.h"
#include "runtime/config/experiment_config.h"
#include "runtime/control/channel_rendezvous_store.h"
#include "runtime/control/worker_link.h"
#include "runtime/security/curve_client_config.h"
#include "runtime/security/rendezvous_key_variables.h"
#include "runtime/trial/trial_runner.h"
#include "runtime/worker/one_slot_exchange.h"
#include "runtime/worker/supervisor_watch.h"
#include "runtime/worker/worker.h"

namespace cohort {
namespace {

volatile std::sig_atomic_t stop_signal = 0;

extern "C" void OnStopSignal(int) { stop_signal = 1; }

struct WorkerArgs {
  std::string run_dir, plugin, endpoint, checkpoint_root, resume;
  bool validate_at_resume = false;  // --validate-at-resume 1
  // Where the ranks meet when they span agents (a RendezvousService of the orchestrator's), and
  // the task's key prefix there; empty: the supervisor at `endpoint` serves the rendezvous.
  std::string rendezvous, rendezvous_prefix;
  uint64_t trial_id = 0;
  uint64_t trial_number = 0;  // --trial-number; 0: the trial id
  uint32_t rank = 0, size = 1, attempt = 0;
};

absl::StatusOr<WorkerArgs> ParseArgs(const std::vector<std::string>& args) {
  WorkerArgs parsed;
  std::map<std::string, std::string*> flags = {{"--run-dir", &parsed.run_dir},
                                               {"--plugin", &parsed.plugin},
                                               {"--endpoint", &parsed.endpoint},
                                               {"--checkpoint-root", &parsed.checkpoint_root},
                                               {"--resume", &parsed.resume},
                                               {"--rendezvous", &parsed.rendezvous},
                                               {"--rendezvous-prefix", &parsed.rendezvous_prefix}};
  std::string trial_id, trial_number = "0", rank = "0", size = "1", attempt = "0",
                         validate_at_resume = "0";
  flags["--trial-id"] = &trial_id;
  flags["--trial-number"] = &trial_number;
  flags["--validate-at-resume"] = &validate_at_resume;
  flags["--rank"] = &rank;
  flags["--size"] = &size;
  flags["--attempt"] = &attempt;
  for (size_t i = 0; i < args.size(); ++i) {
    auto flag = flags.find(args[i]);
    if (flag == flags.end() || i + 1 == args.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("worker: unexpected argument '", args[i], "'"));
    }
    *flag->second = args[++i];
  }
  if (parsed.run_dir.empty() || parsed.plugin.empty() || parsed.endpoint.empty() ||
      parsed.checkpoint_root.empty() || !absl::SimpleAtoi(trial_id, &parsed.trial_id) ||
      !absl::SimpleAtoi(trial_number, &parsed.trial_number) ||
      !absl::SimpleAtoi(rank, &parsed.rank) || !absl::SimpleAtoi(size, &parsed.size) ||
      !absl::SimpleAtoi(attempt, &parsed.attempt) || parsed.size == 0 ||
      parsed.rank >= parsed.size || (validate_at_resume != "0" && validate_at_resume != "1")) {
    return absl::InvalidArgumentError(
        "worker: needs --run-dir, --plugin, --trial-id, --endpoint and --checkpoint-root, and a "
        "--rank below --size (--validate-at-resume takes 0 or 1)");
  }
  parsed.validate_at_resume = validate_at_resume == "1";
  return parsed;
}

// The keys the agent handed over for a CURVE rendezvous (rendezvous_key_variables.h), or nullopt
// without them. Taken out of the environment: nothing the plugin starts inherits the secret key.
absl::StatusOr<std::optional<CurveClientConfig>> TakeRendezvousKeys() {
  absl::StatusOr<std::optional<CurveClientConfig>> keys =
      ReadRendezvousKeyVariables([](const char* name) { return std::getenv(name); });
  for (const char* name :
       {kRendezvousServerKeyVariable, kRendezvousPublicKeyVariable, kRendezvousSecretKeyVariable}) {
    ::unsetenv(name);
  }
  return keys;
}

// Sends the trial's events to the supervisor; a stop request comes from it or from SIGTERM.
//
// Heartbeats come from the training loop itself: one right after WorkerHello, then one from any
// call the loop makes into these events (each optimizer step asks StopRequested; rank 0 also
// reports, each validation batch says StillWorking) once kHeartbeatIntervalSeconds have passed
// since the last. Silence therefore means the loop is blocked, not merely alive. The loop makes
// no such call, and so sends nothing, through the first agreement of the ranks on the
// parameters, the merging of validation metrics and the writing of a checkpoint: a long one looks
// silent though not stuck.
class LinkedEvents final : public TrialEvents {
 public:
  LinkedEvents(WorkerLink& link, uint64_t trial_id, uint32_t rank)
      : link_(link), trial_id_(trial_id), rank_(rank) {}

  // The runner whose batches the heartbeats report; until then they report 0.
  void Follow(const TrialRunner& runner) { runner_ = &runner; }

  // Sends a Heartbeat now.
  void Beat() {
    last_beat_ = std::chrono::steady_clock::now();
    Send(Heartbeat{trial_id_, rank_, SystemClock().UnixSeconds(),
                   runner_ != nullptr ? runner_->batches_trained() : 0});
  }

  // Commands that arrived while the link was busy with something else (a rendezvous).
  void Take(const std::vector<WorkerCommand>& commands) {
    for (const WorkerCommand& command : commands) {
      if (std::holds_alternative<StopCommand>(command)) stop_ = true;
    }
  }

  void OnMetrics(const MetricsReport& report) override {
    Send(report);
    MaybeBeat();
  }
  void OnProgress(const ProgressReport& report) override {
    Send(report);
    MaybeBeat();
  }
  void OnCheckpoint(const CheckpointReport& report) override {
    Send(report);
    MaybeBeat();
  }
  void StillWorking() override { MaybeBeat(); }
  // Asked after every optimizer step; the channel is read (and a heartbeat considered) at most
  // every 10 ms so a fast loop pays almost nothing for it.
  bool StopRequested() override {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll_ >= std::chrono::milliseconds(10)) {
      last_poll_ = now;
      while (std::optional<WorkerCommand> command = link_.PollCommand()) {
        if (std::holds_alternative<StopCommand>(*command)) stop_ = true;
      }
      MaybeBeat(now);
    }
    return stop_ || stop_signal != 0;
  }

 private:
  // A heartbeat once kHeartbeatIntervalSeconds have passed since the last one.
  void MaybeBeat(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) {
    if (now - last_beat_ >= std::chrono::duration<double>(kHeartbeatIntervalSeconds)) Beat();
  }

  void Send(const WorkerMessage& message) {
    if (absl::Status status = link_.Send(message); !status.ok()) {
      std::fprintf(stderr, "worker: cannot report to the supervisor: %s\n",
                   std::string(status.message()).c_str());
    }
  }

  WorkerLink& link_;
  const uint64_t trial_id_;
  const uint32_t rank_;
  const TrialRunner* runner_ = nullptr;
  bool stop_ = false;
  std::chrono::steady_clock::time_point last_poll_;
  std::chrono::steady_clock::time_point last_beat_;
};

// One trial's worker, built from the flags and the environment (COHORT_TASK_ID, COHORT_DEVICE,
// COHORT_GLOO_HOSTNAME, COHORT_EXCHANGE_AT_ONE_SLOT), run to its end. With `rendezvous_keys`, the
// link to --rendezvous is a CURVE client.
absl::StatusOr<TrialExit> RunTrial(const WorkerArgs& args,
                                   const std::optional<CurveClientConfig>& rendezvous_keys,
                                   WorkerLink& link) {
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(args.run_dir + "/config.yaml");
  if (!config.ok()) return config.status();
  LinkedEvents events(link, args.trial_id, args.rank);
  WorkerOptions options;
  options.config = *std::move(config);
  options.plugin = args.plugin;
  options.checkpoint_root = args.checkpoint_root;
  options.resume = args.resume;
  options.validate_at_resume = args.validate_at_resume;
  options.trial_id = args.trial_id;
  options.trial_number = args.trial_number;
  options.rank = args.rank;
  options.size = args.size;
  options.attempt = args.attempt;
  if (const char* task = std::getenv("COHORT_TASK_ID")) {
    options.task_id = std::strtoull(task, nullptr, 10);
  }
  if (const char* device = std::getenv("COHORT_DEVICE")) options.device = device;
  if (const char* hostname = std::getenv("COHORT_GLOO_HOSTNAME")) options.gloo_hostname = hostname;
  options.exchange_at_one_slot =
      ExchangeAtOneSlotRequested(std::getenv(kExchangeAtOneSlotVariable));
  options.events = &events;
  options.stop_signalled = [] { return stop_signal != 0; };
  // With more than one slot the ranks meet at the supervisor, or at --rendezvous when they span
  // agents; that link closes once the groups are formed.
  std::unique_ptr<WorkerLink> rendezvous_link;
  std::optional<ChannelRendezvousStore> store;
  if (args.size > 1) {
    if (!args.rendezvous.empty()) {
      WorkerLinkOptions link_options;
      if (rendezvous_keys) {
        link_options.setup_socket = [&rendezvous_keys](zmq::socket_t& socket) {
          return ConfigureCurveClient(socket, *rendezvous_keys);
        };
      }
      absl::StatusOr<std::unique_ptr<WorkerLink>> connected =
          WorkerLink::Connect(args.rendezvous, link_options);
      if (!connected.ok()) return connected.status();
      rendezvous_link = *std::move(connected);
    }
    store.emplace(rendezvous_link != nullptr ? *rendezvous_link : link);
    options.rendezvous = &*store;
    // Each attempt forms its groups under its own keys.
    options.group_prefix = args.rendezvous.empty()
                               ? absl::StrCat("trial-", args.trial_id, "/attempt-", args.attempt)
                               : absl::StrCat(args.rendezvous_prefix, "attempt-", args.attempt);
  }
  absl::StatusOr<std::unique_ptr<Worker>> worker = Worker::Create(std::move(options));
  // Commands that came while the link served the rendezvous.
  if (store) events.Take(store->TakePendingCommands());
  store.reset();
  rendezvous_link.reset();
  if (!worker.ok()) return worker.status();
  WorkerHello hello;
  hello.trial_id = args.trial_id;
  hello.pid = ::getpid();
  hello.rank = args.rank;
  hello.batches_trained = (*worker)->runner().batches_trained();
  hello.total_batches = (*worker)->runner().schedule().total_batches;
  if (absl::Status status = link.Send(hello); !status.ok()) return status;
  events.Follow((*worker)->runner());
  events.Beat();
  return (*worker)->Run();
}

}  // namespace

int RunWorkerCommand(const std::vector<std::string>& arguments) {
  // A worker never outlives its supervisor (the agent, or `cohort run`): killed with it, it cannot
  // go on training, or write checkpoints, beside the copy the orchestrator places again. The
  // supervisor names itself, so a worker orphaned before prctl took effect notices too.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const char* supervisor = std::getenv("COHORT_SUPERVISOR_PID");
  if (supervisor != nullptr && std::atoll(supervisor) != static_cast<long long>(::getppid())) {
    std::fprintf(stderr, "worker: its supervisor (pid %s) is gone\n", supervisor);
    return 1;
  }
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, OnStopSignal);
  // A peer rank that died leaves its Gloo connection closed: writing to it must fail the
  // collective with an error naming the phase, not kill this healthy rank with SIGPIPE (which
  // would also blame it for the peer's death).
  std::signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<WorkerArgs> args = ParseArgs(arguments);
  if (!args.ok()) {
    std::fprintf(stderr, "%s\n", std::string(args.status().message()).c_str());
    return 2;
  }
  // Before anything else runs in this process.
  const absl::StatusOr<std::optional<CurveClientConfig>> rendezvous_keys = TakeRendezvousKeys();
  // Nor does it train on while its supervisor is stopped: it stops too, and goes on when the
  // supervisor, continued, continues it (only a Cohort supervisor, which names itself, does).
  std::optional<SupervisorWatch> watch;
  if (supervisor != nullptr) {
    const int supervisor_pid = ::getppid();
    watch.emplace(supervisor_pid, kSupervisorWatchSeconds, [supervisor_pid](double seconds) {
      std::fprintf(stderr,
                   "worker: was stopped for %.1f s with its supervisor (pid %d), which was "
                   "stopped; going on\n",
                   seconds, supervisor_pid);
    });
  }
  absl::StatusOr<std::unique_ptr<WorkerLink>> link = WorkerLink::Connect(args->endpoint);
  if (!link.ok()) {
    std::fprintf(stderr, "worker: %s\n", std::string(link.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<TrialExit> exit = rendezvous_keys.ok()
                                       ? RunTrial(*args, *rendezvous_keys, **link)
                                       : absl::StatusOr<TrialExit>(rendezvous_keys.status());
  TrialFinished finished;
  finished.trial_id = args->trial_id;
  finished.rank = static_cast<int32_t>(args->rank);
  finished.exit = exit.ok() ? *exit : TrialExit::kFailed;
  if (!exit.ok()) {
    finished.message = std::string(exit.status().message());
    // Not "error: ": the orchestrator tells the trial's failure itself, where it tells the
    // plugin's error lines as they come.
    std::fprintf(stderr, "failed: %s\n", finished.message.c_str());
  }
  (void)(*link)->Send(finished);
  std::fflush(stdout);
  if (exit.ok()) return 0;
  if (IsPermanentFailure(exit.status())) return kPermanentFailureExitCode;
  return IsCollectiveFailure(exit.status()) ? kCollectiveFailureExitCode : 1;
}

}  // namespace cohort
