// The Orchestrator with a provisioner (agent_provisioner.h), here a batch system the test plays:
// a job per task, the job's state as the task's waiting reason, the task placed on its job's
// agents alone and the job cancelled when the task ends or its experiment is killed; a job lost
// before its agents registered restarts the trial within max_restarts; a job that cannot be had
// fails the trial naming why; a task no job could hold is refused at submission. With the
// provisioner's commands in the background, a slow sbatch holds nothing up, and a job that comes
// after its task was dropped is cancelled.
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/orchestrator/agent_provisioner.h"
#include "test/common/gate.h"
#include "test/orchestrator/orchestrator_fixture.h"

namespace cohort::orchestrator_test {
namespace {

using Phase = JobState::Phase;

bool Acked(const ClientMessage& reply) { return std::holds_alternative<ClientAck>(reply); }

// Jobs numbered from 100, each of one agent named job-<id>-0; nodes of 4 slots.
class ScriptedBatchSystem : public AgentProvisioner {
 public:
  std::string name() const override { return "Slurm"; }
  absl::Status CheckCanEverFit(uint32_t slots) const override {
    if (slots <= 4) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("needs ", slots, " slots; nodes have 4"));
  }
  absl::StatusOr<ProvisionedJob> Submit(const ProvisionRequest& request) override {
    submitted.push_back(request);
    if (!refusal.empty()) return absl::UnavailableError(refusal);
    const std::string id = absl::StrCat(next_job++);
    states[id] = JobState{Phase::kPending, "Priority"};
    return ProvisionedJob{id, 1};
  }
  absl::StatusOr<std::map<std::string, JobState>> States(
      const std::vector<std::string>& job_ids) override {
    ++polls;
    std::map<std::string, JobState> answer;
    for (const std::string& id : job_ids) {
      auto found = states.find(id);
      answer[id] = found != states.end() ? found->second : JobState{Phase::kEnded, "gone"};
    }
    return answer;
  }
  absl::Status Cancel(const std::string& job_id) override {
    cancelled.push_back(job_id);
    states[job_id] = JobState{Phase::kEnded, "CANCELLED"};
    return absl::OkStatus();
  }
  std::optional<std::string> JobOfAgent(absl::string_view agent_id) const override {
    if (!absl::StartsWith(agent_id, "job-")) return std::nullopt;
    const std::vector<std::string> parts = absl::StrSplit(agent_id, '-');
    if (parts.size() != 3) return std::nullopt;
    return parts[1];
  }

  std::vector<ProvisionRequest> submitted;
  std::vector<std::string> cancelled;
  std::map<std::string, JobState> states;
  std::string refusal;  // when set, Submit fails with it
  int polls = 0;
  int next_job = 100;
};

// Declared before the OrchestratorTest base: built before the Orchestrator, destroyed after it.
struct BatchSystemHolder {
  ScriptedBatchSystem batch_;
};

class ProvisionedOrchestratorTest : protected BatchSystemHolder, public OrchestratorTest {
 protected:
  ProvisionedOrchestratorTest() : OrchestratorTest(&batch_) {}

  // Time passes past the poll interval and the orchestrator ticks.
  void Later() {
    clock_.Advance(1.5);
    orchestrator_.Tick();
  }

