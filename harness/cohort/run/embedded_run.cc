#include "harness/cohort/run/embedded_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "harness/cohort/process/stop_signals.h"
#include "harness/cohort/process/this_process.h"
#include "harness/cohort/run/progress_display.h"
#include "harness/cohort/run/run_summary.h"
#include "runtime/agent/agent.h"
#include "runtime/base/clock.h"
#include "runtime/base/file_io.h"
#include "runtime/orchestrator/orchestrator_server.h"
#include "runtime/record/run_folder.h"

namespace cohort {
namespace {

// How long the orchestrator may wait for the exits of tasks the agent killed on a second signal.
constexpr double kExitsAfterKillSeconds = 5;
// How long a trial has, once the run is stopped, to checkpoint and exit before it is killed.
constexpr uint32_t kStopGraceSeconds = 30;
// Lines of the trial log shown when a trial fails.
constexpr size_t kLogTailLines = 10;

void ShowLogTail(const std::string& path) {
  absl::StatusOr<std::string> log = ReadWholeFile(path);
  if (!log.ok()) return;
  std::vector<absl::string_view> lines = absl::StrSplit(*log, '\n', absl::SkipEmpty());
  const size_t first = lines.size() > kLogTailLines ? lines.size() - kLogTailLines : 0;
  std::fprintf(stderr, "last lines of %s:\n", path.c_str());
  for (size_t i = first; i < lines.size(); ++i) {
    std::fprintf(stderr, "  | %.*s\n", static_cast<int>(lines[i].size()), lines[i].data());
  }
}

// The run's side of the loop: submits once the agent registered, turns signals into a stop,
// ends the loop once the experiment has ended, and shows what happens.
class EmbeddedSession {
 public:
  EmbeddedSession(LocalSubmission submission, std::string local_dir,
                  const EmbeddedRunOptions& options)
      : submission_(std::move(submission)),
        folder_(submission_.folder),
        local_dir_(std::move(local_dir)),
        options_(options),
        display_(stderr),
        started_(SystemClock().MonotonicSeconds()) {}

  void OnEvent(const OrchestratorEvent& event) {
    if (event.level == OrchestratorEvent::Level::kNotice) display_.Message(event.line);
    AppendLine(absl::StrCat(local_dir_, "/orchestrator.log"), event.line).IgnoreError();
  }

  void SetAgentEndpoint(std::string endpoint) { endpoint_ = std::move(endpoint); }

  void OnAgentMessage(const DecodedControl& message) {
    if (const auto* progress = std::get_if<TaskProgress>(&message.message)) {
      trial_of_task_[progress->task_id] = progress->progress.trial_id;
      display_.Update(progress->progress);
    } else if (const auto* metrics = std::get_if<TaskMetricsReport>(&message.message)) {
      display_.Metrics(metrics->report);
    } else if (const auto* exit = std::get_if<TaskExit>(&message.message)) {
      // The task's first exit ends its line; a restart's task brings it back.
      if (const auto found = trial_of_task_.find(exit->task_id); found != trial_of_task_.end()) {
        display_.TrialEnded(found->second);
        trial_of_task_.erase(found);
      }
    }
  }

