// GpuMonitor's readings per task (means over a report's interval) and GpuImbalance's warning,
// against GPUs this test describes.
#include "runtime/agent/gpu_monitor.h"

#include <deque>

#include "gtest/gtest.h"
#include "runtime/agent/agent_metrics.h"
#include "runtime/gpu/gpu_reading.h"

namespace cohort {
namespace {

// GPUs whose utilization follows a script: each Usage(i) takes the next value of gpu i's queue.
class ScriptedGpus final : public GpuQuery {
 public:
  explicit ScriptedGpus(std::vector<std::deque<uint32_t>> utilization)
      : utilization_(std::move(utilization)) {}
  absl::StatusOr<std::string> DriverVersion() override { return "test"; }
  absl::StatusOr<std::vector<GpuDevice>> Devices() override { return std::vector<GpuDevice>(); }
  absl::StatusOr<GpuUsage> Usage(uint32_t index) override {
    if (index >= utilization_.size()) return absl::NotFoundError("no such GPU");
    std::deque<uint32_t>& queue = utilization_[index];
    const uint32_t value = queue.front();
    if (queue.size() > 1) queue.pop_front();
    return GpuUsage{value, (index + 1) * 1000, 8000};
  }
  absl::StatusOr<GpuPath> Path(uint32_t, uint32_t) override { return GpuPath::kNvLink; }

 private:
  std::vector<std::deque<uint32_t>> utilization_;
};

const std::vector<AgentSlot> kSlots = {{0, SlotKind::kGpu, 0, "GPU A"},
                                       {1, SlotKind::kGpu, 1, "GPU B"},
                                       {2, SlotKind::kCpu, -1, "cpu"}};

TEST(GpuMonitor, MeansOverEachInterval) {
  GpuMonitor monitor(std::unique_ptr<GpuQuery>(new ScriptedGpus({{100, 80, 90}, {60, 40, 20}})));
  ASSERT_TRUE(monitor.unavailable().ok());
  monitor.Sample(kSlots);
  monitor.Sample(kSlots);
  const std::vector<RankAssignment> ranks = {{0, 0, 1}, {1, 1, 0}, {2, 2, 2}};
  std::vector<GpuReading> first = monitor.Take(ranks, kSlots);
  ASSERT_EQ(first.size(), 2u);  // the CPU slot has none
  EXPECT_EQ(first[0], (GpuReading{0, 1, "GPU B", 50.0, 2000, 8000}));
  EXPECT_EQ(first[1], (GpuReading{1, 0, "GPU A", 90.0, 1000, 8000}));
  monitor.Sample(kSlots);
  std::vector<GpuReading> second = monitor.Take(ranks, kSlots);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_DOUBLE_EQ(second[0].utilization, 20.0);  // only the reading since the first Take
  EXPECT_DOUBLE_EQ(second[1].utilization, 90.0);
  EXPECT_EQ(monitor.latest().at(1).utilization_percent, 20u);
}

TEST(GpuMonitor, WithoutDriverMeasuresNothing) {
  GpuMonitor monitor(absl::UnavailableError("no NVIDIA driver"));
  EXPECT_FALSE(monitor.unavailable().ok());
  monitor.Sample(kSlots);
  EXPECT_TRUE(monitor.Take({{0, 0, 0}}, kSlots).empty());
  EXPECT_TRUE(monitor.latest().empty());
}

TEST(GpuImbalance, NamesTheBusiestAndTheIdlest) {
  EXPECT_FALSE(GpuImbalance({}).has_value());
  EXPECT_FALSE(GpuImbalance({{0, 0, "A", 100, 0, 0}}).has_value());
  EXPECT_FALSE(GpuImbalance({{0, 0, "A", 90, 0, 0}, {1, 1, "A", 70, 0, 0}}).has_value());
  std::optional<std::string> warning =
      GpuImbalance({{0, 0, "A", 100, 0, 0}, {1, 1, "A", 62, 0, 0}, {2, 2, "B", 60, 0, 0}});
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("rank 0 (GPU 0, A) at 100%"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("rank 2 (GPU 2, B) at 60%"), std::string::npos) << *warning;
}

TEST(AgentMetricsPage, CountsEachTasksRecordsOnceItHasProgress) {
  AgentMetricsSnapshot snapshot;
  snapshot.agent_id = "node-1";
  snapshot.tasks.resize(2);
  snapshot.tasks[0].task_id = 4;
  snapshot.tasks[0].trial_id = 2;
  snapshot.tasks[0].records = 6400;
  snapshot.tasks[1].task_id = 5;  // no progress yet
  snapshot.tasks[1].trial_id = 3;
  const std::string page = AgentMetricsPage(snapshot);
  EXPECT_NE(page.find("# TYPE cohort_agent_task_records_total counter\n"), std::string::npos)
      << page;
  EXPECT_NE(page.find("cohort_agent_task_records_total{agent=\"node-1\",task=\"4\",trial=\"2\"} "
                      "6400\n"),
            std::string::npos)
      << page;
  EXPECT_EQ(page.find("task=\"5\",trial=\"3\"} 6400"), std::string::npos);
  EXPECT_EQ(page.find("records_per_second"), std::string::npos);
}

TEST(AgentMetricsPage, ShowsEachGpu) {
  AgentMetricsSnapshot snapshot;
  snapshot.agent_id = "node-1";
  snapshot.gpus = {{0, "NVIDIA H100", 97, 40, 80}, {1, "NVIDIA H100", 61, 30, 80}};
  const std::string page = AgentMetricsPage(snapshot);
  EXPECT_NE(page.find("cohort_agent_gpu_utilization_percent{agent=\"node-1\",gpu=\"1\","
                      "model=\"NVIDIA H100\"} 61"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("cohort_agent_gpu_memory_used_bytes{agent=\"node-1\",gpu=\"0\""),
            std::string::npos);
  EXPECT_NE(page.find("cohort_agent_gpu_memory_total_bytes"), std::string::npos);
}

}  // namespace
}  // namespace cohort
