// `cohort agent` end to end: the test plays the orchestrator (a ROUTER bound on loopback) and
// runs the real agent binary, or an Agent embedded on a thread of the test as `cohort run` embeds
// one, which runs real workers on the mlp plugin.
//
// Covered: registration (AgentHello with the slots, from the DEALER named by the agent id) and
// heartbeats; a 2-rank task to completion (statuses, metrics, checkpoint, log batches, its last
// progress, TaskExits, the run folder's checkpoint and log); KillTask of a long task within its
// grace period, its progress forwarded about once a second with growing batch counts; malformed
// messages and another protocol major dropped and logged while the agent keeps working; refusals
// (busy slot, a multi-agent task without a rendezvous endpoint, unknown task); a task that cannot
// start (TaskExit rank -1); SIGTERM ending the agent with status 0. Embedded: an orchestrator of
// minor 0 gets no TaskProgress and no agent line; a rank stopped with SIGSTOP is named in an
// agent line (and again once it resumes), and its task is still killed; stop requests end Run
// without signals, stopping the tasks with grace first; the task reports the orchestrator did
// not acknowledge are sent again after a re-registration (before the exit), to an orchestrator of
// minor 11 or later only.
//
// Environment: COHORT_EXE (the cohort binary), COHORT_PLUGIN_DIR (the built plugins).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>
#include <zmq.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "control_generated.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/agent/agent.h"
#include "runtime/control/control_messages.h"

extern char** environ;

namespace cohort {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

constexpr char kAgentId[] = "test-agent";

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// An mlp experiment: `batches` batches, a validation and a checkpoint every `period`.
std::string MlpConfig(uint64_t batches, uint64_t period) {
  return absl::StrFormat(R"(name: agent-test
entrypoint: %s
hyperparameters:
  global_batch_size: 16
  optimizer: sgd
  learning_rate: 0.05
  hidden_size: 32
  hidden_layers: 2
  synthetic_train_records: 2048
  synthetic_validation_records: 256
searcher:
  name: single
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: %d
min_validation_period:
  batches: %d
min_checkpoint_period:
  batches: %d
scheduling_unit: 20
reproducibility:
  experiment_seed: 11
)",
                         Env("COHORT_PLUGIN_DIR") + "/mlp/mlp.so", batches, period, period);
}

StartTask MlpTask(uint64_t task_id, std::vector<RankAssignment> ranks, uint64_t batches,
                  uint64_t period) {
  StartTask task;
  task.task_id = task_id;
  task.trial_id = 1;
  task.experiment_id = 1;
  task.worker.plugin_path = Env("COHORT_PLUGIN_DIR") + "/mlp/mlp.so";
  task.worker.config_yaml = MlpConfig(batches, period);
  task.world_size = static_cast<uint32_t>(ranks.size());
  task.ranks = std::move(ranks);
  task.cross_size = 1;
  return task;
}