  void OnTurn(Orchestrator& orchestrator, std::atomic<bool>& stop,
              std::atomic<int>& agent_stop_requests, bool agent_ended) {
    const double now = SystemClock().MonotonicSeconds();
    const int signals = StopSignals::count();
    // Under `cohort run` the agent table matters only until its one agent registered.
    const std::set<std::string> connected = !options_.rank_agent_ids.empty() || experiment_id_ == 0
                                                ? ConnectedAgents(orchestrator)
                                                : std::set<std::string>{};
    if (stray_) {  // set only while the ranks join
      Fail(absl::StrCat("a process joined as ", *stray_));
      stop.store(true);
      return;
    }
    if (experiment_id_ == 0) {
      if (signals > 0) {
        stopped_before_start_ = true;
        stop.store(true);
      } else if (const uint32_t joined = RegisteredAgents(connected); joined >= ExpectedAgents()) {
        Submit(orchestrator, stop);
      } else if (agent_ended || now - started_ > options_.registration_seconds) {
        const std::string within =
            agent_ended ? "" : absl::StrCat(" within ", options_.registration_seconds, " s");
        Fail(ExpectedAgents() == 1
                 ? absl::StrCat("the local agent did not register", within, " (see ", local_dir_,
                                "/agent.log)")
                 : absl::StrCat("only ", joined, " of the ", ExpectedAgents(), " ranks joined at ",
                                endpoint_, within, "; missing: ", MissingRanks(connected)));
        stop.store(true);
      } else if (ExpectedAgents() > 1 &&
                 now - std::max(waiting_told_, started_) >= kJoinNoteSeconds) {
        // Ranks start when their launcher gets to them: say who is awaited, not nothing.
        waiting_told_ = now;
        display_.Message(absl::StrCat("waiting for the ranks to join at ", endpoint_, ": ", joined,
                                      " of ", ExpectedAgents(), " after ",
                                      static_cast<int>(now - started_), " s (at most ",
                                      options_.registration_seconds,
                                      " s: --join-timeout); missing: ", MissingRanks(connected)));
      }
      return;
    }
    if (signals >= 1 && stop_requests_sent_ == 0) {
      stop_requests_sent_ = 1;
      display_.Message(absl::StrCat("stopping: each trial checkpoints and exits, or is killed ",
                                    kStopGraceSeconds,
                                    " s on if it has not (a second Ctrl-C kills them at once)"));
      orchestrator.StopExperiment(experiment_id_, "the run was stopped");
    }
    if (signals >= 2 && stop_requests_sent_ == 1) {
      stop_requests_sent_ = 2;
      display_.Message("killing the workers");
      agent_stop_requests.store(2);  // as two signals to an agent: kill at once
      killed_at_ = now;
    }
    if (orchestrator.Idle()) {
      if (const ExperimentRecord* record = orchestrator.RecordOf(experiment_id_)) record_ = *record;
      stop.store(true);
    } else if (agent_ended && stop_requests_sent_ < 2) {
      Fail("the local agent stopped while the experiment was running (see " + local_dir_ +
           "/agent.log)");
      stop.store(true);
    } else if (killed_at_ > 0 && now - killed_at_ > kExitsAfterKillSeconds) {
      stop.store(true);  // the workers are gone; their exits will not come any more
    } else if (stop_requests_sent_ == 0 && WatchRanksAway(connected, now)) {
      stop.store(true);
    }
  }

  // Under `cohort launch`, asked of each agent that registers: a rank of this launch is taken, any
  // other process (started with another world size, or as a rank outside it) refused. One that
  // came while the ranks join fails the launch, whose world is then in doubt; once every rank
  // joined (the experiment submitted), the launch goes on without it.
  absl::Status AdmitAgent(const std::string& agent_id) {
    if (IsRankAgent(agent_id)) return absl::OkStatus();
    std::string why =
        absl::StrCat("no rank of this ", options_.rank_agent_ids.size(), "-rank launch (",
                     options_.rank_agent_ids.front(), " to ", options_.rank_agent_ids.back(),
                     "): check the RANK and WORLD_SIZE it was started with");
    if (experiment_id_ == 0 && !stray_) stray_ = absl::StrCat("'", agent_id, "', which is ", why);
    return absl::FailedPreconditionError(why);
  }

  // The process's exit status, once the loop has ended; prints the summary.
  // With profiling on, the orchestrator merged each trial's rank timelines before going idle.
  void ShowTimelines() const {
    for (const TrialRecord& trial : record_->trials) {
      const std::string timeline = folder_.trial_dir(trial.id) + "/timeline.json";
      std::error_code error;
      if (std::filesystem::exists(timeline, error)) {
        std::printf("  timeline of trial %llu: %s (Perfetto, chrome://tracing)\n",
                    static_cast<unsigned long long>(trial.id), timeline.c_str());
      }
    }
  }

  int Finish() {
    display_.Finish();
    if (error_) {
      std::fprintf(stderr, "error: %s\n", error_->c_str());
      return 1;
    }
    if (stopped_before_start_) {
      std::fprintf(stderr, "stopped before training started\n");
      return 130;
    }
    if (!record_) {
      std::fprintf(stderr, "stopped: the workers were killed\n");
      std::printf("  run folder: %s\n  continue with: %s %s\n", folder_.path().c_str(),
                  options_.continue_command.c_str(), folder_.path().c_str());
      return 130;
    }
    for (const TrialRecord& trial : record_->trials) {
      if (trial.state == RunState::kError) {
        ShowLogTail(folder_.log_path(trial.id));
        break;
      }
    }
    PrintRunSummary(*record_, folder_.path(), stdout);
    ShowTimelines();
    switch (record_->state) {
      case RunState::kCompleted:
        return 0;
      case RunState::kStopped:
        std::printf("  continue with: %s %s\n", options_.continue_command.c_str(),
                    folder_.path().c_str());
        return 130;
      default:
        return 1;
    }
  }

