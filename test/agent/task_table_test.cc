// The task table: what a StartTask may ask for (slots that exist and are free, consistent ranks,
// one config, ranks on other agents only with a rendezvous where they meet), which ErrorReply each
// refusal becomes, and how slots are held until a task has exited; and the GPU slots the driver's
// /proc files list.
#include "runtime/agent/task_table.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/agent/gpu_slots.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

StartTask TwoRankTask(uint64_t task_id, uint32_t first_slot = 0) {
  StartTask task;
  task.task_id = task_id;
  task.trial_id = 3;
  task.worker.plugin_path = "/plugins/mlp.so";
  task.worker.config_yaml = "name: x\n";
  task.ranks = {{0, 0, first_slot}, {1, 1, first_slot + 1}};
  task.world_size = 2;
  task.cross_size = 1;
  return task;
}

TEST(TaskTableTest, AdmitsATaskOnFreeSlotsAndHoldsThemUntilItExits) {
  TaskTable table(CpuSlots(4));
  ASSERT_TRUE(table.Admit(TwoRankTask(7)).ok());
  const TaskEntry* entry = table.Find(7);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->state, TaskState::kPending);
  EXPECT_THAT(entry->slots, ElementsAre(0, 1));
  EXPECT_THAT(entry->ranks, ElementsAre(0, 1));
  EXPECT_EQ(table.BusySlots(), 2u);
  EXPECT_THAT(table.LiveTaskIds(), ElementsAre(7));

  ASSERT_TRUE(table.SetState(7, TaskState::kExited).ok());
  EXPECT_EQ(table.BusySlots(), 0u);
  EXPECT_THAT(table.LiveTaskIds(), IsEmpty());
  ASSERT_EQ(table.Entries().size(), 1u);  // listed until its exits are acknowledged
  EXPECT_TRUE(table.Admit(TwoRankTask(8)).ok()) << "the exited task's slots are free";
  table.Remove(7);
  EXPECT_EQ(table.Find(7), nullptr);
}

