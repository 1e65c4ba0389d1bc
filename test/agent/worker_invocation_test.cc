// The worker command line and environment the agent builds for each rank of a StartTask: its
// arguments, the rank's variables, and the rendezvous keys only a task spanning agents gets from
// an agent that uses CURVE.
#include "runtime/agent/worker_invocation.h"

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::StartsWith;

StartTask Task() {
  StartTask task;
  task.task_id = 7;
  task.trial_id = 3;
  task.attempt = 2;
  task.worker.plugin_path = "/plugins/mlp.so";
  task.worker.config_yaml = "name: x\n";
  task.ranks = {{4, 0, 1}, {5, 1, 2}};
  task.world_size = 6;
  return task;
}

const TaskPlaces kPlaces{"/usr/bin/cohort", "/work/tasks/7", "tcp://127.0.0.1:5000",
                         "/work/tasks/7/checkpoints", ""};

TEST(WorkerInvocationTest, RunsTheWorkerCommandWithTheRanksArguments) {
  const WorkerInvocation worker = WorkerInvocationFor(
      Task(), Task().ranks[1], AgentSlot{2, SlotKind::kCpu, -1, "cpu"}, kPlaces, {});
  EXPECT_THAT(worker.argv,
              ElementsAre("/usr/bin/cohort", "worker", "--run-dir", "/work/tasks/7", "--plugin",
                          "/plugins/mlp.so", "--trial-id", "3", "--rank", "5", "--size", "6",
                          "--attempt", "2", "--endpoint", "tcp://127.0.0.1:5000",
                          "--checkpoint-root", "/work/tasks/7/checkpoints"));
}

TEST(WorkerInvocationTest, ARankOfATaskSpanningAgentsMeetsItsPeersAtTheRendezvous) {
  StartTask task = Task();
  task.cross_size = 2;
  task.rendezvous = {"tcp://10.0.0.5:29402", "task-7/"};
  task.worker.resume_checkpoint_id = "trial-3-batch-100";
  const WorkerInvocation worker = WorkerInvocationFor(
      task, task.ranks[1], AgentSlot{2, SlotKind::kCpu, -1, "cpu"}, kPlaces, {});
  EXPECT_THAT(
      worker.argv,
      ElementsAre("/usr/bin/cohort", "worker", "--run-dir", "/work/tasks/7", "--plugin",
                  "/plugins/mlp.so", "--trial-id", "3", "--rank", "5", "--size", "6", "--attempt",
                  "2", "--endpoint", "tcp://127.0.0.1:5000", "--checkpoint-root",
                  "/work/tasks/7/checkpoints", "--rendezvous", "tcp://10.0.0.5:29402",
                  "--rendezvous-prefix", "task-7/", "--resume", "trial-3-batch-100"))
      << "reports still go to the agent's worker channel (--endpoint)";
}

TEST(WorkerInvocationTest, ResumesFromTheNamedCheckpoint) {
  StartTask task = Task();
  task.worker.resume_checkpoint_id = "trial-3-batch-100";
  const WorkerInvocation worker = WorkerInvocationFor(
      task, task.ranks[0], AgentSlot{1, SlotKind::kCpu, -1, "cpu"}, kPlaces, {});
  ASSERT_GE(worker.argv.size(), 2u);
  EXPECT_EQ(worker.argv[worker.argv.size() - 2], "--resume");
  EXPECT_EQ(worker.argv.back(), "trial-3-batch-100");
}

TEST(WorkerInvocationTest, ValidatesAtTheResumedCheckpointWhenAsked) {
  StartTask task = Task();
  task.worker.resume_checkpoint_id = "trial-3-batch-100";
  task.worker.validate_at_resume = true;
  const WorkerInvocation worker = WorkerInvocationFor(
      task, task.ranks[0], AgentSlot{1, SlotKind::kCpu, -1, "cpu"}, kPlaces, {});
  ASSERT_GE(worker.argv.size(), 4u);
  EXPECT_THAT(std::vector<std::string>(worker.argv.end() - 4, worker.argv.end()),
              ElementsAre("--resume", "trial-3-batch-100", "--validate-at-resume", "1"));
}

TEST(WorkerInvocationTest, PassesTheTrialsNumberWithinItsExperiment) {
  StartTask task = Task();
  EXPECT_THAT(WorkerInvocationFor(task, task.ranks[0], AgentSlot{1, SlotKind::kCpu, -1, "cpu"},
                                  kPlaces, {})
                  .argv,
              Not(Contains("--trial-number")))
      << "an older orchestrator's task: the trial id seeds it";
  task.worker.trial_number = 2;
  const WorkerInvocation worker = WorkerInvocationFor(
      task, task.ranks[0], AgentSlot{1, SlotKind::kCpu, -1, "cpu"}, kPlaces, {});
  const auto flag = std::find(worker.argv.begin(), worker.argv.end(), "--trial-number");
  ASSERT_NE(flag, worker.argv.end());
  ASSERT_NE(flag + 1, worker.argv.end());
  EXPECT_EQ(*(flag + 1), "2");
}

TEST(WorkerInvocationTest, AddsTheRanksVariablesToTheInheritedEnvironment) {
  StartTask task = Task();
  task.environment = {{"OMP_NUM_THREADS", "1"}, {"PATH", "/opt/bin"}};
  const WorkerInvocation worker =
      WorkerInvocationFor(task, task.ranks[1], AgentSlot{2, SlotKind::kCpu, -1, "cpu"}, kPlaces,
                          {"PATH=/usr/bin", "HOME=/root", "COHORT_RANK=99", "junk"});
  EXPECT_THAT(worker.environment,
              ElementsAre("COHORT_DEVICE=cpu", "COHORT_LOCAL_RANK=1", "COHORT_RANK=5",
                          "COHORT_SIZE=6", absl::StrCat("COHORT_SUPERVISOR_PID=", ::getpid()),
                          "COHORT_TASK_ID=7", "HOME=/root", "OMP_NUM_THREADS=1", "PATH=/opt/bin"));
}