 private:
  void Submit(Orchestrator& orchestrator, std::atomic<bool>& stop) {
    const ClientMessage reply = orchestrator.SubmitLocal(std::move(submission_));
    if (const auto* refused = std::get_if<ClientError>(&reply)) {
      Fail(refused->message);
      stop.store(true);
      return;
    }
    const auto& submitted = std::get<ExperimentSubmitted>(reply);
    experiment_id_ = submitted.experiment_id;
    for (const std::string& warning : submitted.warnings) {
      display_.Message(absl::StrCat("warning: ", warning));
    }
  }

  uint32_t ExpectedAgents() const {
    return options_.rank_agent_ids.empty() ? 1
                                           : static_cast<uint32_t>(options_.rank_agent_ids.size());
  }

  // The ids of the agents connected now.
  static std::set<std::string> ConnectedAgents(const Orchestrator& orchestrator) {
    std::set<std::string> connected;
    const ClientMessage reply = orchestrator.Query(ListAgents{});
    if (const auto* table = std::get_if<AgentTable>(&reply)) {
      for (const AgentRow& agent : table->agents) {
        if (agent.connected) connected.insert(agent.agent_id);
      }
    }
    return connected;
  }

  // The ranks whose agents are not `connected`: "rank 1 (rank-1), rank 3 (rank-3)".
  std::string MissingRanks(const std::set<std::string>& connected) const {
    std::string missing;
    for (size_t rank = 0; rank < options_.rank_agent_ids.size(); ++rank) {
      const std::string& id = options_.rank_agent_ids[rank];
      if (connected.count(id) != 0) continue;
      absl::StrAppend(&missing, missing.empty() ? "" : ", ", "rank ", rank, " (", id, ")");
    }
    return missing;
  }

  // Under `cohort launch`, once training began: a rank's agent lost (its process ended, its host
  // went away) leaves the trial waiting to be placed again, which only that rank joining again
  // can do. It has --join-timeout for that; past it the run fails, naming the rank. Whether the
  // run should stop.
  bool WatchRanksAway(const std::set<std::string>& connected, double now) {
    if (ExpectedAgents() == 1) return false;
    if (RegisteredAgents(connected) >= ExpectedAgents()) {
      if (away_since_) display_.Message("every rank has joined again: training goes on");
      away_since_.reset();
      return false;
    }
    const std::string missing = MissingRanks(connected);
    if (!away_since_) {
      away_since_ = now;
      display_.Message(absl::StrCat("lost ", missing.empty() ? "a rank" : missing,
                                    ": waiting up to ", options_.registration_seconds,
                                    " s (--join-timeout) for it to join again (start its `cohort "
                                    "launch` again), then the launch fails"));
      return false;
    }
    if (now - *away_since_ <= options_.registration_seconds) return false;
    Fail(absl::StrCat(missing.empty() ? "a rank" : missing, " left and did not join again within ",
                      options_.registration_seconds,
                      " s (--join-timeout); the run folder keeps its checkpoints: run every "
                      "rank's launch again to go on from them"));
    return true;
  }

  // Under `cohort launch` (the only caller: AdmitAgent), whether `agent_id` is one of its ranks.
  bool IsRankAgent(const std::string& agent_id) const {
    return std::find(options_.rank_agent_ids.begin(), options_.rank_agent_ids.end(), agent_id) !=
           options_.rank_agent_ids.end();
  }

  // How many of the ranks' agents are `connected` (no other registers: AdmitAgent); 0 until this
  // process's own agent is among them.
  uint32_t RegisteredAgents(const std::set<std::string>& connected) const {
    return connected.count(options_.agent_id) == 0 ? 0 : static_cast<uint32_t>(connected.size());
  }

  void Fail(std::string message) {
    if (!error_) error_ = std::move(message);
  }

