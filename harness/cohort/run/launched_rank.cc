#include "harness/cohort/run/launched_rank.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "harness/cohort/process/stop_signals.h"
#include "harness/cohort/process/this_process.h"
#include "runtime/agent/agent.h"
#include "runtime/agent/rank_outcome.h"
#include "runtime/base/clock.h"
#include "runtime/launch/rank_network.h"
#include "runtime/record/run_folder.h"

namespace cohort {
namespace {

// How often the main thread looks at the agent's progress.
constexpr auto kPollInterval = std::chrono::milliseconds(50);
// Probes of rank 0 in a row (one each 4 probe intervals, a second on these machines) that find it
// serving no more while a task runs, before this rank stops the task: refused (rank 0's host
// answers, and nothing listens where it served), or not answered at all (a lost host, or a busy
// network or name service: given longer).
constexpr uint32_t kRefusedProbesToStop = 3;
constexpr uint32_t kUnansweredProbesToStop = 30;
// Registrations in a row that rank 0 did not answer on a connection that was up (each waits
// kAgentUnheardHelloSeconds), before this rank gives up: rank 0 then most likely holds another
// process's connection under this rank's id. Rank 0's ROUTER drops a lost host's connection
// within about 12 s, so a rank started again after its host was lost is heard well before this.
constexpr uint32_t kUnheardRegistrationsToFail = 6;

// What the agent's hooks tell the main thread.
class RankProgress {
 public:
  void Started(uint64_t task_id) {
    std::lock_guard<std::mutex> lock(mutex_);
    running_.insert(task_id);
    ever_started_ = true;
  }

  void Exited(uint64_t task_id, const std::vector<TaskExit>& exits) {
    std::lock_guard<std::mutex> lock(mutex_);
    running_.erase(task_id);
    for (const TaskExit& exit : exits) {
      if (exit.exit_code != 0 || exit.signal != 0) {
        failure_ = absl::StrCat("task ", task_id, ": ", exit.reason);
      }
      stopped_ = StoppedTheTrial(exit);  // the latest task's word
    }
  }

  // The latest task stopped its trial on rank 0's word (rank 0 was asked to stop): the job
  // stopped, not completed.
  bool stopped() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopped_;
  }

  // True once a task has run and none runs now.
  bool Idle() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ever_started_ && running_.empty();
  }

  bool EverStarted() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ever_started_;
  }

  // The agent's handshake with rank 0's orchestrator succeeded once.
  void Connected() {
    std::lock_guard<std::mutex> lock(mutex_);
    ever_connected_ = true;
  }
  bool EverConnected() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ever_connected_;
  }

  // Why this rank cannot take part, which ends it: a task it refused (it contradicts the rank;
  // rank 0 was told, and fails its trial), or rank 0's refusal of its registration.
  void Refused(absl::string_view why) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!refused_) refused_ = std::string(why);
  }

  std::optional<std::string> refused() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return refused_;
  }

  std::optional<std::string> failure() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
  }

  // Registrations in a row that rank 0 left unanswered on a live connection.
  void Unheard(uint32_t in_a_row) {
    std::lock_guard<std::mutex> lock(mutex_);
    unheard_ = in_a_row;
  }
  uint32_t unheard() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return unheard_;
  }

 private:
  mutable std::mutex mutex_;
  std::set<uint64_t> running_;
  bool ever_started_ = false;
  bool ever_connected_ = false;
  bool stopped_ = false;
  uint32_t unheard_ = 0;
  std::optional<std::string> failure_;
  std::optional<std::string> refused_;
};

}  // namespace