TEST(WorkerInvocationTest, GlooBindsAndPublishesTheAgentsAdvertisedAddress) {
  TaskPlaces places = kPlaces;
  places.gloo_hostname = "10.0.0.6";
  StartTask task = Task();
  const WorkerInvocation advertised =
      WorkerInvocationFor(task, task.ranks[0], AgentSlot{1, SlotKind::kCpu, -1, "cpu"}, places,
                          {"COHORT_GLOO_HOSTNAME=127.0.0.1"});
  EXPECT_THAT(advertised.environment, Contains("COHORT_GLOO_HOSTNAME=10.0.0.6"));
  EXPECT_THAT(advertised.environment, Not(Contains("COHORT_GLOO_HOSTNAME=127.0.0.1")));

  task.environment = {{"COHORT_GLOO_HOSTNAME", "192.168.1.6"}};
  EXPECT_THAT(
      WorkerInvocationFor(task, task.ranks[0], AgentSlot{1, SlotKind::kCpu, -1, "cpu"}, places, {})
          .environment,
      Contains("COHORT_GLOO_HOSTNAME=192.168.1.6"))
      << "the StartTask's environment has the last word";
  EXPECT_THAT(WorkerInvocationFor(Task(), Task().ranks[0], AgentSlot{1, SlotKind::kCpu, -1, "cpu"},
                                  kPlaces, {})
                  .environment,
              Not(Contains(testing::StartsWith("COHORT_GLOO_HOSTNAME="))))
      << "no advertised address: Gloo keeps its default";
}

TEST(WorkerInvocationTest, AGpuSlotSeesOnlyItsDevice) {
  const WorkerInvocation gpu = WorkerInvocationFor(
      Task(), Task().ranks[0], AgentSlot{1, SlotKind::kGpu, 3, "NVIDIA H100"}, kPlaces, {});
  EXPECT_THAT(gpu.environment, Contains("CUDA_VISIBLE_DEVICES=3"));
  EXPECT_THAT(gpu.environment, Contains("CUDA_DEVICE_ORDER=PCI_BUS_ID"))
      << "device ids count GPUs in PCI bus order";
  EXPECT_THAT(gpu.environment, Contains("COHORT_DEVICE=cuda:0")) << "its one visible device";
  const WorkerInvocation cpu =
      WorkerInvocationFor(Task(), Task().ranks[0], AgentSlot{1, SlotKind::kCpu, -1, "cpu"}, kPlaces,
                          {"CUDA_VISIBLE_DEVICES=0"});
  EXPECT_THAT(cpu.environment, Contains("CUDA_VISIBLE_DEVICES=0")) << "inherited, untouched";
  EXPECT_THAT(cpu.environment, Contains("COHORT_DEVICE=cpu"));
  EXPECT_THAT(WorkerInvocationFor(Task(), Task().ranks[0], AgentSlot{1, SlotKind::kCpu, -1, "cpu"},
                                  kPlaces, {})
                  .environment,
              Not(Contains(testing::StartsWith("CUDA_VISIBLE_DEVICES="))));
}

StartTask SpanningTask() {
  StartTask task = Task();
  task.cross_size = 2;
  task.rendezvous = {"tcp://10.0.0.5:29402", "task-7/"};
  return task;
}

TaskPlaces PlacesOfACurveAgent() {
  TaskPlaces places = kPlaces;
  places.agent_curve =
      CurveClientConfig{{"agent-public-key", "agent-secret-key"}, "agent-1", "server-public-key"};
  return places;
}

TEST(WorkerInvocationTest, AWorkerOfASpanningTaskGetsItsAgentsKeysForTheRendezvous) {
  const StartTask task = SpanningTask();
  const WorkerInvocation worker =
      WorkerInvocationFor(task, task.ranks[0], AgentSlot{1, SlotKind::kCpu, -1, "cpu"},
                          PlacesOfACurveAgent(), {"COHORT_RENDEZVOUS_SECRET_KEY=inherited"});
  EXPECT_THAT(worker.environment, IsSupersetOf({"COHORT_RENDEZVOUS_SERVER_KEY=server-public-key",
                                                "COHORT_RENDEZVOUS_PUBLIC_KEY=agent-public-key",
                                                "COHORT_RENDEZVOUS_SECRET_KEY=agent-secret-key"}));
  EXPECT_THAT(worker.environment, Not(Contains("COHORT_RENDEZVOUS_SECRET_KEY=inherited")));
}

TEST(WorkerInvocationTest, NoOtherWorkerGetsRendezvousKeys) {
  const AgentSlot slot{1, SlotKind::kCpu, -1, "cpu"};
  const std::vector<std::string> inherited = {"COHORT_RENDEZVOUS_SERVER_KEY=inherited",
                                              "COHORT_RENDEZVOUS_PUBLIC_KEY=inherited",
                                              "COHORT_RENDEZVOUS_SECRET_KEY=inherited"};
  EXPECT_THAT(WorkerInvocationFor(Task(), Task().ranks[0], slot, PlacesOfACurveAgent(), inherited)
                  .environment,
              Not(Contains(StartsWith("COHORT_RENDEZVOUS_"))))
      << "a task on one agent meets on the agent's own channel";
  EXPECT_THAT(WorkerInvocationFor(SpanningTask(), SpanningTask().ranks[0], slot, kPlaces, inherited)
                  .environment,
              Not(Contains(StartsWith("COHORT_RENDEZVOUS_"))))
      << "an agent without CURVE has no keys to give";
}

}  // namespace
}  // namespace cohort