  std::string ReasonOf(uint64_t task_id) {
    for (const TaskRow& row : Tasks()) {
      if (row.task_id == task_id) return row.reason;
    }
    return "(no such task)";
  }
};

TEST_F(ProvisionedOrchestratorTest, ATaskWaitsForItsJobThenRunsOnItsAgentsAlone) {
  const uint64_t experiment = Submit(SingleYaml(2, 10) + "slurm: {sbatch_args: [--qos=low]}\n");
  orchestrator_.Tick();
  ASSERT_EQ(batch_.submitted.size(), 1u);
  EXPECT_EQ(batch_.submitted[0].slots, 2u);
  EXPECT_THAT(batch_.submitted[0].options, ElementsAre("--qos=low"));
  ASSERT_EQ(Tasks().size(), 1u);
  const uint64_t task = Tasks()[0].task_id;
  EXPECT_EQ(Tasks()[0].job, "100");
  EXPECT_EQ(ReasonOf(task), "Slurm job 100 pending: Priority");

  batch_.states["100"] = JobState{Phase::kRunning, ""};
  Later();
  EXPECT_EQ(ReasonOf(task), "Slurm job 100 running; 0 of 1 agents registered");
  // An agent no job started is refused, and takes nothing.
  Register("node-1", 4);
  ASSERT_THAT(SentTo<ErrorReply>("node-1"), SizeIs(1));
  EXPECT_THAT(SentTo<ErrorReply>("node-1")[0].message, HasSubstr("is none of them"));
  EXPECT_THAT(Agents(), IsEmpty());

  Register("job-100-0", 2);
  ASSERT_EQ(StartTasksSentTo("job-100-0").size(), 1u);
  EXPECT_EQ(Tasks()[0].state, TaskRowState::kStarting);
  EXPECT_EQ(Tasks()[0].job, "100");
  TrainToTarget(task, 0.3);
  EXPECT_EQ(Describe(experiment).summary.state, ExperimentState::kCompleted);
  EXPECT_THAT(batch_.cancelled, ElementsAre("100"));
  EXPECT_THAT(Agents(), IsEmpty()) << "the job's agents are forgotten with it";
  // The cancelled job's agent, still saying something on its way out, is not asked to register.
  const size_t sent = outbox_.sent().size();
  FromAgent("job-100-0", AgentHeartbeat{});
  EXPECT_EQ(outbox_.sent().size(), sent);
}

TEST_F(ProvisionedOrchestratorTest, JobStatesAreReadAtMostOncePerPollInterval) {
  Submit(GridYaml(10));
  orchestrator_.Tick();
  EXPECT_EQ(batch_.submitted.size(), 4u);
  const int polls = batch_.polls;
  orchestrator_.Tick();
  orchestrator_.Tick();
  EXPECT_EQ(batch_.polls, polls);
  Later();
  EXPECT_EQ(batch_.polls, polls + 1);
}

TEST_F(ProvisionedOrchestratorTest, AJobLostBeforeItsAgentsRegisteredRestartsTheTrial) {
  const uint64_t experiment = Submit(SingleYaml(1, 10, /*max_restarts=*/1));
  orchestrator_.Tick();
  batch_.states["100"] = JobState{Phase::kEnded, "NODE_FAIL"};
  Later();
  orchestrator_.Tick();
  ASSERT_EQ(batch_.submitted.size(), 2u) << "a new job for the restarted trial";
  ASSERT_EQ(Describe(experiment).trials.size(), 1u);
  EXPECT_EQ(Describe(experiment).trials[0].restarts, 1u);
  EXPECT_EQ(Tasks()[0].job, "101");

  batch_.states["101"] = JobState{Phase::kEnded, "gone"};
  Later();
  orchestrator_.Tick();
  EXPECT_EQ(batch_.submitted.size(), 2u) << "max_restarts is used up";
  const TrialSummary trial = Describe(experiment).trials[0];
  EXPECT_EQ(trial.state, TrialState::kError);
  EXPECT_EQ(trial.error, "Slurm job 101 ended (gone) before its agents registered");
  EXPECT_THAT(batch_.cancelled, IsEmpty()) << "ended jobs need no scancel";
}

TEST_F(ProvisionedOrchestratorTest, AJobThatCannotBeHadFailsTheTrialSayingWhy) {
  batch_.refusal = "sbatch exited 1: sbatch: error: invalid partition specified: gpu";
  const uint64_t experiment = Submit(SingleYaml(1, 10, /*max_restarts=*/3));
  orchestrator_.Tick();
  const TrialSummary trial = Describe(experiment).trials[0];
  EXPECT_EQ(trial.state, TrialState::kError);
  EXPECT_EQ(trial.error,
            "cannot get a Slurm job: sbatch exited 1: sbatch: error: invalid partition specified: "
            "gpu");
  EXPECT_EQ(batch_.submitted.size(), 1u) << "every attempt would be refused the same way";
}

TEST_F(ProvisionedOrchestratorTest, AKilledExperimentCancelsItsJobs) {
  const uint64_t queued = Submit(SingleYaml(1, 10));
  const uint64_t placed = Submit(SingleYaml(1, 10));
  orchestrator_.Tick();
  // Its agent registering, the job runs before any poll says so.
  Register("job-101-0", 1);
  ASSERT_EQ(StartTasksSentTo("job-101-0").size(), 1u);
  const uint64_t placed_task = StartTasksSentTo("job-101-0")[0].task_id;
  Accept(placed_task);
  Running(placed_task);

  EXPECT_TRUE(Acked(orchestrator_.OnClientRequest(KillExperiment{queued})));
  EXPECT_THAT(batch_.cancelled, ElementsAre("100")) << "the queued task's job, at once";
  EXPECT_TRUE(Acked(orchestrator_.OnClientRequest(KillExperiment{placed})));
  ASSERT_THAT(SentTo<KillTask>("job-101-0"), SizeIs(1));
  ExitAll(placed_task, 0);
  EXPECT_THAT(batch_.cancelled, ElementsAre("100", "101"));
  EXPECT_EQ(Describe(placed).summary.state, ExperimentState::kStopped);
}

TEST_F(ProvisionedOrchestratorTest, ATaskNoJobCouldHoldIsRefusedAtSubmission) {
  const ClientError refused = SubmitRefused(SingleYaml(6, 10));
  EXPECT_EQ(refused.code, ClientErrorCode::kUnschedulable);
  EXPECT_EQ(refused.message, "resources.slots_per_trial: needs 6 slots; nodes have 4");
}

// A batch system whose sbatch waits for the test (at most 10 s) before it answers, as a slow
// slurmctld would; jobs numbered from 100. Safe to call from the orchestrator's provisioner
// thread while the test reads it.
class SlowBatchSystem : public AgentProvisioner {
 public:
  std::string name() const override { return "Slurm"; }
  absl::Status CheckCanEverFit(uint32_t) const override { return absl::OkStatus(); }
  absl::StatusOr<ProvisionedJob> Submit(const ProvisionRequest&) override {
    submitting.Open();
    answer.Pass().IgnoreError();
    std::lock_guard lock(mutex_);
    return ProvisionedJob{absl::StrCat(next_job_++), 1};
  }
  absl::StatusOr<std::map<std::string, JobState>> States(
      const std::vector<std::string>& job_ids) override {
    std::map<std::string, JobState> states;
    for (const std::string& id : job_ids) states[id] = JobState{Phase::kPending, "Priority"};
    return states;
  }
  absl::Status Cancel(const std::string& job_id) override {
    std::lock_guard lock(mutex_);
    cancelled_.push_back(job_id);
    return absl::OkStatus();
  }
  std::optional<std::string> JobOfAgent(absl::string_view) const override { return std::nullopt; }