TEST(TaskTableTest, RefusesABusySlotNamingTheTaskHoldingIt) {
  TaskTable table(CpuSlots(4));
  ASSERT_TRUE(table.Admit(TwoRankTask(7)).ok());
  const absl::Status busy = table.Admit(TwoRankTask(8, /*first_slot=*/1));
  EXPECT_EQ(busy.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(busy.message(), HasSubstr("slot 1 is busy with task 7"));
  EXPECT_EQ(table.Find(8), nullptr) << "a refused task touches nothing";
  EXPECT_EQ(ErrorReplyFor(busy).code, ControlErrorCode::kSlotUnavailable);
  EXPECT_TRUE(table.Admit(TwoRankTask(9, /*first_slot=*/2)).ok());
}

TEST(TaskTableTest, RefusesASlotThatDoesNotExist) {
  TaskTable table(CpuSlots(2));
  const absl::Status missing = table.Admit(TwoRankTask(7, /*first_slot=*/1));
  EXPECT_EQ(ErrorReplyFor(missing).code, ControlErrorCode::kSlotUnavailable);
  EXPECT_THAT(missing.message(), HasSubstr("slot 2 does not exist"));
}

TEST(TaskTableTest, RefusesATaskIdItHoldsAlready) {
  TaskTable table(CpuSlots(4));
  ASSERT_TRUE(table.Admit(TwoRankTask(7)).ok());
  const absl::Status again = table.Admit(TwoRankTask(7, /*first_slot=*/2));
  EXPECT_EQ(ErrorReplyFor(again).code, ControlErrorCode::kDuplicateTask);
  EXPECT_THAT(again.message(), HasSubstr("task 7 is already on this agent"));
}

TEST(TaskTableTest, RefusesAMalformedTaskNamingWhatIsWrong) {
  TaskTable table(CpuSlots(4));
  struct Case {
    std::string what;
    void (*change)(StartTask&);
    std::string message;
  };
  const Case cases[] = {
      {"no ranks", [](StartTask& t) { t.ranks.clear(); }, "no ranks"},
      {"rank out of range", [](StartTask& t) { t.ranks[1].rank = 2; },
       "rank 2 is not below the world size 2"},
      {"rank twice", [](StartTask& t) { t.ranks[1].rank = 0; }, "rank 0 is listed twice"},
      {"local rank twice", [](StartTask& t) { t.ranks[1].local_rank = 0; },
       "local rank 0 is listed twice"},
      {"local rank out of range", [](StartTask& t) { t.ranks[1].local_rank = 5; },
       "local rank 5 is not below the 2 ranks"},
      {"slot twice", [](StartTask& t) { t.ranks[1].slot_index = 0; },
       "slot 0 is given to two ranks"},
      {"no plugin", [](StartTask& t) { t.worker.plugin_path.clear(); }, "plugin_path is empty"},
      {"two configs", [](StartTask& t) { t.worker.config_path = "/x.yaml"; }, "exactly one of"},
      {"no config", [](StartTask& t) { t.worker.config_yaml.clear(); }, "exactly one of"},
      {"ranks elsewhere on no other agent", [](StartTask& t) { t.world_size = 4; },
       "world size 4 exceeds the 2 ranks on this agent, but cross_size 1"},
      {"other agents, no rendezvous",
       [](StartTask& t) {
         t.world_size = 4;
         t.cross_size = 2;
       },
       "a task spanning 2 agents needs a rendezvous endpoint"},
      {"cross rank out of range",
       [](StartTask& t) {
         t.world_size = 4;
         t.cross_rank = 2;
         t.cross_size = 2;
         t.rendezvous = {"tcp://10.0.0.5:29402", "task-7/"};
       },
       "cross rank 2 is not below the cross size 2"},
      {"cross rank of a one-agent task", [](StartTask& t) { t.cross_rank = 7; },
       "cross rank 7 of a task on this agent alone (cross_size 1)"},
      {"task id 0", [](StartTask& t) { t.task_id = 0; }, "task ids start at 1"},
      {"empty variable name",
       [](StartTask& t) {
         t.environment.push_back({"", "x"});
       },
       "environment variable name '' is empty or holds '='"},
      {"variable name with =",
       [](StartTask& t) {
         t.environment.push_back({"A=B", "x"});
       },
       "environment variable name 'A=B' is empty or holds '='"},
  };
  for (const Case& c : cases) {
    StartTask task = TwoRankTask(7);
    c.change(task);
    const absl::Status refused = table.Admit(task);
    EXPECT_EQ(ErrorReplyFor(refused).code, ControlErrorCode::kInvalidRequest) << c.what;
    EXPECT_THAT(refused.message(), HasSubstr(c.message)) << c.what;
  }
  EXPECT_THAT(table.Entries(), IsEmpty());
}

TEST(TaskTableTest, AdmitsItsPartOfATaskSpanningAgentsThatNamesWhereTheRanksMeet) {
  TaskTable table(CpuSlots(2));
  StartTask task = TwoRankTask(7);
  task.ranks = {{2, 0, 0}, {3, 1, 1}};  // ranks 0 and 1 run on the other agent
  task.world_size = 4;
  task.cross_rank = 1;
  task.cross_size = 2;
  task.rendezvous = {"tcp://10.0.0.5:29402", "task-7/"};
  const absl::Status admitted = table.Admit(task);
  ASSERT_TRUE(admitted.ok()) << admitted;
  const TaskEntry* entry = table.Find(7);
  ASSERT_NE(entry, nullptr);
  EXPECT_THAT(entry->slots, ElementsAre(0, 1));
  EXPECT_THAT(entry->ranks, ElementsAre(2, 3));
  EXPECT_EQ(table.BusySlots(), 2u);
}

TEST(TaskTableTest, SetStateOfAnUnknownTaskIsNotFound) {
  TaskTable table(CpuSlots(1));
  const absl::Status unknown = table.SetState(9, TaskState::kRunning);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrorReplyFor(unknown).code, ControlErrorCode::kUnknownTask);
}

TEST(TaskTableTest, CpuSlotsAreNumberedFromZero) {
  EXPECT_THAT(CpuSlots(2), ElementsAre(AgentSlot{0, SlotKind::kCpu, -1, "cpu"},
                                       AgentSlot{1, SlotKind::kCpu, -1, "cpu"}));
}

// The driver's folders, as /proc/driver/nvidia/gpus holds them, written into `root`.
void WriteGpuFolder(const std::string& root, const std::string& bus_id,
                    const std::string& information) {
  std::filesystem::create_directories(root + "/" + bus_id);
  std::ofstream(root + "/" + bus_id + "/information") << information;
}

TEST(GpuSlotsTest, OneSlotPerGpuInPciBusOrderNamedByModel) {
  TempFolder folder;
  WriteGpuFolder(folder.path(), "0000:c3:00.0",
                 "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 160\nBus Type: \t PCIe\n");
  WriteGpuFolder(folder.path(), "0000:1b:00.0", "Model: \t\t NVIDIA A100-SXM4-40GB\n");
  WriteGpuFolder(folder.path(), "0000:41:00.0", "IRQ: 12\n");  // no model line
  EXPECT_THAT(DetectGpuSlots(folder.path()),
              ElementsAre(AgentSlot{0, SlotKind::kGpu, 0, "NVIDIA A100-SXM4-40GB"},
                          AgentSlot{1, SlotKind::kGpu, 1, "NVIDIA GPU"},
                          AgentSlot{2, SlotKind::kGpu, 2, "NVIDIA H100 80GB HBM3"}));
}

