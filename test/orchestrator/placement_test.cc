#include "runtime/orchestrator/placement.h"

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::FieldsAre;

// Slots held by one task. Trial tasks get task id 100 + trial id, so a reason that names trials
// is visibly not naming task ids.
struct Hold {
  uint64_t task_id;
  uint64_t trial_id;
  std::vector<uint32_t> slots;
};

Hold Trial(uint64_t trial_id, std::vector<uint32_t> slots) {
  return Hold{100 + trial_id, trial_id, std::move(slots)};
}

Hold Command(uint64_t task_id, std::vector<uint32_t> slots) {
  return Hold{task_id, 0, std::move(slots)};
}

AgentView Agent(std::string id, uint32_t slots, std::vector<Hold> holds = {}) {
  AgentView agent{std::move(id), slots};
  for (const Hold& hold : holds) {
    for (uint32_t slot : hold.slots) agent.busy[slot] = SlotUser{hold.task_id, hold.trial_id};
  }
  return agent;
}

// "agent-1[0 1] agent-2[0 1]".
std::string Describe(const Placement& placement) {
  std::vector<std::string> agents;
  for (const AgentSlots& taken : placement.agents) {
    agents.push_back(absl::StrCat(taken.agent_id, "[", absl::StrJoin(taken.slots, " "), "]"));
  }
  return absl::StrJoin(agents, " ");
}

// The placement as text, or "waits: <reason>".
std::string Describe(const PlacementDecision& decision) {
  if (const auto* placement = std::get_if<Placement>(&decision)) return Describe(*placement);
  return "waits: " + std::get<Waiting>(decision).reason;
}

PlacementRequest Request(uint64_t trial_id, uint32_t slots) {
  return PlacementRequest{100 + trial_id, trial_id, slots};
}

enum class Outcome { kPlaced, kWaits, kRefused };

struct PlacementCase {
  std::string name;
  std::vector<AgentView> agents;
  uint32_t slots;
  Outcome outcome;
  std::string expected;  // the placement as Describe writes it, or the exact reason
};

// Ten one-slot agents a0..a9, each held by trial 10 + i.
std::vector<AgentView> TenFullOneSlotAgents() {
  std::vector<AgentView> agents;
  for (uint32_t i = 0; i < 10; ++i) {
    agents.push_back(Agent(absl::StrCat("a", i), 1, {Trial(10 + i, {0})}));
  }
  return agents;
}

