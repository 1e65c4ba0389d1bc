// The daemons' log lines carry the time in UTC, ISO 8601 to the millisecond.
#include "runtime/base/daemon_log.h"

#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(DaemonLogTest, LinesStartWithTheUtcTimeToTheMillisecond) {
  // 2026-11-27T07:12:03.125Z, and a time just short of the next millisecond rounds down.
  EXPECT_EQ(DaemonLogLine(1795763523.125, "orchestrator", "experiment 3 submitted"),
            "2026-11-27T07:12:03.125Z orchestrator: experiment 3 submitted");
  EXPECT_EQ(DaemonLogLine(1795763523.9999, "cohort agent", "registered"),
            "2026-11-27T07:12:03.999Z cohort agent: registered");
  EXPECT_EQ(DaemonLogLine(0, "agent", "x"), "1970-01-01T00:00:00.000Z agent: x");
}

}  // namespace
}  // namespace cohort