TEST(GpuSlotsTest, NoDriverMeansNoGpuSlots) {
  TempFolder folder;
  EXPECT_THAT(DetectGpuSlots(folder.path()), testing::IsEmpty());
  EXPECT_THAT(DetectGpuSlots(folder / "missing"), testing::IsEmpty());
  // A CUDA_VISIBLE_DEVICES left from elsewhere changes nothing where there is no GPU.
  absl::StatusOr<std::vector<AgentSlot>> visible = VisibleGpuSlots("0,1", folder.path());
  ASSERT_TRUE(visible.ok()) << visible.status();
  EXPECT_THAT(*visible, testing::IsEmpty());
}

// Three GPUs, out of PCI bus order on disk, with their UUIDs.
void WriteThreeGpus(const std::string& root) {
  WriteGpuFolder(root, "0000:c3:00.0",
                 "Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-c3c3c3c3-0000-1111-2222-"
                 "333333333333\n");
  WriteGpuFolder(root, "0000:1b:00.0",
                 "Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-1b1b1b1b-0000-1111-2222-"
                 "333333333333\n");
  WriteGpuFolder(root, "0000:41:00.0",
                 "Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-41414141-0000-1111-2222-"
                 "333333333333\n");
}

TEST(GpuSlotsTest, CudaVisibleDevicesNamesTheGpusOfferedInItsOrder) {
  TempFolder folder;
  WriteThreeGpus(folder.path());
  constexpr char kModel[] = "NVIDIA H100 80GB HBM3";
  // Unset: every GPU.
  absl::StatusOr<std::vector<AgentSlot>> all = VisibleGpuSlots(std::nullopt, folder.path());
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, DetectGpuSlots(folder.path()));
  // Indexes in PCI bus order and UUIDs (or their prefixes), in the variable's order: slot i is
  // the i-th named, its device the GPU's index in PCI bus order.
  absl::StatusOr<std::vector<AgentSlot>> named =
      VisibleGpuSlots(" 2, GPU-1b1b1b1b-0000-1111-2222-333333333333,GPU-4141", folder.path());
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_THAT(*named, ElementsAre(AgentSlot{0, SlotKind::kGpu, 2, kModel},
                                  AgentSlot{1, SlotKind::kGpu, 0, kModel},
                                  AgentSlot{2, SlotKind::kGpu, 1, kModel}));
  // A negative index ends the list, as for CUDA; "" and "-1" name none.
  absl::StatusOr<std::vector<AgentSlot>> cut = VisibleGpuSlots("1,-1,2", folder.path());
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_THAT(*cut, ElementsAre(AgentSlot{0, SlotKind::kGpu, 1, kModel}));
  for (const char* none : {"", "-1"}) {
    absl::StatusOr<std::vector<AgentSlot>> empty = VisibleGpuSlots(none, folder.path());
    ASSERT_TRUE(empty.ok()) << empty.status();
    EXPECT_THAT(*empty, testing::IsEmpty()) << "'" << none << "'";
  }
}

TEST(GpuSlotsTest, ACudaVisibleDevicesNamingWhatIsNotThereIsRefusedListingTheGpus) {
  TempFolder folder;
  WriteThreeGpus(folder.path());
  for (const auto& [visible, why] : std::vector<std::pair<std::string, std::string>>{
           {"0,3", "'3' is past the last GPU"},
           {"GPU-ffff", "'GPU-ffff' is no GPU's UUID"},
           {"GPU-", "'GPU-' names more than one GPU"},
           {"MIG-5d1b4f3c-1111-2222-3333-444444444444", "is a MIG instance"},
           {"gpu0", "'gpu0' is neither a GPU's index nor its UUID"},
           {"1,GPU-41414141,2", "'GPU-41414141' names a GPU named before it"}}) {
    absl::StatusOr<std::vector<AgentSlot>> refused = VisibleGpuSlots(visible, folder.path());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << visible;
    EXPECT_THAT(std::string(refused.status().message()), testing::HasSubstr(why)) << visible;
    EXPECT_THAT(std::string(refused.status().message()),
                testing::HasSubstr("CUDA_VISIBLE_DEVICES=" + visible))
        << visible;
    EXPECT_THAT(std::string(refused.status().message()),
                testing::HasSubstr("2 (0000:c3:00.0, GPU-c3c3c3c3-0000-1111-2222-333333333333)"))
        << visible;
  }
}

}  // namespace
}  // namespace cohort
