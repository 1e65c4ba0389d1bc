// ThroughputMeter's two rates and the exchange's bytes between reports, on explicit times.
#include "runtime/trial/throughput_meter.h"

#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(ThroughputMeterTest, TheReportRateCoversTheWholeWindowSinceThePreviousReport) {
  ThroughputMeter meter;
  meter.Start(10.0, 1000);  // a resumed trial: 1,000 records before this attempt
  EXPECT_DOUBLE_EQ(meter.TakeReportRate(12.0, 1400), 200.0);
  EXPECT_DOUBLE_EQ(meter.TakeReportRate(13.0, 1700), 300.0);
  EXPECT_DOUBLE_EQ(meter.TakeReportRate(13.0, 1800), 0.0);  // no time passed
}

TEST(ThroughputMeterTest, TheProgressRateIsMeasuredAgainOnlyAfterHalfASecond) {
  ThroughputMeter meter;
  meter.Start(0.0, 0);
  EXPECT_DOUBLE_EQ(meter.ProgressRate(0.25, 100), 0.0);  // no figure yet
  EXPECT_DOUBLE_EQ(meter.ProgressRate(0.5, 150), 0.0);   // exactly the window: not yet longer
  EXPECT_DOUBLE_EQ(meter.ProgressRate(1.0, 400), 400.0);
  EXPECT_DOUBLE_EQ(meter.ProgressRate(1.25, 900), 400.0);  // the last figure holds
  EXPECT_DOUBLE_EQ(meter.ProgressRate(2.0, 1000), 600.0);  // 600 records over 1 s
}

// A validation trains nothing: its seconds are left out of both rates, so the first report after
// one shows the training pace, not the pace diluted by the evaluation.
TEST(ThroughputMeterTest, ValidationTimeIsLeftOutOfBothRates) {
  ThroughputMeter meter;
  meter.Start(0.0, 0);
  EXPECT_DOUBLE_EQ(meter.TakeReportRate(1.0, 1000), 1000.0);
  meter.Exclude(3.0);  // validated from 1.0 to 4.0
  EXPECT_DOUBLE_EQ(meter.TakeReportRate(5.0, 2000), 1000.0);
  meter.Exclude(2.0);                                       // from 5.0 to 7.0
  EXPECT_DOUBLE_EQ(meter.ProgressRate(8.0, 3000), 1000.0);  // 3000 records in 3 s of training
  meter.Exclude(-1.0);                                      // a clock that went back: nothing
  EXPECT_DOUBLE_EQ(meter.TakeReportRate(9.0, 4000), 1000.0);
}

TEST(ThroughputMeterTest, ExchangedBytesAreCountedSinceThePreviousReport) {
  ThroughputMeter meter;
  EXPECT_EQ(meter.TakeExchangedBytes(4096), 4096u);
  EXPECT_EQ(meter.TakeExchangedBytes(10000), 10000u - 4096u);
  EXPECT_EQ(meter.TakeExchangedBytes(10000), 0u);
}

}  // namespace
}  // namespace cohort