std::vector<PlacementCase> Cases() {
  const std::vector<AgentView> mixed = {
      Agent("agent-1", 8, {Trial(1, {0, 1})}),           // 6 free
      Agent("agent-2", 8, {Trial(2, {0, 1, 2, 3, 4})}),  // 3 free
      Agent("agent-3", 4),                               // 4 free
  };
  const std::vector<AgentView> two_eights = {Agent("agent-1", 8), Agent("agent-2", 8)};
  return {
      // One agent, best fit.
      {"best_fit_takes_the_fewest_free_that_fit", mixed, 3, Outcome::kPlaced, "agent-2[5 6 7]"},
      {"best_fit_moves_to_the_next_fewest", mixed, 4, Outcome::kPlaced, "agent-3[0 1 2 3]"},
      {"best_fit_ties_go_to_the_lower_id",
       {Agent("agent-b", 4, {Trial(1, {1})}), Agent("agent-a", 4, {Trial(2, {0})})},
       2,
       Outcome::kPlaced,
       "agent-a[1 2]"},
      {"lowest_free_slots_first",
       {Agent("agent-1", 8, {Trial(1, {0, 2, 3})})},
       3,
       Outcome::kPlaced,
       "agent-1[1 4 5]"},
      {"a_full_agent_stays_on_one_agent", two_eights, 8, Outcome::kPlaced,
       "agent-1[0 1 2 3 4 5 6 7]"},
      {"busy_entries_beyond_the_agent_are_ignored",
       {Agent("agent-1", 2, {Trial(1, {2, 5})})},
       2,
       Outcome::kPlaced,
       "agent-1[0 1]"},
      {"agents_without_slots_are_ignored",
       {Agent("cpu-1", 0), Agent("gpu-1", 2)},
       2,
       Outcome::kPlaced,
       "gpu-1[0 1]"},

      // Spanning whole idle agents.
      {"spans_whole_idle_agents",
       {Agent("agent-1", 4), Agent("agent-2", 4), Agent("agent-3", 4)},
       8,
       Outcome::kPlaced,
       "agent-1[0 1 2 3] agent-2[0 1 2 3]"},
      {"spanning_skips_a_busy_agent",
       {Agent("agent-1", 4, {Trial(3, {0})}), Agent("agent-2", 4), Agent("agent-3", 4)},
       8,
       Outcome::kPlaced,
       "agent-2[0 1 2 3] agent-3[0 1 2 3]"},
      {"spanning_prefers_the_largest_size",
       {Agent("a4-1", 4), Agent("a4-2", 4), Agent("a4-3", 4), Agent("a4-4", 4), Agent("a8-1", 8),
        Agent("a8-2", 8)},
       16,
       Outcome::kPlaced,
       "a8-1[0 1 2 3 4 5 6 7] a8-2[0 1 2 3 4 5 6 7]"},
      {"spanning_falls_back_to_a_smaller_size",
       {Agent("a4-1", 4), Agent("a4-2", 4), Agent("a4-3", 4), Agent("a4-4", 4),
        Agent("a8-1", 8, {Trial(1, {0})}), Agent("a8-2", 8)},
       16,
       Outcome::kPlaced,
       "a4-1[0 1 2 3] a4-2[0 1 2 3] a4-3[0 1 2 3] a4-4[0 1 2 3]"},

      // Waiting, naming what blocks.
      {"one_agent_waits_naming_trials",
       {Agent("agent-1", 8, {Trial(7, {0, 1, 2})}),
        Agent("agent-2", 8, {Trial(4, {0, 1, 2, 3}), Trial(5, {4, 5, 6, 7})})},
       8,
       Outcome::kWaits,
       "needs 8 slots on one agent; agent-1 has 3 busy (trial 7), agent-2 has 8 busy "
       "(trials 4, 5)"},
      {"waiting_names_only_agents_large_enough", mixed, 7, Outcome::kWaits,
       "needs 7 slots on one agent; agent-1 has 2 busy (trial 1), agent-2 has 5 busy (trial 2)"},
      {"waiting_names_tasks_that_are_not_trials",
       {Agent("agent-1", 2, {Trial(3, {0}), Command(9, {1})})},
       1,
       Outcome::kWaits,
       "needs 1 slot on one agent; agent-1 has 2 busy (trial 3, task 9)"},
      {"waiting_lists_at_most_eight_agents", TenFullOneSlotAgents(), 1, Outcome::kWaits,
       "needs 1 slot on one agent; a0 has 1 busy (trial 10), a1 has 1 busy (trial 11), a2 has 1 "
       "busy (trial 12), a3 has 1 busy (trial 13), a4 has 1 busy (trial 14), a5 has 1 busy (trial "
       "15), a6 has 1 busy (trial 16), a7 has 1 busy (trial 17), and 2 more"},
      {"spanning_waits_for_a_busy_agent",
       {Agent("agent-1", 8), Agent("agent-2", 8, {Trial(7, {0, 1, 2})})},
       16,
       Outcome::kWaits,
       "needs 2 whole idle agents of 8 slots; 1 is idle; agent-2 has 3 busy (trial 7)"},
      {"spanning_never_takes_part_of_an_agent",
       {Agent("agent-1", 4), Agent("agent-2", 4, {Trial(1, {3})}),
        Agent("agent-3", 4, {Trial(2, {0})})},
       8,
       Outcome::kWaits,
       "needs 2 whole idle agents of 4 slots; 1 is idle; agent-2 has 1 busy (trial 1), agent-3 "
       "has 1 busy (trial 2)"},
      {"spanning_waits_naming_every_usable_size",
       {Agent("a4-1", 4), Agent("a4-2", 4, {Trial(2, {0, 1})}), Agent("a4-3", 4), Agent("a4-4", 4),
        Agent("a8-1", 8, {Trial(1, {0})}), Agent("a8-2", 8)},
       16,
       Outcome::kWaits,
       "needs 2 whole idle agents of 8 slots; 1 is idle; a8-1 has 1 busy (trial 1); or 4 whole "
       "idle agents of 4 slots; 3 are idle; a4-2 has 2 busy (trial 2)"},
      {"a_request_one_agent_can_hold_never_spans",
       {Agent("a4-1", 4), Agent("a4-2", 4), Agent("a8-1", 8, {Trial(1, {0})})},
       8,
       Outcome::kWaits,
       "needs 8 slots on one agent; a8-1 has 1 busy (trial 1)"},

      // Refused at submission (and waiting with the same words if asked to place).
      {"refused_zero_slots", two_eights, 0, Outcome::kRefused,
       "needs 0 slots; a task needs at least 1"},
      {"refused_not_a_multiple", two_eights, 12, Outcome::kRefused,
       "needs 12 slots; agents have 8 slots each and 12 is not a multiple of 8: use 8 or 16"},
      {"refused_not_a_multiple_even_when_busy",
       {Agent("agent-1", 8, {Trial(1, {0})}), Agent("agent-2", 8), Agent("agent-3", 8)},
       20,
       Outcome::kRefused,
       "needs 20 slots; agents have 8 slots each and 20 is not a multiple of 8: use 16 or 24"},
      {"refused_more_than_the_cluster", two_eights, 40, Outcome::kRefused,
       "needs 40 slots; the cluster has 16 (2 agents of 8)"},
      {"refused_more_than_a_mixed_cluster",
       {Agent("a8-1", 8), Agent("a4-1", 4), Agent("a4-2", 4)},
       17,
       Outcome::kRefused,
       "needs 17 slots; the cluster has 16 (1 agent of 8, 2 agents of 4)"},
      {"refused_when_no_size_divides",
       {Agent("a8-1", 8), Agent("a8-2", 8), Agent("a4-1", 4), Agent("a4-2", 4)},
       12,
       Outcome::kRefused,
       "needs 12 slots, more than any agent has, so it must span whole agents of one size: 12 is "
       "not a multiple of 8; it would take 3 agents of 4 but the cluster has 2: use 8 or 16"},
      {"refused_suggesting_only_what_fits",
       {Agent("a8-1", 8), Agent("a4-1", 4)},
       10,
       Outcome::kRefused,
       "needs 10 slots, more than any agent has, so it must span whole agents of one size: 10 is "
       "not a multiple of 8; 10 is not a multiple of 4: use 8"},
      {"refused_without_agents",
       {},
       1,
       Outcome::kRefused,
       "needs 1 slot; the cluster has no agents with slots"},
      {"refused_with_only_slotless_agents",
       {Agent("cpu-1", 0)},
       2,
       Outcome::kRefused,
       "needs 2 slots; the cluster has no agents with slots"},
  };
}