  LocalSubmission submission_;
  const RunFolder folder_;
  const std::string local_dir_;
  const EmbeddedRunOptions& options_;
  std::string endpoint_;  // where the agents join (resolved), for messages
  ProgressDisplay display_;
  std::map<uint64_t, uint64_t> trial_of_task_;  // the tasks whose progress came, to their trials
  const double started_;
  uint64_t experiment_id_ = 0;
  int stop_requests_sent_ = 0;
  double killed_at_ = 0;
  // When rank 0 last said how many ranks had joined (every kJoinNoteSeconds while they join).
  static constexpr double kJoinNoteSeconds = 15;
  double waiting_told_ = 0;
  std::optional<double>
      away_since_;  // since when a rank's agent has been lost, once training began
  bool stopped_before_start_ = false;
  std::optional<std::string> stray_;  // the first process refused while the ranks join (AdmitAgent)
  std::optional<std::string> error_;
  std::optional<ExperimentRecord> record_;
};

}  // namespace

int RunEmbedded(LocalSubmission submission, const EmbeddedRunOptions& options) {
  // Absolute: the workers get paths under it and run in their task folders.
  const std::string local_dir = AbsolutePath(submission.folder.path() + "/local");
  std::error_code error;
  std::filesystem::create_directories(local_dir, error);
  if (error) {
    std::fprintf(stderr, "error: cannot create %s: %s\n", local_dir.c_str(),
                 error.message().c_str());
    return 1;
  }
  const std::string checkpoint_root = submission.checkpoint_root;
  EmbeddedSession session(std::move(submission), local_dir, options);

  std::atomic<bool> stop{false};
  std::atomic<int> agent_stop_requests{0};
  std::atomic<bool> agent_ended{false};
  OrchestratorOptions orchestrator_options;
  orchestrator_options.state_dir = local_dir;
  orchestrator_options.kill_grace_seconds = kStopGraceSeconds;
  orchestrator_options.checkpoint_root = checkpoint_root;
  orchestrator_options.rendezvous_endpoint = options.rendezvous_endpoint;
  if (!options.rank_agent_ids.empty()) {
    orchestrator_options.admit_agent = [&session](const std::string& agent_id) {
      return session.AdmitAgent(agent_id);
    };
  }
  OrchestratorServerOptions server_options;
  server_options.agent_endpoint = options.agent_endpoint;
  server_options.security = options.security;
  server_options.client_endpoint = "tcp://127.0.0.1:*";
  server_options.tick_interval = std::chrono::milliseconds(50);
  server_options.log = [&session](const OrchestratorEvent& event) { session.OnEvent(event); };
  server_options.on_agent_message = [&session](const std::string&, const DecodedControl& message) {
    session.OnAgentMessage(message);
  };
  server_options.on_turn = [&](Orchestrator& orchestrator) {
    session.OnTurn(orchestrator, stop, agent_stop_requests, agent_ended.load());
  };
  absl::StatusOr<std::unique_ptr<OrchestratorServer>> server = OrchestratorServer::Bind(
      std::move(server_options), std::move(orchestrator_options), SystemClock());
  if (!server.ok()) {
    std::fprintf(stderr, "error: %s%s%s\n", std::string(server.status().message()).c_str(),
                 options.agent_endpoint_hint.empty() ? "" : "; ",
                 options.agent_endpoint_hint.c_str());
    return 1;
  }

  session.SetAgentEndpoint((*server)->agent_endpoint());

  AgentOptions agent;
  agent.orchestrator = (*server)->agent_endpoint();
  agent.agent_id = options.agent_id;
  agent.advertise_address = options.advertise_address;
  agent.curve = options.agent_curve;
  agent.hostname = HostName();
  agent.cohort_version = COHORT_VERSION;
  agent.slots = options.slots;
  agent.work_dir = local_dir;
  agent.executable = options.executable;
  agent.base_environment = InheritedEnvironment();
  agent.log = [path = absl::StrCat(local_dir, "/agent.log")](absl::string_view line) {
    AppendLine(path, line).IgnoreError();
  };
  agent.stop_requests = &agent_stop_requests;

  // Before the agent's thread, which must not take them.
  const StopSignals signals(StopSignals::Second::kCounted);
  absl::Status agent_status;
  std::thread agent_thread = StartWithoutStopSignals([&] {
    agent_status = Agent(std::move(agent)).Run();
    agent_ended.store(true);
  });
  const absl::Status served = (*server)->Run(stop);
  if (agent_stop_requests.load() == 0) agent_stop_requests.store(1);
  agent_thread.join();
  if (!served.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(served.message()).c_str());
    return 1;
  }
  if (!agent_status.ok()) {
    AppendLine(absl::StrCat(local_dir, "/agent.log"), agent_status.message()).IgnoreError();
  }
  return session.Finish();
}

}  // namespace cohort
