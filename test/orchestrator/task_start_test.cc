// StartTasksFor and MixedGpuModels on explicit placements: each agent gets its own ranks and its
// place among the task's agents, only a task spanning agents meets at the orchestrator, and GPUs
// of more than one model are named.
#include "runtime/orchestrator/task_start.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

constexpr char kEndpoint[] = "tcp://10.0.0.5:29402";

StartTask Common() {
  StartTask start;
  start.task_id = 12;
  start.trial_id = 5;
  start.experiment_id = 2;
  start.attempt = 1;
  start.world_size = 3;
  start.worker.plugin_path = "/plugins/mlp.so";
  start.worker.config_yaml = "name: x\n";
  start.worker.checkpoint_root = "/ckpt";
  start.worker.resume_checkpoint_id = "trial-5-batch-100";
  return start;
}

TEST(TaskStartTest, EachAgentGetsItsRanksAndItsPlaceAmongTheTasksAgents) {
  Placement placement;
  placement.agents = {{"a", {0, 1}}, {"b", {3}}};
  const auto messages = StartTasksFor(Common(), kEndpoint, placement);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].first, "a");
  EXPECT_EQ(messages[1].first, "b");
  const StartTask& a = messages[0].second;
  const StartTask& b = messages[1].second;
  EXPECT_THAT(a.ranks,
              ElementsAre(Field(&RankAssignment::rank, 0u), Field(&RankAssignment::rank, 1u)));
  EXPECT_THAT(b.ranks, ElementsAre(Field(&RankAssignment::rank, 2u)));
  EXPECT_EQ(b.ranks[0].slot_index, 3u);
  EXPECT_EQ(a.cross_rank, 0u);
  EXPECT_EQ(b.cross_rank, 1u);
  EXPECT_EQ(b.cross_size, 2u);
  EXPECT_EQ(b.world_size, 3u);
  EXPECT_EQ(b.worker.resume_checkpoint_id, "trial-5-batch-100");
  EXPECT_EQ(b.attempt, 1u);
  EXPECT_EQ(a.rendezvous.endpoint, "tcp://10.0.0.5:29402");
  EXPECT_EQ(a.rendezvous.prefix, "task-12/");
}

TEST(TaskStartTest, ATaskOnOneAgentMeetsAtItsAgent) {
  Placement placement;
  placement.agents = {{"a", {2, 3, 4}}};
  const auto messages = StartTasksFor(Common(), kEndpoint, placement);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].second.ranks.size(), 3u);
  EXPECT_TRUE(messages[0].second.rendezvous.endpoint.empty());
  EXPECT_TRUE(messages[0].second.rendezvous.prefix.empty());
}

TEST(TaskStartTest, GpusOfMoreThanOneModelAreNamedWithTheirSlots) {
  const std::map<std::string, std::vector<AgentSlot>> slots = {
      {"a", {{0, SlotKind::kGpu, 0, "NVIDIA A100"}, {1, SlotKind::kGpu, 1, "NVIDIA A100"}}},
      {"b", {{0, SlotKind::kGpu, 0, "NVIDIA H100"}, {1, SlotKind::kGpu, 1, "NVIDIA A100"}}},
      {"c", {{0, SlotKind::kCpu, -1, "cpu"}}}};
  const auto slots_of = [&slots](const std::string& agent) -> const std::vector<AgentSlot>& {
    return slots.at(agent);
  };
  Placement same;
  same.agents = {{"a", {0, 1}}, {"b", {1}}};
  EXPECT_EQ(MixedGpuModels(same, slots_of), std::nullopt);
  Placement mixed;
  mixed.agents = {{"a", {0}}, {"b", {0}}};
  EXPECT_EQ(MixedGpuModels(mixed, slots_of), "NVIDIA A100 (a slot 0); NVIDIA H100 (b slot 0)");
  Placement cpus;
  cpus.agents = {{"c", {0}}};
  EXPECT_EQ(MixedGpuModels(cpus, slots_of), std::nullopt);
}

}  // namespace
}  // namespace cohort