class PlacementTableTest : public ::testing::TestWithParam<PlacementCase> {};

TEST_P(PlacementTableTest, DecidesAsExpected) {
  const PlacementCase& c = GetParam();
  const PlacementRequest request = Request(42, c.slots);
  const absl::Status admissible = CheckCanEverFit(request, c.agents);
  const PlacementDecision decision = TryPlace(request, c.agents);
  switch (c.outcome) {
    case Outcome::kPlaced:
      EXPECT_TRUE(admissible.ok()) << admissible;
      EXPECT_EQ(Describe(decision), c.expected);
      break;
    case Outcome::kWaits:
      EXPECT_TRUE(admissible.ok()) << admissible;
      EXPECT_EQ(Describe(decision), "waits: " + c.expected);
      break;
    case Outcome::kRefused:
      EXPECT_EQ(admissible.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(admissible.message(), c.expected);
      EXPECT_EQ(Describe(decision), "waits: " + c.expected);
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, PlacementTableTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<PlacementCase>& info) {
                           return info.param.name;
                         });

TEST(PlacementRanksTest, GoAgentByAgentThenSlotBySlot) {
  const std::vector<AgentView> agents = {Agent("agent-2", 2), Agent("agent-1", 2)};
  const PlacementDecision decision = TryPlace(Request(1, 4), agents);
  ASSERT_TRUE(std::holds_alternative<Placement>(decision)) << Describe(decision);
  EXPECT_THAT(std::get<Placement>(decision).Ranks(),
              ElementsAre(FieldsAre(0u, "agent-1", 0u, 0u), FieldsAre(1u, "agent-1", 1u, 1u),
                          FieldsAre(2u, "agent-2", 0u, 0u), FieldsAre(3u, "agent-2", 1u, 1u)));
}

TEST(PlacementRanksTest, FollowFreeSlotsAroundBusyOnes) {
  const std::vector<AgentView> agents = {Agent("agent-1", 4, {Trial(9, {0, 2})})};
  const PlacementDecision decision = TryPlace(Request(1, 2), agents);
  ASSERT_TRUE(std::holds_alternative<Placement>(decision)) << Describe(decision);
  EXPECT_THAT(std::get<Placement>(decision).Ranks(),
              ElementsAre(FieldsAre(0u, "agent-1", 1u, 0u), FieldsAre(1u, "agent-1", 3u, 1u)));
}

TEST(ApplyPlacementTest, MarksSlotsBusyAndReleaseFreesOnlyThatTask) {
  std::vector<AgentView> agents = {Agent("agent-1", 4, {Trial(9, {0})})};
  const PlacementRequest request = Request(1, 2);
  ApplyPlacement(request, Placement{{AgentSlots{"agent-1", {1, 2}}}}, &agents);
  EXPECT_THAT(agents[0].busy,
              ElementsAre(FieldsAre(0u, FieldsAre(109u, 9u)), FieldsAre(1u, FieldsAre(101u, 1u)),
                          FieldsAre(2u, FieldsAre(101u, 1u))));
  ReleaseTask(request.task_id, &agents);
  EXPECT_THAT(agents[0].busy, ElementsAre(FieldsAre(0u, FieldsAre(109u, 9u))));
}

// The decisions of a queue, one line per request: "trial 1: agent-1[0]".
std::vector<std::string> Describe(const std::vector<QueuedDecision>& decisions) {
  std::vector<std::string> lines;
  for (const QueuedDecision& queued : decisions) {
    lines.push_back(
        absl::StrCat("trial ", queued.request.trial_id, ": ", Describe(queued.decision)));
  }
  return lines;
}

TEST(PlaceInQueueOrderTest, OneSlotTrialsShareAnAgentWithATwoSlotTrial) {
  std::vector<AgentView> agents = {Agent("agent-1", 4)};
  const std::vector<PlacementRequest> queue = {Request(1, 1), Request(2, 2), Request(3, 1),
                                               Request(4, 1)};
  EXPECT_THAT(Describe(PlaceInQueueOrder(queue, &agents)),
              ElementsAre("trial 1: agent-1[0]", "trial 2: agent-1[1 2]", "trial 3: agent-1[3]",
                          "trial 4: waits: needs 1 slot on one agent; agent-1 has 4 busy "
                          "(trials 1, 2, 3)"));
  EXPECT_EQ(agents[0].busy.size(), 4u);
}

TEST(PlaceInQueueOrderTest, AWaitingRequestDoesNotHoldBackSmallerOnes) {
  std::vector<AgentView> agents = {Agent("agent-1", 4)};
  const std::vector<PlacementRequest> queue = {Request(1, 1), Request(2, 1), Request(3, 1),
                                               Request(4, 2), Request(5, 1)};
  EXPECT_THAT(Describe(PlaceInQueueOrder(queue, &agents)),
              ElementsAre("trial 1: agent-1[0]", "trial 2: agent-1[1]", "trial 3: agent-1[2]",
                          "trial 4: waits: needs 2 slots on one agent; agent-1 has 3 busy "
                          "(trials 1, 2, 3)",
                          "trial 5: agent-1[3]"));
}

TEST(PlaceInQueueOrderTest, AGridOfFourOnATwoSlotAgentRunsTwoAtATime) {
  std::vector<AgentView> agents = {Agent("agent-1", 2)};
  const std::vector<PlacementRequest> grid = {Request(1, 1), Request(2, 1), Request(3, 1),
                                              Request(4, 1)};
  EXPECT_THAT(Describe(PlaceInQueueOrder(grid, &agents)),
              ElementsAre("trial 1: agent-1[0]", "trial 2: agent-1[1]",
                          "trial 3: waits: needs 1 slot on one agent; agent-1 has 2 busy "
                          "(trials 1, 2)",
                          "trial 4: waits: needs 1 slot on one agent; agent-1 has 2 busy "
                          "(trials 1, 2)"));

  ReleaseTask(grid[0].task_id, &agents);
  ReleaseTask(grid[1].task_id, &agents);
  const std::vector<PlacementRequest> rest = {grid[2], grid[3]};
  EXPECT_THAT(Describe(PlaceInQueueOrder(rest, &agents)),
              ElementsAre("trial 3: agent-1[0]", "trial 4: agent-1[1]"));
}

}  // namespace
}  // namespace cohort
