// UnackedReports: what is kept, what an Ack forgets, what goes again and under which id, and the
// oldest dropped past the capacity.
#include "runtime/agent/unacked_reports.h"

#include <cstdint>
#include <variant>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;

TaskMetricsReport Training(uint64_t batches) {
  TaskMetricsReport report;
  report.task_id = 7;
  report.report.kind = ReportKind::kTraining;
  report.report.batches = batches;
  return report;
}

// The batches of each report handed to `send` by SendUnsent after MarkUnsentBefore(before_id),
// which numbers them from `first_id`.
std::vector<uint64_t> SentAgain(UnackedReports& reports, uint64_t before_id, uint64_t first_id) {
  std::vector<uint64_t> batches;
  reports.MarkUnsentBefore(before_id);
  reports.SendUnsent([&](const ControlMessage& message) {
    if (const auto* metrics = std::get_if<TaskMetricsReport>(&message)) {
      batches.push_back(metrics->report.batches);
    } else if (const auto* checkpoint = std::get_if<TaskCheckpointReport>(&message)) {
      batches.push_back(checkpoint->batches);
    }
    return first_id++;
  });
  return batches;
}

TEST(UnackedReportsTest, AnAckForgetsItsReportAndTheRestGoAgainOldestFirst) {
  UnackedReports reports;
  reports.Keep(11, Training(20));
  reports.Keep(12, Training(40));
  reports.Keep(13, TaskCheckpointReport{7, 1, "trial-1-batch-40", 40, 640, 1024, {}, false});
  reports.Keep(14, Training(60));
  EXPECT_TRUE(reports.Acknowledged(12));
  EXPECT_FALSE(reports.Acknowledged(12)) << "an Ack of another message (or a second one)";
  EXPECT_FALSE(reports.Acknowledged(0));
  EXPECT_EQ(reports.size(), 3u);

  // Registered again with hello 15: every report sent before it goes again, under a new id.
  EXPECT_THAT(SentAgain(reports, 15, 100), ElementsAre(20, 40, 60));
  EXPECT_FALSE(reports.Acknowledged(11)) << "kept under the id it was sent again as";
  EXPECT_TRUE(reports.Acknowledged(100));
  EXPECT_TRUE(reports.Acknowledged(102));
  EXPECT_THAT(SentAgain(reports, 200, 300), ElementsAre(40));
  reports.Clear();
  EXPECT_EQ(reports.size(), 0u);
}

TEST(UnackedReportsTest, ReportsSentAfterTheHelloOrNeverSentAreTreatedApart) {
  UnackedReports reports;
  reports.Keep(5, Training(20));
  reports.Keep(0, Training(40));  // could not be sent (the queue was full, or held back)
  reports.Keep(9, Training(60));  // after hello 8: it reaches the orchestrator after the hello
  EXPECT_THAT(SentAgain(reports, 8, 50), ElementsAre(20, 40));
  EXPECT_TRUE(reports.Acknowledged(9));
  EXPECT_TRUE(reports.Acknowledged(51)) << "the one never sent is now sent";
}

// A full queue: what cannot be sent waits, in order, and a new report goes behind it.
TEST(UnackedReportsTest, ReportsNotSentWaitInOrderBehindTheFirstThatCouldNotGo) {
  UnackedReports reports;
  reports.Keep(5, Training(20));
  reports.Keep(6, Training(40));
  EXPECT_FALSE(reports.HasUnsent());
  // Registered again with hello 8: the queue takes one of the two, then is full.
  std::vector<uint64_t> offered;
  uint64_t room = 1;
  const auto send = [&](const ControlMessage& message) -> uint64_t {
    offered.push_back(std::get<TaskMetricsReport>(message).report.batches);
    if (room == 0) return 0;
    --room;
    return 100 + offered.size();
  };
  reports.MarkUnsentBefore(8);
  reports.SendUnsent(send);
  EXPECT_THAT(offered, ElementsAre(20, 40)) << "it stops at the first it cannot send";
  EXPECT_TRUE(reports.HasUnsent());
  reports.Keep(0, Training(60));  // made meanwhile: behind the one waiting
  offered.clear();
  reports.SendUnsent(send);
  EXPECT_THAT(offered, ElementsAre(40)) << "still full: the rest are not offered";
  room = 10;
  offered.clear();
  reports.SendUnsent(send);
  EXPECT_THAT(offered, ElementsAre(40, 60));
  EXPECT_FALSE(reports.HasUnsent());
  offered.clear();
  reports.SendUnsent(send);
  EXPECT_THAT(offered, ElementsAre()) << "nothing waits";
  EXPECT_EQ(reports.size(), 3u);
}

TEST(UnackedReportsTest, PastItsCapacityTheOldestAreDroppedAndCounted) {
  UnackedReports reports(/*capacity=*/2);
  reports.Keep(1, Training(20));
  reports.Keep(2, Training(40));
  EXPECT_EQ(reports.TakeDropped(), 0u);
  reports.Keep(3, Training(60));
  reports.Keep(4, Training(80));
  EXPECT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports.TakeDropped(), 2u);
  EXPECT_EQ(reports.TakeDropped(), 0u) << "counted since the previous call";
  EXPECT_THAT(SentAgain(reports, 10, 20), ElementsAre(60, 80));
  reports.Keep(0, Training(100));
  reports.Keep(0, Training(120));  // drops the one sent as 20, leaves two waiting
  reports.Keep(0, Training(140));  // drops one of them
  EXPECT_TRUE(reports.HasUnsent());
  EXPECT_THAT(SentAgain(reports, 0, 30), ElementsAre(120, 140));
  EXPECT_FALSE(reports.HasUnsent());
}

}  // namespace
}  // namespace cohort