  std::vector<std::string> cancelled() {
    std::lock_guard lock(mutex_);
    return cancelled_;
  }

  testing::Gate submitting;  // opened as sbatch begins
  testing::Gate answer;      // sbatch answers once the test opens it

 private:
  std::mutex mutex_;
  int next_job_ = 100;
  std::vector<std::string> cancelled_;
};

struct SlowBatchSystemHolder {
  SlowBatchSystem batch_;
};

class BackgroundProvisionerTest : protected SlowBatchSystemHolder, public OrchestratorTest {
 protected:
  BackgroundProvisionerTest() : OrchestratorTest(&batch_, /*in_background=*/true) {}

  // Ticks until `done` holds (the provisioner's answers come on later turns); false after 10 s.
  bool TickUntil(const std::function<bool()>& done) {
    for (int i = 0; i < 1000; ++i) {
      orchestrator_.Tick();
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

TEST_F(BackgroundProvisionerTest, TheOrchestratorGoesOnWhileSbatchRuns) {
  const uint64_t experiment = Submit(SingleYaml(1, 10));
  orchestrator_.Tick();
  ASSERT_TRUE(batch_.submitting.Pass().ok());
  // sbatch is still running: the orchestrator answered, and answers again.
  orchestrator_.Tick();
  ASSERT_EQ(Tasks().size(), 1u);
  EXPECT_EQ(Tasks()[0].job, "");
  EXPECT_EQ(Tasks()[0].reason, "asking Slurm for a job");
  EXPECT_EQ(Describe(experiment).summary.state, ExperimentState::kActive);

  batch_.answer.Open();
  ASSERT_TRUE(TickUntil([&] { return Tasks().size() == 1 && Tasks()[0].job == "100"; }));
  EXPECT_TRUE(TickUntil([&] { return Tasks()[0].reason == "Slurm job 100 pending: Priority"; }))
      << Tasks()[0].reason;
  EXPECT_TRUE(Acked(orchestrator_.OnClientRequest(KillExperiment{experiment})));
  EXPECT_TRUE(TickUntil([&] { return batch_.cancelled() == std::vector<std::string>{"100"}; }));
}

TEST_F(BackgroundProvisionerTest, AJobThatComesAfterItsTaskWasDroppedIsCancelled) {
  const uint64_t experiment = Submit(SingleYaml(1, 10));
  orchestrator_.Tick();
  ASSERT_TRUE(batch_.submitting.Pass().ok());
  EXPECT_TRUE(Acked(orchestrator_.OnClientRequest(KillExperiment{experiment})));
  EXPECT_THAT(Tasks(), IsEmpty());
  batch_.answer.Open();
  EXPECT_TRUE(TickUntil([&] { return batch_.cancelled() == std::vector<std::string>{"100"}; }));
}

}  // namespace
}  // namespace cohort::orchestrator_test
