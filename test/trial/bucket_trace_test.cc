// TraceBucket: a bucket's exchange becomes a "ready" instant on the training thread and, on the
// exchange thread, a "bucket N" slice holding its collective calls (with their bytes) and a
// "codec" slice for each stretch around them; every event carries the bucket's batch.
#include "runtime/trial/bucket_trace.h"

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

// What TraceBucket writes for `bucket` on rank `rank`: the event lines after the opening "[" and
// the five naming lines.
std::vector<std::string> TracedEvents(uint32_t rank, const GradientExchange::BucketTimeline& bucket,
                                      TraceBatchWindow window = {}) {
  TempFolder folder;
  const std::string path = folder.path() + "/rank.json";
  {
    auto trace = TraceWriter::Open(path, rank, 0, window);
    EXPECT_TRUE(trace.ok());
    if (!trace.ok()) return {};
    TraceBucket(**trace, bucket);
  }
  std::ifstream in(path);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  return {lines.begin() + 6, lines.end()};
}

TEST(BucketTraceTest, CollectivesNestInTheBucketWithTheCodecAroundThem) {
  GradientExchange::BucketTimeline bucket;
  bucket.bucket = 2;
  bucket.batch = 9;
  bucket.ready = 0.5;
  bucket.begin = 1.0;
  bucket.end = 2.0;
  bucket.collectives = {{"allreduce", 800, 1.25, 1.5}, {"allgather", 16, 1.5, 1.75}};
  const std::vector<std::string> events = TracedEvents(1, bucket);
  ASSERT_EQ(events.size(), 6u);
  EXPECT_THAT(events[0], HasSubstr("\"ph\":\"i\",\"s\":\"t\",\"name\":\"bucket 3 ready\",\"pid\":2,"
                                   "\"tid\":2,\"ts\":500000,\"args\":{\"batch\":10}"));
  EXPECT_THAT(events[1], HasSubstr("\"name\":\"bucket 3\",\"pid\":2,\"tid\":1000001,\"ts\":1000000,"
                                   "\"dur\":1000000,\"args\":{\"batch\":10}"));
  EXPECT_THAT(events[2], HasSubstr("\"name\":\"codec\",\"pid\":2,\"tid\":1000001,\"ts\":1000000,"
                                   "\"dur\":250000,"));
  EXPECT_THAT(events[3],
              HasSubstr("\"name\":\"allreduce\",\"pid\":2,\"tid\":1000001,\"ts\":1250000,"
                        "\"dur\":250000,\"args\":{\"batch\":10,\"bytes\":800}"));
  // No codec between calls that touch.
  EXPECT_THAT(events[4], HasSubstr("\"name\":\"allgather\",\"pid\":2,\"tid\":1000001,"
                                   "\"ts\":1500000,\"dur\":250000,"));
  EXPECT_THAT(events[5], HasSubstr("\"name\":\"codec\",\"pid\":2,\"tid\":1000001,\"ts\":1750000,"
                                   "\"dur\":250000,"));
}

// A bucket of a batch outside profiling's window leaves nothing, not even its ready moment.
TEST(BucketTraceTest, ABucketOutsideTheWindowIsNotWritten) {
  GradientExchange::BucketTimeline bucket;
  bucket.batch = 9;  // batch 10
  bucket.end = 1.0;
  bucket.collectives = {{"allreduce", 8, 0.25, 0.5}};
  EXPECT_TRUE(TracedEvents(0, bucket, TraceBatchWindow{.first = 1, .last = 9}).empty());
  EXPECT_EQ(TracedEvents(0, bucket, TraceBatchWindow{.first = 10, .last = 10}).size(), 5u);
}

TEST(BucketTraceTest, ABucketWithoutCollectivesIsAllCodec) {
  GradientExchange::BucketTimeline bucket;
  bucket.ready = 1.0;
  bucket.begin = 1.0;
  bucket.end = 1.5;
  const std::vector<std::string> events = TracedEvents(0, bucket);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_THAT(events[1], HasSubstr("\"name\":\"bucket 1\""));
  EXPECT_THAT(events[2], HasSubstr("\"name\":\"codec\",\"pid\":1,\"tid\":1000000,\"ts\":1000000,"
                                   "\"dur\":500000,\"args\":{\"batch\":1}"));
}

}  // namespace
}  // namespace cohort