int RunLaunchedRank(const LaunchedRankOptions& options) {
  std::error_code made;
  std::filesystem::create_directories(options.work_dir, made);
  if (made) {
    std::fprintf(stderr, "error: cannot create %s: %s\n", options.work_dir.c_str(),
                 made.message().c_str());
    return 1;
  }
  const std::string log_path = absl::StrCat(options.work_dir, "/agent.log");
  RankProgress progress;
  std::atomic<int> stop_requests{0};

  AgentOptions agent;
  const std::string orchestrator =
      absl::StrCat("tcp://", options.rank_zero_host, ":", options.rank_zero_port);
  agent.orchestrator = orchestrator;
  agent.agent_id = options.agent_id;
  agent.hostname = HostName();
  agent.cohort_version = COHORT_VERSION;
  agent.slots = {options.slot};
  agent.work_dir = options.work_dir;
  agent.executable = options.executable;
  agent.base_environment = InheritedEnvironment();
  agent.advertise_address = options.advertise_address;
  agent.curve = options.curve;
  agent.log = [log_path](absl::string_view line) { AppendLine(log_path, line).IgnoreError(); };
  agent.stop_requests = &stop_requests;
  agent.on_task_started = [&progress](uint64_t task_id) { progress.Started(task_id); };
  agent.on_connected = [&progress] { progress.Connected(); };
  agent.on_registration_refused = [&progress, &options, &orchestrator](absl::string_view why) {
    progress.Refused(absl::StrCat("rank 0 at ", orchestrator, " refused this rank (",
                                  options.agent_id, "): ", why));
  };
  agent.on_registration_unheard = [&progress](uint32_t in_a_row) { progress.Unheard(in_a_row); };
  agent.on_task_exited = [&progress](uint64_t task_id, const std::vector<TaskExit>& exits) {
    progress.Exited(task_id, exits);
  };
  if (options.check_task) {
    agent.check_task = [&options, &progress](const StartTask& task) {
      absl::Status checked = options.check_task(task);
      if (!checked.ok()) progress.Refused(checked.message());
      return checked;
    };
  }

  // The agent's thread never takes SIGINT or SIGTERM: they go to this one, which counts them.
  const StopSignals signals(StopSignals::Second::kCounted);
  absl::Status agent_status;
  std::atomic<bool> agent_ended{false};
  std::thread agent_thread = StartWithoutStopSignals([&] {
    agent_status = Agent(std::move(agent)).Run();
    agent_ended.store(true);
  });

  const double started = SystemClock().MonotonicSeconds();
  double probed_at = 0;
  bool rank_zero_probed = false;  // a probe found rank 0 serving
  uint32_t refused_probes = 0;    // in a row, while a task runs
  uint32_t unanswered_probes = 0;  // the same
  bool rank_zero_gone = false;     // this rank stopped its task for it (a stop request of its own)
  std::optional<std::string> error;
  while (!agent_ended.load()) {
    std::this_thread::sleep_for(kPollInterval);
    const double now = SystemClock().MonotonicSeconds();
    const int wanted = StopSignals::count() + (rank_zero_gone ? 1 : 0);
    if (wanted > stop_requests.load()) stop_requests.store(wanted);
    if (stop_requests.load() > 0) continue;  // the agent stops its task and returns
    // While a task runs, a rank 0 that serves no more has ended, and its orchestrator with it
    // (killed, or its node lost): this rank's task could only wait for peers that are gone, up to
    // its collective_timeout. It is stopped instead (the agent's grace, then a kill).
    if (progress.EverStarted() && !progress.Idle() &&
        now - probed_at >= 4 * options.probe_interval_seconds) {
      probed_at = now;
      const ProbeAnswer answer = ProbeConnections(options.rank_zero_host, options.rank_zero_port,
                                                  options.probe_interval_seconds);
      refused_probes = answer == ProbeAnswer::kRefused ? refused_probes + 1 : 0;
      unanswered_probes = answer == ProbeAnswer::kNoAnswer ? unanswered_probes + 1 : 0;
      if (refused_probes >= kRefusedProbesToStop || unanswered_probes >= kUnansweredProbesToStop) {
        error = absl::StrCat("rank 0 at ", orchestrator, " no longer answers",
                             refused_probes > 0 ? ": it ended (its output says why)"
                                                : " (its host is lost, or the network to it)",
                             "; this rank stopped its task, which could only wait for it");
        AppendLine(log_path, *error).IgnoreError();
        rank_zero_gone = true;
        stop_requests.store(1);
        continue;
      }
    }
    if (std::optional<std::string> refused = progress.refused()) {
      error = *std::move(refused);
      break;
    }
    if (progress.Idle() && now - probed_at >= options.probe_interval_seconds) {
      probed_at = now;
      if (!AcceptsConnections(options.rank_zero_host, options.rank_zero_port,
                              options.probe_interval_seconds)) {
        break;  // rank 0 has ended: so has the job
      }
    }
    // Before its first task, a rank 0 that served and serves no more has ended without placing
    // one here (it refused this rank, or failed itself): said at once, not at --join-timeout.
    if (!progress.EverStarted() && now - probed_at >= 4 * options.probe_interval_seconds) {
      probed_at = now;
      const bool serves = AcceptsConnections(options.rank_zero_host, options.rank_zero_port,
                                             options.probe_interval_seconds);
      if (!serves && (rank_zero_probed || progress.EverConnected())) {
        error = absl::StrCat("rank 0 at ", orchestrator,
                             " ended before it placed a task on this rank (", options.agent_id,
                             "): its output says why (a rank it refused, or its own error; see ",
                             log_path, ")");
        break;
      }
      rank_zero_probed = rank_zero_probed || serves;
    }
    if (!progress.EverStarted() && progress.unheard() >= kUnheardRegistrationsToFail) {
      error = absl::StrCat(
          "rank 0 at ", orchestrator, " did not hear this rank (", options.agent_id, ") on ",
          kUnheardRegistrationsToFail, " connections in a row that were up (",
          static_cast<int>(kUnheardRegistrationsToFail * kAgentUnheardHelloSeconds),
          " s): most likely another process is joined as ", options.agent_id,
          " already (one rank started twice, or another's RANK wrong; ZeroMQ hears one "
          "connection per name), or rank 0 is stuck (see ",
          log_path, ")");
      break;
    }
    if (!progress.EverStarted() && now - started > options.join_seconds) {
      error = absl::StrCat("rank 0 at ", orchestrator, " placed no task on this rank (",
                           options.agent_id, ") within ", options.join_seconds,
                           " s: is rank 0 running, are MASTER_ADDR and MASTER_PORT right, and "
                           "did no other process start as this rank? (see ",
                           log_path, ")");
      break;
    }
  }
  if (stop_requests.load() == 0) stop_requests.store(1);
  agent_thread.join();
  if (!agent_status.ok()) AppendLine(log_path, agent_status.message()).IgnoreError();
  if (StopSignals::count() > 0 && !rank_zero_gone) {
    std::fprintf(stderr, "%s: stopped by a signal\n", options.agent_id.c_str());
    return 130;
  }
  if (!error) error = progress.failure();
  // A task that failed while rank 0 went away (its peer's connection reset): rank 0's end is the
  // news, said first.
  if (error && progress.failure() == error &&
      !AcceptsConnections(options.rank_zero_host, options.rank_zero_port,
                          options.probe_interval_seconds)) {
    error =
        absl::StrCat("rank 0 at ", orchestrator,
                     " no longer answers: it ended (its output says why); this rank's ", *error);
  }
  if (error) {
    // The rank's own logs stay for a look: said, unless the error says where already.
    const std::string kept =
        absl::StrContains(*error, options.work_dir)
            ? ""
            : absl::StrCat(" (this rank's agent log and task folders are kept in ",
                           options.work_dir, ")");
    std::fprintf(stderr, "error: %s%s\n", error->c_str(), kept.c_str());
    return 1;
  }
  // Rank 0 stopped the job (its own SIGINT or SIGTERM: a preemption): so did this rank, which a
  // launcher must start again with the others, as rank 0 says (exit 130 there too).
  if (progress.stopped()) {
    std::fprintf(stderr, "%s: rank 0 stopped the job; launch every rank again to continue it\n",
                 options.agent_id.c_str());
    return 130;
  }
  // Rank 0's run folder holds what the job made; this rank's logs of a job that went well are
  // not needed.
  std::error_code ignored;
  std::filesystem::remove_all(options.work_dir, ignored);
  return 0;
}

}  // namespace cohort