// An Ack of `correlation_id` in an envelope of control protocol 1.`minor`.
std::string AckEnvelope(uint64_t message_id, uint64_t correlation_id, uint16_t minor) {
  flatbuffers::FlatBufferBuilder builder;
  const auto sender = builder.CreateString(std::string(kOrchestratorSender));
  const auto ack = fbs::control::CreateAck(builder);
  builder.Finish(fbs::control::CreateControlEnvelope(
                     builder, kControlProtocolMajor, minor, message_id, correlation_id, sender,
                     fbs::control::ControlPayload::Ack, ack.Union()),
                 fbs::control::ControlEnvelopeIdentifier());
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

// The orchestrator's side: a ROUTER that keeps every message it receives, acknowledges every
// AgentHello and TaskExit as an orchestrator does, and finds messages by type.
class FakeOrchestrator {
 public:
  FakeOrchestrator() : router_(context_, zmq::socket_type::router) {
    router_.set(zmq::sockopt::router_handover, true);
    router_.set(zmq::sockopt::router_mandatory, true);
    router_.set(zmq::sockopt::linger, 0);
    router_.bind("tcp://127.0.0.1:*");
    endpoint_ = router_.get(zmq::sockopt::last_endpoint);
  }

  const std::string& endpoint() const { return endpoint_; }

  // From now on, the Ack of an AgentHello comes in an envelope of protocol 1.`minor`, as from an
  // orchestrator of that minor.
  void AnswerHellosAsMinor(uint16_t minor) { hello_minor_ = minor; }
  // From now on AgentHellos go unanswered, as a ROUTER leaves a second agent of a taken id.
  void IgnoreHellos() { ignore_hellos_ = true; }
  void AnswerHellos() { ignore_hellos_ = false; }

  // While held, TaskExits are kept unanswered (a busy orchestrator); AnswerHeldExits answers them.
  void HoldExitAnswers() { hold_exit_answers_ = true; }
  void AnswerHeldExits() {
    hold_exit_answers_ = false;
    for (const uint64_t message_id : held_exit_ids_) AckIfConnected(message_id);
    held_exit_ids_.clear();
  }

  struct Received {
    std::string identity;
    DecodedControl message;
    bool taken = false;
  };

  // The first message not taken yet of type T for which `match` holds, waiting up to `timeout`;
  // it is then taken. nullopt on timeout.
  template <typename T, typename Match>
  std::optional<std::pair<ControlHeader, T>> WaitFor(Clock::duration timeout, Match match) {
    const auto deadline = Clock::now() + timeout;
    for (size_t i = 0;; ++i) {
      while (i == received_.size()) {
        if (Clock::now() >= deadline || !ReceiveOne(deadline)) {
          if (i == received_.size()) return std::nullopt;
        }
      }
      Received& r = received_[i];
      const T* message = std::get_if<T>(&r.message.message);
      if (r.taken || message == nullptr || !match(*message)) continue;
      r.taken = true;
      return std::make_pair(r.message.header, *message);
    }
  }
  template <typename T>
  std::optional<std::pair<ControlHeader, T>> WaitFor(Clock::duration timeout) {
    return WaitFor<T>(timeout, [](const T&) { return true; });
  }

  // Every message of type T received so far, taken or not.
  template <typename T>
  std::vector<T> All() const {
    std::vector<T> all;
    for (const Received& r : received_) {
      if (const T* message = std::get_if<T>(&r.message.message)) all.push_back(*message);
    }
    return all;
  }
  const std::vector<Received>& received() const { return received_; }

  uint64_t Send(const ControlMessage& message, uint64_t correlation_id = 0) {
    const uint64_t id = ++last_id_;
    SendRaw(EncodeControlMessage(
        ControlHeader{id, correlation_id, std::string(kOrchestratorSender)}, message));
    return id;
  }

  void SendRaw(const std::string& bytes) {
    if (!TrySendRaw(bytes)) ADD_FAILURE() << "the agent is not connected to the orchestrator";
  }

 private:
  // False when the agent has gone (EHOSTUNREACH under ZMQ_ROUTER_MANDATORY), as when it shuts down
  // right after its last TaskExit: the orchestrator's answer is then dropped, as a real one is.
  bool TrySendRaw(const std::string& bytes) {
    try {
      router_.send(zmq::buffer(std::string(kAgentId)), zmq::send_flags::sndmore);
      router_.send(zmq::buffer(bytes), zmq::send_flags::none);
      return true;
    } catch (const zmq::error_t& error) {
      if (error.num() != EHOSTUNREACH) throw;
      return false;
    }
  }

  // Acknowledges the agent's message `message_id`, unless the agent has gone.
  void AckIfConnected(uint64_t message_id) {
    TrySendRaw(EncodeControlMessage(
        ControlHeader{++last_id_, message_id, std::string(kOrchestratorSender)}, Ack{}));
  }

  bool ReceiveOne(Clock::time_point deadline) {
    zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (zmq::poll(&item, 1, std::max(left, milliseconds(0))) <= 0) return false;
    zmq::message_t identity, body;
    if (!router_.recv(identity) || !identity.more() || !router_.recv(body)) return false;
    absl::StatusOr<DecodedControl> decoded =
        DecodeControlMessage(absl::string_view(body.data<char>(), body.size()));
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    if (!decoded.ok()) return true;
    Received r{identity.to_string(), *std::move(decoded)};
    if (std::holds_alternative<AgentHello>(r.message.message) && ignore_hellos_) {
      // heard, not answered
    } else if (std::holds_alternative<AgentHello>(r.message.message) && hello_minor_) {
      TrySendRaw(AckEnvelope(++last_id_, r.message.header.message_id, *hello_minor_));
    } else if (std::holds_alternative<TaskExit>(r.message.message) && hold_exit_answers_) {
      held_exit_ids_.push_back(r.message.header.message_id);
    } else if (std::holds_alternative<AgentHello>(r.message.message) ||
               std::holds_alternative<TaskExit>(r.message.message)) {
      AckIfConnected(r.message.header.message_id);
    }
    received_.push_back(std::move(r));
    return true;
  }

  zmq::context_t context_;
  zmq::socket_t router_;
  std::string endpoint_;
  uint64_t last_id_ = 0;
  std::optional<uint16_t> hello_minor_;
  bool ignore_hellos_ = false;
  bool hold_exit_answers_ = false;
  std::vector<uint64_t> held_exit_ids_;
  std::vector<Received> received_;
};

// The orchestrator's view of one agent: waits for its answers, statuses, exits and lines.
class OrchestratorTest : public ::testing::Test {
 protected:
  // The agent's log so far, for failure messages.
  virtual std::string AgentLog() const = 0;

  // Waits for the Ack of request `id`; fails the test on an ErrorReply.
  void ExpectAck(uint64_t id) {
    auto ack = orchestrator_.WaitFor<Ack>(seconds(10), [](const Ack&) { return true; });
    ASSERT_TRUE(ack.has_value()) << AgentLog();
    EXPECT_EQ(ack->first.correlation_id, id);
  }

  ErrorReply ExpectErrorReply(uint64_t id) {
    auto reply = orchestrator_.WaitFor<ErrorReply>(seconds(10));
    EXPECT_TRUE(reply.has_value()) << AgentLog();
    if (!reply) return {};
    EXPECT_EQ(reply->first.correlation_id, id);
    return reply->second;
  }

  std::optional<TaskStatus> WaitForState(uint64_t task_id, TaskState state,
                                         Clock::duration timeout = seconds(60)) {
    auto status = orchestrator_.WaitFor<TaskStatus>(
        timeout, [&](const TaskStatus& s) { return s.task_id == task_id && s.state == state; });
    if (!status) return std::nullopt;
    return status->second;
  }

  // The TaskExits of `ranks` ranks of `task_id`, by rank.
  std::vector<TaskExit> WaitForExits(uint64_t task_id, size_t ranks,
                                     Clock::duration timeout = seconds(60)) {
    std::vector<TaskExit> exits;
    while (exits.size() < ranks) {
      auto exit = orchestrator_.WaitFor<TaskExit>(
          timeout, [&](const TaskExit& e) { return e.task_id == task_id; });
      if (!exit) break;
      exits.push_back(exit->second);
    }
    std::sort(exits.begin(), exits.end(),
              [](const TaskExit& a, const TaskExit& b) { return a.rank < b.rank; });
    return exits;
  }

  // The first line of the agent's own (LogStream::kAgent) about `task_id` that starts with
  // `prefix`, from a LogBatch not taken yet (the batch is then taken).
  std::optional<LogLine> WaitForAgentLine(uint64_t task_id, const std::string& prefix,
                                          Clock::duration timeout) {
    auto is_it = [&](const LogLine& line) {
      return line.stream == LogStream::kAgent && absl::StartsWith(line.text, prefix);
    };
    auto batch = orchestrator_.WaitFor<LogBatch>(timeout, [&](const LogBatch& b) {
      return b.task_id == task_id && std::any_of(b.lines.begin(), b.lines.end(), is_it);
    });
    if (!batch) return std::nullopt;
    return *std::find_if(batch->second.lines.begin(), batch->second.lines.end(), is_it);
  }

  FakeOrchestrator orchestrator_;
};

// `cohort agent` as a process of its own.
class AgentTest : public OrchestratorTest {
 protected:
  void SetUp() override {
    ASSERT_FALSE(Env("COHORT_EXE").empty()) << "COHORT_EXE names the cohort binary";
    char pattern[] = "/tmp/cohort-agent-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    work_dir_ = dir_ + "/work";
    log_path_ = dir_ + "/agent.log";
    std::vector<std::string> args = {Env("COHORT_EXE"),
                                     "agent",
                                     "--orchestrator",
                                     orchestrator_.endpoint(),
                                     "--id",
                                     kAgentId,
                                     "--slots",
                                     "2",
                                     "--work-dir",
                                     work_dir_};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    ASSERT_EQ(posix_spawn(&agent_pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);

    auto hello = orchestrator_.WaitFor<AgentHello>(seconds(20));
    ASSERT_TRUE(hello.has_value()) << "no AgentHello; agent log:\n" << AgentLog();
    hello_ = hello->second;
  }

  void TearDown() override {
    if (agent_pid_ > 0) {
      ::kill(agent_pid_, SIGTERM);
      int status = 0;
      const auto deadline = Clock::now() + seconds(30);
      pid_t done = 0;
      while ((done = ::waitpid(agent_pid_, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
        std::this_thread::sleep_for(milliseconds(20));
      }
      if (done == 0) {
        ::kill(agent_pid_, SIGKILL);
        ::waitpid(agent_pid_, &status, 0);
        ADD_FAILURE() << "the agent did not stop on SIGTERM; its log:\n" << AgentLog();
      } else {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << "agent ended with status " << status << "; its log:\n"
            << AgentLog();
      }
    }
    std::error_code ignored;
    if (!HasFailure()) std::filesystem::remove_all(dir_, ignored);
  }

  std::string AgentLog() const override { return ReadText(log_path_); }

  std::string dir_, work_dir_, log_path_;
  pid_t agent_pid_ = 0;
  AgentHello hello_;
};

TEST_F(AgentTest, RegistersItsSlotsAndSendsHeartbeats) {
  EXPECT_EQ(hello_.agent_id, kAgentId);
  EXPECT_EQ(orchestrator_.received().front().identity, kAgentId) << "the DEALER identity";
  EXPECT_EQ(orchestrator_.received().front().message.header.sender, kAgentId);
  EXPECT_EQ(hello_.slots, (std::vector<AgentSlot>{{0, SlotKind::kCpu, -1, "cpu"},
                                                  {1, SlotKind::kCpu, -1, "cpu"}}));
  EXPECT_THAT(hello_.tasks, IsEmpty());
  EXPECT_FALSE(hello_.cohort_version.empty());

  auto heartbeat = orchestrator_.WaitFor<AgentHeartbeat>(seconds(8));
  ASSERT_TRUE(heartbeat.has_value()) << AgentLog();
  EXPECT_EQ(heartbeat->second.agent_id, kAgentId);
  EXPECT_EQ(heartbeat->second.busy_slots, 0u);
  EXPECT_THAT(heartbeat->second.running_task_ids, IsEmpty());
}

TEST_F(AgentTest, RunsATwoRankTaskToCompletion) {
  const uint64_t start = orchestrator_.Send(MlpTask(7, {{0, 0, 0}, {1, 1, 1}}, 200, 100));
  ExpectAck(start);
  std::optional<TaskStatus> starting = WaitForState(7, TaskState::kStarting);
  ASSERT_TRUE(starting.has_value()) << AgentLog();
  EXPECT_EQ(starting->processes.size(), 2u);
  ASSERT_TRUE(WaitForState(7, TaskState::kRunning).has_value()) << AgentLog();

  const std::vector<TaskExit> exits = WaitForExits(7, 2);
  ASSERT_EQ(exits.size(), 2u) << AgentLog();
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(exits[rank].rank, rank);
    EXPECT_EQ(exits[rank].exit_code, 0) << exits[rank].reason;
    EXPECT_EQ(exits[rank].signal, 0);
    EXPECT_FALSE(exits[rank].killed_by_agent);
    EXPECT_THAT(exits[rank].reason, testing::Eq("completed"));
  }
  ASSERT_TRUE(WaitForState(7, TaskState::kExited, seconds(10)).has_value());

  bool validated = false;
  for (const TaskMetricsReport& report : orchestrator_.All<TaskMetricsReport>()) {
    EXPECT_EQ(report.task_id, 7u);
    EXPECT_EQ(report.report.trial_id, 1u);
    validated = validated ||
                (report.report.kind == ReportKind::kValidation && report.report.batches == 200);
  }
  EXPECT_TRUE(validated) << "no validation metrics at batch 200";
  std::set<std::string> checkpoints;
  for (const TaskCheckpointReport& report : orchestrator_.All<TaskCheckpointReport>()) {
    checkpoints.insert(report.checkpoint_id);
  }
  EXPECT_TRUE(checkpoints.count("trial-1-batch-200")) << "checkpoint not reported";
  EXPECT_TRUE(std::filesystem::is_directory(work_dir_ + "/tasks/7/checkpoints/trial-1-batch-200"));

  // Every line is in a batch, each rank's own, and the batches came before the exits.
  std::string logged[2];
  for (const LogBatch& batch : orchestrator_.All<LogBatch>()) {
    EXPECT_EQ(batch.task_id, 7u);
    EXPECT_LE(batch.lines.size(), 64u);
    for (const LogLine& line : batch.lines) {
      ASSERT_LT(line.rank, 2u);
      absl::StrAppend(&logged[line.rank], line.text, "\n");
    }
  }
  EXPECT_THAT(logged[0], HasSubstr("trial 1 rank 0 of 2"));
  EXPECT_THAT(logged[1], HasSubstr("trial 1 rank 1 of 2"));
  bool exit_seen = false;
  for (const auto& r : orchestrator_.received()) {
    exit_seen = exit_seen || std::holds_alternative<TaskExit>(r.message.message);
    EXPECT_FALSE(exit_seen && std::holds_alternative<LogBatch>(r.message.message))
        << "a LogBatch after the task's exits";
  }
  // Rank 0's start line, printed before it trained, reaches the orchestrator before its first
  // report: a report flushes the task's lines held so far.
  bool reported = false;
  bool started_line_first = false;
  for (const auto& r : orchestrator_.received()) {
    if (std::holds_alternative<TaskMetricsReport>(r.message.message)) reported = true;
    const auto* batch = std::get_if<LogBatch>(&r.message.message);
    for (size_t i = 0; batch != nullptr && !reported && i < batch->lines.size(); ++i) {
      started_line_first =
          started_line_first || absl::StrContains(batch->lines[i].text, "trial 1 rank 0 of 2");
    }
  }
  EXPECT_TRUE(started_line_first) << "rank 0's start line came after its first report";
  const std::string log = ReadText(work_dir_ + "/tasks/7/log.txt");
  EXPECT_THAT(log, HasSubstr("[rank 0] trial 1 rank 0 of 2"));
  EXPECT_THAT(log, HasSubstr("[rank 1] trial 1 rank 1 of 2"));

  // The last progress, whenever the one before it went, arrives before the exits.
  std::optional<TaskProgress> last_progress;
  for (const auto& r : orchestrator_.received()) {
    if (std::holds_alternative<TaskExit>(r.message.message)) break;
    if (const auto* progress = std::get_if<TaskProgress>(&r.message.message)) {
      last_progress = *progress;
    }
  }
  ASSERT_TRUE(last_progress.has_value()) << "no TaskProgress before the exits";
  EXPECT_EQ(last_progress->task_id, 7u);
  EXPECT_EQ(last_progress->progress.trial_id, 1u);
  EXPECT_EQ(last_progress->progress.batches, 200u);
  EXPECT_EQ(last_progress->progress.total_batches, 200u);

  // The exits were acknowledged: the task is forgotten.
  const uint64_t list = orchestrator_.Send(TaskListRequest{});
  auto tasks = orchestrator_.WaitFor<TaskList>(seconds(10));
  ASSERT_TRUE(tasks.has_value());
  EXPECT_EQ(tasks->first.correlation_id, list);
  EXPECT_THAT(tasks->second.tasks, IsEmpty());
}

TEST_F(AgentTest, KillTaskEndsALongTaskWithinItsGracePeriod) {
  const auto started_at = Clock::now();
  const uint64_t start = orchestrator_.Send(MlpTask(8, {{0, 0, 0}, {1, 1, 1}}, 1000000, 1000000));
  ExpectAck(start);
  ASSERT_TRUE(WaitForState(8, TaskState::kRunning).has_value()) << AgentLog();
  auto heartbeat = orchestrator_.WaitFor<AgentHeartbeat>(
      seconds(8), [](const AgentHeartbeat& h) { return h.busy_slots == 2; });
  ASSERT_TRUE(heartbeat.has_value()) << AgentLog();
  EXPECT_EQ(heartbeat->second.running_task_ids, std::vector<uint64_t>{8});

  constexpr uint32_t kGrace = 5;
  const auto killed_at = Clock::now();
  const uint64_t kill = orchestrator_.Send(KillTask{8, "searcher closed the trial", kGrace});
  ExpectAck(kill);
  ASSERT_TRUE(WaitForState(8, TaskState::kStopping, seconds(5)).has_value());
  const std::vector<TaskExit> exits = WaitForExits(8, 2, seconds(kGrace + 5));
  const auto took = Clock::now() - killed_at;
  ASSERT_EQ(exits.size(), 2u) << AgentLog();
  EXPECT_LT(took, seconds(kGrace + 3));
  // The workers heard the stop, checkpointed and left in time.
  for (const TaskExit& exit : exits) {
    EXPECT_TRUE(exit.killed_by_agent) << exit.reason;
    EXPECT_EQ(exit.signal, 0) << exit.reason;
    EXPECT_EQ(exit.exit_code, 0) << exit.reason;
    EXPECT_EQ(exit.reason, "stopped: searcher closed the trial");
  }
  EXPECT_FALSE(orchestrator_.All<TaskCheckpointReport>().empty()) << "no checkpoint at the stop";
  ASSERT_TRUE(WaitForState(8, TaskState::kExited, seconds(5)).has_value());
  const double ran_seconds = std::chrono::duration<double>(Clock::now() - started_at).count();

  // Rank 0 reports progress four times a second; the agent forwards the first at once, then at
  // most one a second, and the last before the exits.
  const std::vector<TaskProgress> progress = orchestrator_.All<TaskProgress>();
  ASSERT_GE(progress.size(), 2u) << "the task ran " << ran_seconds << " s";
  EXPECT_LE(static_cast<double>(progress.size()), ran_seconds + 2) << ran_seconds << " s";
  for (size_t i = 0; i < progress.size(); ++i) {
    EXPECT_EQ(progress[i].task_id, 8u);
    EXPECT_EQ(progress[i].progress.trial_id, 1u);
    EXPECT_EQ(progress[i].progress.total_batches, 1000000u);
    if (i > 0) {
      EXPECT_GE(progress[i].progress.batches, progress[i - 1].progress.batches);
    }
  }
  EXPECT_GT(progress.back().progress.batches, progress.front().progress.batches);

  // Killing it again is acknowledged.
  ExpectAck(orchestrator_.Send(KillTask{8, "again", 0}));
}

TEST_F(AgentTest, DropsMalformedMessagesAndKeepsWorking) {
  orchestrator_.SendRaw("this is not a control envelope");
  {
    flatbuffers::FlatBufferBuilder builder;
    const auto sender = builder.CreateString("orchestrator");
    const auto kill = fbs::control::CreateKillTask(builder, 1, 0, 0);
    builder.Finish(
        fbs::control::CreateControlEnvelope(builder, /*protocol_major=*/2, 0, 99, 0, sender,
                                            fbs::control::ControlPayload::KillTask, kill.Union()),
        fbs::control::ControlEnvelopeIdentifier());
    orchestrator_.SendRaw(
        std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize()));
  }

  const uint64_t start = orchestrator_.Send(MlpTask(9, {{0, 0, 0}}, 1000000, 1000000));
  ExpectAck(start);
  ASSERT_TRUE(WaitForState(9, TaskState::kStarting).has_value()) << AgentLog();
  const std::string log = AgentLog();
  EXPECT_THAT(log, HasSubstr("dropped a message from the orchestrator"));
  EXPECT_THAT(log, HasSubstr("2.0"));

  ErrorReply busy = ExpectErrorReply(orchestrator_.Send(MlpTask(10, {{0, 0, 0}}, 100, 100)));
  EXPECT_EQ(busy.code, ControlErrorCode::kSlotUnavailable);
  EXPECT_THAT(busy.message, HasSubstr("slot 0 is busy with task 9"));

  StartTask elsewhere = MlpTask(11, {{0, 0, 1}}, 100, 100);
  elsewhere.world_size = 2;
  elsewhere.cross_size = 2;
  ErrorReply multi = ExpectErrorReply(orchestrator_.Send(elsewhere));
  EXPECT_EQ(multi.code, ControlErrorCode::kInvalidRequest);
  EXPECT_THAT(multi.message, HasSubstr("needs a rendezvous endpoint"));

  ErrorReply unknown = ExpectErrorReply(orchestrator_.Send(KillTask{99, "no such task", 0}));
  EXPECT_EQ(unknown.code, ControlErrorCode::kUnknownTask);

  // The exit is answered late, after the agent has ticked on: the stopping status the kill made
  // must not outlive the exit and hold the slot for good.
  orchestrator_.HoldExitAnswers();
  ExpectAck(orchestrator_.Send(KillTask{9, "done", 0}));
  const std::vector<TaskExit> exits = WaitForExits(9, 1, seconds(10));
  ASSERT_EQ(exits.size(), 1u) << AgentLog();
  EXPECT_EQ(exits[0].signal, SIGKILL);
  EXPECT_TRUE(exits[0].killed_by_agent);
  std::this_thread::sleep_for(milliseconds(200));
  orchestrator_.AnswerHeldExits();
  std::this_thread::sleep_for(milliseconds(200));
  ExpectAck(orchestrator_.Send(MlpTask(12, {{0, 0, 0}}, 10, 10)));
  ASSERT_EQ(WaitForExits(12, 1, seconds(20)).size(), 1u) << AgentLog();
}

TEST_F(AgentTest, ATaskThatCannotStartEndsAsAWhole) {
  StartTask task = MlpTask(12, {{0, 0, 1}}, 100, 100);
  task.worker.config_yaml.clear();
  task.worker.config_path = dir_ + "/missing.yaml";
  ExpectAck(orchestrator_.Send(task));
  const std::vector<TaskExit> exits = WaitForExits(12, 1, seconds(10));
  ASSERT_EQ(exits.size(), 1u) << AgentLog();
  EXPECT_EQ(exits[0].rank, kWholeTask);
  EXPECT_NE(exits[0].exit_code, 0);
  EXPECT_THAT(exits[0].reason, HasSubstr("missing.yaml"));
  ASSERT_TRUE(WaitForState(12, TaskState::kExited, seconds(5)).has_value());
  // Its slot is free again.
  ExpectAck(orchestrator_.Send(MlpTask(13, {{0, 0, 1}}, 20, 20)));
  ASSERT_EQ(WaitForExits(13, 1).size(), 1u) << AgentLog();
}

// An Agent on a thread of the test, as `cohort run` embeds one: it takes stop requests instead of
// signals and logs through AgentOptions::log.
class EmbeddedAgentTest : public OrchestratorTest {
 protected:
  // `adjust`, when given, sees the options (and may prepare their work dir) before Run.
  void StartAgent(double silent_rank_warning_seconds = kSilentWarningSeconds,
                  double unanswered_note_seconds = kAgentUnansweredNoteSeconds,
                  const std::function<void(AgentOptions&)>& adjust = nullptr) {
    ASSERT_FALSE(Env("COHORT_EXE").empty()) << "COHORT_EXE names the cohort binary";
    char pattern[] = "/tmp/cohort-embedded-agent-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    AgentOptions options;
    options.orchestrator = orchestrator_.endpoint();
    options.agent_id = kAgentId;
    options.slots = CpuSlots(2);
    options.work_dir = dir_ + "/work";
    options.executable = Env("COHORT_EXE");
    for (char** entry = environ; *entry != nullptr; ++entry) {
      options.base_environment.emplace_back(*entry);
    }
    options.log = [this](absl::string_view line) {
      std::lock_guard<std::mutex> lock(log_mutex_);
      absl::StrAppend(&log_, line, "\n");
    };
    options.stop_requests = &stop_requests_;
    options.silent_rank_warning_seconds = silent_rank_warning_seconds;
    options.unanswered_note_seconds = unanswered_note_seconds;
    if (adjust) adjust(options);
    agent_thread_ = std::thread([this, options = std::move(options)]() mutable {
      run_status_ = Agent(std::move(options)).Run();
      run_returned_ = true;
    });
    ASSERT_TRUE(orchestrator_.WaitFor<AgentHello>(seconds(20)).has_value())
        << "no AgentHello; agent log:\n"
        << AgentLog();
  }

  void TearDown() override {
    if (agent_thread_.joinable()) {
      for (int request = 0; request < 2 && !run_returned_; ++request) {
        ++stop_requests_;
        if (WaitForRunToReturn(seconds(30))) break;
        ADD_FAILURE() << "Run did not return after a stop request; agent log:\n" << AgentLog();
      }
      agent_thread_.join();
    }
    std::error_code ignored;
    if (!HasFailure() && !dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  std::string AgentLog() const override {
    std::lock_guard<std::mutex> lock(log_mutex_);
    return log_;
  }

  std::string TaskLog(uint64_t task_id) const {
    return ReadText(absl::StrCat(dir_, "/work/tasks/", task_id, "/log.txt"));
  }

  bool WaitForRunToReturn(Clock::duration timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!run_returned_ && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(10));
    return run_returned_;
  }

  std::atomic<int> stop_requests_{0};
  std::atomic<bool> run_returned_{false};
  absl::Status run_status_;
  std::thread agent_thread_;
  mutable std::mutex log_mutex_;
  std::string log_;
  std::string dir_;
};

TEST_F(EmbeddedAgentTest, SendsAMinorZeroOrchestratorNoProgressAndNoAgentLines) {
  orchestrator_.AnswerHellosAsMinor(0);
  // Healthy ranks beat once a second: with this threshold the agent writes lines about every
  // rank that trains for more than a tick or two between beats.
  StartAgent(/*silent_rank_warning_seconds=*/0.01);
  ExpectAck(orchestrator_.Send(MlpTask(20, {{0, 0, 0}}, 2000, 2000)));
  const std::vector<TaskExit> exits = WaitForExits(20, 1);
  ASSERT_EQ(exits.size(), 1u) << AgentLog();
  EXPECT_EQ(exits[0].reason, "completed");
  ASSERT_TRUE(WaitForState(20, TaskState::kExited, seconds(5)).has_value());

  EXPECT_THAT(TaskLog(20), HasSubstr("[agent] warning: rank 0 has sent no heartbeat"))
      << "the agent wrote no line the orchestrator could have been sent";
  EXPECT_THAT(orchestrator_.All<TaskProgress>(), IsEmpty());
  bool worker_lines = false;
  for (const LogBatch& batch : orchestrator_.All<LogBatch>()) {
    for (const LogLine& line : batch.lines) {
      EXPECT_NE(line.stream, LogStream::kAgent) << line.text;
      worker_lines = true;
    }
  }
  EXPECT_TRUE(worker_lines) << "the workers' output is still sent";
}

TEST_F(EmbeddedAgentTest, NamesASilentRankAndStillKillsItsTask) {
  StartAgent(/*silent_rank_warning_seconds=*/1.5);
  ExpectAck(orchestrator_.Send(MlpTask(21, {{0, 0, 0}}, 1000000, 1000000)));
  std::optional<TaskStatus> running = WaitForState(21, TaskState::kRunning);
  ASSERT_TRUE(running.has_value()) << AgentLog();
  ASSERT_EQ(running->processes.size(), 1u);
  const pid_t worker = static_cast<pid_t>(running->processes[0].pid);

  // Stopped, the worker sends nothing: it is named once the threshold is up.
  ASSERT_EQ(::kill(worker, SIGSTOP), 0);
  std::optional<LogLine> silent =
      WaitForAgentLine(21, "warning: rank 0 has sent no heartbeat for ", seconds(5));
  ASSERT_TRUE(silent.has_value()) << AgentLog();
  EXPECT_EQ(silent->rank, 0u);
  ASSERT_EQ(::kill(worker, SIGCONT), 0);
  std::optional<LogLine> back =
      WaitForAgentLine(21, "rank 0 is sending heartbeats again after", seconds(5));
  ASSERT_TRUE(back.has_value()) << AgentLog();
  EXPECT_EQ(back->rank, 0u);

  // Hung again, it cannot answer the stop: it is killed once the grace period is over.
  ASSERT_EQ(::kill(worker, SIGSTOP), 0);
  ExpectAck(orchestrator_.Send(KillTask{21, "the rank is stuck", 1}));
  const std::vector<TaskExit> exits = WaitForExits(21, 1, seconds(10));
  ASSERT_EQ(exits.size(), 1u) << AgentLog();
  EXPECT_EQ(exits[0].signal, SIGKILL);
  EXPECT_TRUE(exits[0].killed_by_agent);
  EXPECT_THAT(exits[0].reason, HasSubstr("killed after the grace period"));

  const std::string log = TaskLog(21);
  EXPECT_THAT(log, HasSubstr("[agent] warning: rank 0 has sent no heartbeat for "));
  EXPECT_THAT(log, HasSubstr("[agent] rank 0 is sending heartbeats again after"));
  EXPECT_THAT(AgentLog(), HasSubstr("task 21: warning: rank 0 has sent no heartbeat"));
}

// An agent nobody answers says so, with what to check, instead of waiting in silence.
TEST_F(EmbeddedAgentTest, TellsOfAnOrchestratorThatDoesNotAnswer) {
  orchestrator_.IgnoreHellos();
  StartAgent(kSilentWarningSeconds, /*unanswered_note_seconds=*/1.0);
  const auto deadline = Clock::now() + seconds(20);
  while (!absl::StrContains(AgentLog(), "no answer from the orchestrator") &&
         Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_THAT(AgentLog(), HasSubstr(absl::StrCat(
                              "no answer from the orchestrator at ", orchestrator_.endpoint(),
                              " for 1 s; still trying. Is `cohort orchestrator` running and "
                              "listening there? Is another agent already connected under "
                              "the id '",
                              kAgentId, "'")));
}

// An answer it cannot read before it registered (the orchestrator's clients' port speaks the
// client protocol) asks whether that is the port it was given, at once.
TEST_F(EmbeddedAgentTest, AnUnreadableAnswerBeforeRegisteringAsksWhetherItIsTheClientsPort) {
  orchestrator_.IgnoreHellos();
  StartAgent();
  ASSERT_TRUE(orchestrator_.WaitFor<AgentHello>(seconds(10)).has_value()) << AgentLog();
  orchestrator_.SendRaw("this is not a control envelope");
  const auto deadline = Clock::now() + seconds(10);
  while (!absl::StrContains(AgentLog(), "dropped a message") && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_THAT(AgentLog(), HasSubstr("; is this the orchestrator's clients' port (--client-listen) "
                                    "rather than its agents' (--listen)?"));
}

// A hello unheard on a connection that is up (a ROUTER that still holds the agent's earlier
// connection routes nothing on the new one) goes again on a fresh connection.
TEST_F(EmbeddedAgentTest, RegistersOnAFreshConnectionWhenAHelloGoesUnansweredOnOneThatIsUp) {
  orchestrator_.IgnoreHellos();
  StartAgent();  // takes the first hello, unanswered
  orchestrator_.AnswerHellos();
  ASSERT_TRUE(orchestrator_.WaitFor<AgentHello>(seconds(10)).has_value()) << AgentLog();
  const auto deadline = Clock::now() + seconds(5);
  while (!absl::StrContains(AgentLog(), "registered with") && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_THAT(AgentLog(), HasSubstr("has not answered this agent's registration for 5 s on a "
                                    "connection that is up (it may still hold the one lost "
                                    "before): registering on a fresh connection"));
  EXPECT_THAT(AgentLog(), HasSubstr("registered with"));
}

// The agent keeps the folders of its newest ended tasks only: those an earlier agent left go when
// it starts, and each ended task's folder goes once newer ones take its place.
TEST_F(EmbeddedAgentTest, KeepsTheFoldersOfItsNewestEndedTasksOnly) {
  std::string tasks;
  StartAgent(kSilentWarningSeconds, kAgentUnansweredNoteSeconds, [&](AgentOptions& options) {
    options.ended_task_folders_kept = 1;
    tasks = options.work_dir + "/tasks";
    for (const char* leftover : {"3", "4", "5"}) {
      std::filesystem::create_directories(tasks + "/" + leftover);
    }
  });
  auto folders = [&] {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(tasks)) {
      names.insert(entry.path().filename().string());
    }
    return names;
  };
  EXPECT_EQ(folders(), std::set<std::string>{"5"});
  EXPECT_THAT(AgentLog(), HasSubstr("removed the folders of 2 ended task(s) from "));
  for (const uint64_t task_id : {30u, 31u}) {
    StartTask task = MlpTask(task_id, {{0, 0, 0}}, 20, 20);
    task.worker.checkpoint_root = dir_ + "/checkpoints";  // else they are kept in its folder
    ExpectAck(orchestrator_.Send(task));
    ASSERT_EQ(WaitForExits(task_id, 1).size(), 1u) << AgentLog();
    const std::set<std::string> only_it{absl::StrCat(task_id)};
    const auto deadline = Clock::now() + seconds(10);
    while (folders() != only_it && Clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
    }
    EXPECT_EQ(folders(), only_it) << AgentLog();
  }
}

TEST_F(EmbeddedAgentTest, RunReturnsAfterOneStopRequestWithoutTasks) {
  StartAgent();
  ++stop_requests_;
  ASSERT_TRUE(WaitForRunToReturn(seconds(5))) << AgentLog();
  EXPECT_TRUE(run_status_.ok()) << run_status_;
  const std::string log = AgentLog();
  EXPECT_THAT(log, HasSubstr("stop requested: stopping 0 task(s), 10 s grace"));
  EXPECT_THAT(log, Not(HasSubstr("SIGINT")));
  EXPECT_THAT(log, Not(HasSubstr("SIGTERM")));
}

TEST_F(EmbeddedAgentTest, AStopRequestStopsTheTasksWithGraceThenRunReturns) {
  StartAgent();
  ExpectAck(orchestrator_.Send(MlpTask(22, {{0, 0, 0}}, 1000000, 1000000)));
  ASSERT_TRUE(WaitForState(22, TaskState::kRunning).has_value()) << AgentLog();
  ++stop_requests_;
  ASSERT_TRUE(WaitForState(22, TaskState::kStopping, seconds(5)).has_value()) << AgentLog();
  // A departing agent's slots take no task: the orchestrator places it elsewhere, no restart used.
  const ErrorReply departing =
      ExpectErrorReply(orchestrator_.Send(MlpTask(23, {{0, 0, 1}}, 100, 100)));
  EXPECT_EQ(departing.code, ControlErrorCode::kSlotUnavailable);
  EXPECT_EQ(departing.message, "the agent is shutting down");
  const std::vector<TaskExit> exits = WaitForExits(22, 1, seconds(kShutdownGraceSeconds + 5));
  ASSERT_EQ(exits.size(), 1u) << AgentLog();
  // The worker heard the stop and checkpointed in time.
  EXPECT_EQ(exits[0].signal, 0) << exits[0].reason;
  EXPECT_EQ(exits[0].exit_code, 0) << exits[0].reason;
  EXPECT_EQ(exits[0].reason, "stopped: the agent is shutting down");
  EXPECT_FALSE(orchestrator_.All<TaskCheckpointReport>().empty()) << "no checkpoint at the stop";
  ASSERT_TRUE(WaitForRunToReturn(seconds(5))) << AgentLog();
  EXPECT_TRUE(run_status_.ok()) << run_status_;
  EXPECT_THAT(AgentLog(), HasSubstr("stop requested: stopping 1 task(s), 10 s grace"));
}

// The task reports (metrics, checkpoints) received from `index` on, each as its message id and
// the report's batches; `kind` says which: 'T' training, 'V' validation, 'C' checkpoint.
struct ReceivedReport {
  uint64_t message_id = 0;
  char kind = 0;
  uint64_t batches = 0;
  friend bool operator==(const ReceivedReport&, const ReceivedReport&) = default;
};
std::vector<ReceivedReport> ReportsFrom(const FakeOrchestrator& orchestrator, size_t index) {
  std::vector<ReceivedReport> reports;
  for (size_t i = index; i < orchestrator.received().size(); ++i) {
    const DecodedControl& message = orchestrator.received()[i].message;
    if (const auto* metrics = std::get_if<TaskMetricsReport>(&message.message)) {
      reports.push_back({message.header.message_id,
                         metrics->report.kind == ReportKind::kTraining ? 'T' : 'V',
                         metrics->report.batches});
    } else if (const auto* checkpoint = std::get_if<TaskCheckpointReport>(&message.message)) {
      reports.push_back({message.header.message_id, 'C', checkpoint->batches});
    }
  }
  return reports;
}

// Reports as (kind, batches), without their message ids.
std::vector<std::pair<char, uint64_t>> Contents(const std::vector<ReceivedReport>& reports) {
  std::vector<std::pair<char, uint64_t>> contents;
  for (const ReceivedReport& report : reports) contents.emplace_back(report.kind, report.batches);
  return contents;
}

// An orchestrator that restarted, or never had some reports (they went while it was away), says
// NotRegistered: once registered again, the agent sends every report not acknowledged yet again,
// in order, and not those acknowledged; then the exit.
TEST_F(EmbeddedAgentTest, SendsTheReportsNotAcknowledgedAgainAfterRegisteringAgain) {
  StartAgent();
  ExpectAck(orchestrator_.Send(MlpTask(24, {{0, 0, 0}}, 200, 50)));
  orchestrator_.HoldExitAnswers();
  ASSERT_EQ(WaitForExits(24, 1).size(), 1u) << AgentLog();
  const std::vector<ReceivedReport> first = ReportsFrom(orchestrator_, 0);
  // Training every 20 batches, a validation and a checkpoint every 50.
  ASSERT_EQ(first.size(), 18u) << AgentLog();
  std::vector<ReceivedReport> unacknowledged;
  for (size_t i = 0; i < first.size(); ++i) {
    if (i % 2 == 0) {
      orchestrator_.Send(Ack{}, first[i].message_id);
    } else {
      unacknowledged.push_back(first[i]);
    }
  }
  const size_t before = orchestrator_.received().size();
  orchestrator_.Send(ErrorReply{ControlErrorCode::kNotRegistered, "unknown agent"});
  ASSERT_TRUE(orchestrator_.WaitFor<AgentHello>(seconds(10)).has_value()) << AgentLog();
  orchestrator_.AnswerHeldExits();
  std::optional<std::pair<ControlHeader, TaskExit>> exit = orchestrator_.WaitFor<TaskExit>(
      seconds(10), [](const TaskExit& e) { return e.task_id == 24; });
  ASSERT_TRUE(exit.has_value()) << "the exit goes again too; agent log:\n" << AgentLog();
  const std::vector<ReceivedReport> again = ReportsFrom(orchestrator_, before);
  EXPECT_EQ(Contents(again), Contents(unacknowledged));
  for (const ReceivedReport& report : again) {
    EXPECT_LT(report.message_id, exit->first.message_id) << "the reports go before the exit";
  }
}

// An orchestrator of an older minor acknowledges no report: none is sent to it again.
TEST_F(EmbeddedAgentTest, SendsAnOrchestratorOfAnOlderMinorNoReportAgain) {
  orchestrator_.AnswerHellosAsMinor(kControlMinorWithAcknowledgedReports - 1);
  StartAgent();
  ExpectAck(orchestrator_.Send(MlpTask(25, {{0, 0, 0}}, 100, 50)));
  ASSERT_EQ(WaitForExits(25, 1).size(), 1u) << AgentLog();
  ASSERT_FALSE(ReportsFrom(orchestrator_, 0).empty()) << AgentLog();
  const size_t before = orchestrator_.received().size();
  orchestrator_.Send(ErrorReply{ControlErrorCode::kNotRegistered, "unknown agent"});
  ASSERT_TRUE(orchestrator_.WaitFor<AgentHello>(seconds(10)).has_value()) << AgentLog();
  // A heartbeat follows the registration within its period: the reports would have gone first.
  ASSERT_TRUE(
      orchestrator_.WaitFor<AgentHeartbeat>(seconds(static_cast<int>(kAgentHeartbeatSeconds) + 5))
          .has_value())
      << AgentLog();
  EXPECT_THAT(ReportsFrom(orchestrator_, before), IsEmpty());
}

}  // namespace
}  // namespace cohort
