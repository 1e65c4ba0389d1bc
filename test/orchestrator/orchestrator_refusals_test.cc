// The Orchestrator when an agent refuses a StartTask for want of slots (its state and the
// orchestrator's disagree, or it is shutting down): the task is placed again without using a
// restart, but not on that agent until a hold has passed, 1 s after the first refusal in a row,
// doubling to 30 s. An accepted StartTask or the agent's AgentHello ends the run of refusals; a
// held agent still counts for whether a trial can ever fit.
#include "test/orchestrator/orchestrator_fixture.h"

namespace cohort::orchestrator_test {
namespace {

using ::testing::Contains;

class RefusalTest : public OrchestratorTest {
 protected:
  // The agent answers its StartTask for `task_id` as an agent whose slots are taken does.
  void RefuseForWantOfSlots(uint64_t task_id, const std::string& why = "slot 0 is busy") {
    for (const SentMessage& sent : outbox_.sent()) {
      const auto* start = std::get_if<StartTask>(&sent.message);
      if (start != nullptr && start->task_id == task_id) {
        // A copy: the answer's own messages may move what outbox_ sent.
        const std::string agent_id = sent.agent_id;
        FromAgent(agent_id, ErrorReply{ControlErrorCode::kSlotUnavailable, why}, sent.message_id);
        return;
      }
    }
    ADD_FAILURE() << "no StartTask was sent for task " << task_id;
  }

  // Moves the clock on by `seconds` and lets the orchestrator act on it.
  void Wait(double seconds) {
    clock_.Advance(seconds);
    FromAgent("agent-1", AgentHeartbeat{"agent-1", clock_.UnixSeconds(), 0, {}});
    orchestrator_.Tick();
  }

  std::vector<std::string> Notices() {
    std::vector<std::string> lines;
    for (const OrchestratorEvent& event : orchestrator_.TakeEvents()) {
      if (event.level == OrchestratorEvent::Level::kNotice) lines.push_back(event.line);
    }
    return lines;
  }
};

TEST_F(RefusalTest, ARefusedTaskWaitsOutAHoldThatDoublesUpTo30Seconds) {
  Register("agent-1", 2);
  const uint64_t experiment_id = Submit(SingleYaml(1, 100, /*max_restarts=*/0));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const uint64_t trial_id = StartTasksSentTo("agent-1")[0].trial_id;
  orchestrator_.TakeEvents();

  size_t starts = 1;
  for (const double hold : {1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0}) {
    RefuseForWantOfSlots(StartTasksSentTo("agent-1").back().task_id, "slot 0 is busy with task 99");
    EXPECT_THAT(Notices(), Contains(absl::StrCat(
                               "agent agent-1 refused a task for want of slots (slot 0 is busy "
                               "with task 99): no task is placed there for ",
                               hold, " s")));
    ASSERT_THAT(Tasks(), SizeIs(1));
    EXPECT_EQ(Tasks()[0].state, TaskRowState::kQueued);
    EXPECT_EQ(Tasks()[0].reason,
              absl::StrCat("no agent takes a task now; agent-1 refused a task for want of slots "
                           "and is held back for ",
                           hold, " s"));
    Wait(hold - 0.1);
    EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(starts)) << "placed before " << hold << " s";
    Wait(0.2);
    ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(++starts)) << "not placed after " << hold;
  }
  // Not the trial's fault: no restart used, though max_restarts is 0.
  EXPECT_EQ(TrialOf(experiment_id, trial_id).restarts, 0u);
  EXPECT_NE(TrialOf(experiment_id, trial_id).state, TrialState::kError);

  // An accepted StartTask ends the run: the next refusal holds the agent for 1 s again.
  Accept(StartTasksSentTo("agent-1").back().task_id);
  Submit(SingleYaml(1, 100));
  const std::vector<StartTask> second = StartTasksSentTo("agent-1");
  ASSERT_THAT(second, SizeIs(starts + 1));
  orchestrator_.TakeEvents();
  RefuseForWantOfSlots(second.back().task_id);
  EXPECT_THAT(Notices(), Contains(HasSubstr("no task is placed there for 1 s")));
}

TEST_F(RefusalTest, AHeldAgentTakesTasksAgainWhenItRegistersAgain) {
  Register("agent-1", 1);
  Submit(SingleYaml(1, 100));
  RefuseForWantOfSlots(StartTasksSentTo("agent-1").at(0).task_id, "the agent is shutting down");
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  // The agent restarted: what it says now is the truth about its slots.
  Register("agent-1", 1);
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(2));
}

TEST_F(RefusalTest, ATaskGoesToAnotherAgentWhileOneIsHeldAndHeldAgentsStillCountAtSubmission) {
  Register("agent-1", 2);
  Register("agent-2", 1);
  Submit(SingleYaml(1, 100));  // best fit: agent-2
  ASSERT_THAT(StartTasksSentTo("agent-2"), SizeIs(1));
  RefuseForWantOfSlots(StartTasksSentTo("agent-2")[0].task_id);
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  EXPECT_THAT(StartTasksSentTo("agent-2"), SizeIs(1));
  Accept(StartTasksSentTo("agent-1")[0].task_id);

  // A trial of 2 slots fits the cluster (agent-1 once idle) whatever agent-2's hold.
  const ClientMessage reply = orchestrator_.OnClientRequest(SubmitExperiment{SingleYaml(2, 100)});
  const auto* submitted = std::get_if<ExperimentSubmitted>(&reply);
  ASSERT_NE(submitted, nullptr) << ClientMessageName(reply);
  EXPECT_THAT(submitted->warnings, Not(Contains(HasSubstr("no agent is connected"))));
  const std::vector<TaskRow> queued = TasksIn(TaskRowState::kQueued);
  ASSERT_THAT(queued, SizeIs(1));
  EXPECT_THAT(queued[0].reason, HasSubstr("agent-2 refused a task for want of slots and is held "
                                          "back for 1 s"));
}

}  // namespace
}  // namespace cohort::orchestrator_test
