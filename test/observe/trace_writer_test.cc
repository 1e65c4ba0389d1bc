// TraceWriter and MergeTraces: a rank's file is Chrome's JSON Array Format, one event per line,
// with ids no other rank uses and times in whole Unix microseconds; the merge keeps every whole
// event of every rank (dropping a line a kill cut short) in one {"traceEvents": [...]} document.
#include "runtime/observe/trace_writer.h"

#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(TraceWriterTest, EachRanksEventsMergeIntoOneDocument) {
  TempFolder folder;
  const std::string rank0 = folder.path() + "/rank0.json";
  const std::string rank1 = folder.path() + "/rank1.json";
  {
    auto first = TraceWriter::Open(rank0, 0, 0);
    auto second = TraceWriter::Open(rank1, 1, 0);
    ASSERT_TRUE(first.ok() && second.ok());
    (*first)->Complete(TraceWriter::kTrainingThread, "inside the plugin's train_batch", 1.0, 1.25,
                       1);
    (*first)->Complete(TraceWriter::kExchangeThread, "allreduce", 1.1, 1.2, 1, 4096);
    (*first)->Instant(TraceWriter::kTrainingThread, "bucket 1 ready", 1.05, 1);
    (*second)->Complete(TraceWriter::kTrainingThread, "a \"quoted\"\tname", 2.0, 2.5, 7);
  }
  const std::string own = Read(rank0);
  EXPECT_THAT(own, StartsWith("[\n"));
  // Rank 0 is process 1 (0 is the kernel's idle process to the viewers); its training thread is
  // its main thread.
  EXPECT_THAT(own, HasSubstr("{\"ph\":\"X\",\"name\":\"inside the plugin's train_batch\","
                             "\"pid\":1,\"tid\":1,\"ts\":1000000,\"dur\":250000,"
                             "\"args\":{\"batch\":1}},\n"));
  EXPECT_THAT(own,
              HasSubstr("{\"ph\":\"X\",\"name\":\"allreduce\",\"pid\":1,\"tid\":1000000,"
                        "\"ts\":1100000,\"dur\":100000,\"args\":{\"batch\":1,\"bytes\":4096}}"));
  EXPECT_THAT(own, HasSubstr("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"bucket 1 ready\",\"pid\":1,"
                             "\"tid\":1,\"ts\":1050000,\"args\":{\"batch\":1}}"));
  EXPECT_THAT(own, HasSubstr("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,"
                             "\"args\":{\"name\":\"rank 0\"}}"));
  EXPECT_THAT(own, HasSubstr("\"name\":\"thread_name\",\"pid\":1,\"tid\":1000000,\"args\":"
                             "{\"name\":\"gradient exchange\"}"));
  // A kill in the middle of a line leaves half an event behind.
  std::ofstream(rank1, std::ios::app) << "{\"ph\":\"X\",\"name\":\"cut";

  const std::string merged_path = folder.path() + "/timeline.json";
  ASSERT_TRUE(MergeTraces({rank0, rank1}, merged_path).ok());
  const std::string merged = Read(merged_path);
  EXPECT_THAT(merged, StartsWith("{\"traceEvents\":[\n{"));
  EXPECT_THAT(merged, HasSubstr("\"name\":\"allreduce\",\"pid\":1,\"tid\":1000000"));
  EXPECT_THAT(merged, HasSubstr("\"name\":\"a \\\"quoted\\\"\\tname\",\"pid\":2,\"tid\":2"));
  EXPECT_THAT(merged, HasSubstr("\"name\":\"thread_name\",\"pid\":2,\"tid\":1000001"));
  EXPECT_THAT(merged, Not(HasSubstr("cut")));
  EXPECT_THAT(merged, Not(HasSubstr("},\n]")));  // no comma before the end
  EXPECT_THAT(merged, ::testing::EndsWith("}\n]}\n"));
}

// Unix microseconds: the monotonic time plus the offset, in whole microseconds rounded down, so
// a slice inside another stays inside it whatever the fractions.
TEST(TraceWriterTest, TimesAreWholeUnixMicrosecondsThatKeepNesting) {
  TempFolder folder;
  const std::string path = folder.path() + "/rank0.json";
  {
    auto trace = TraceWriter::Open(path, 0, 1'764'000'000.5);
    ASSERT_TRUE(trace.ok());
    // The child ends 0.4 us before its parent, within the same microsecond.
    (*trace)->Complete(TraceWriter::kExchangeThread, "parent", 100.0000017, 100.0000099, 3);
    (*trace)->Complete(TraceWriter::kExchangeThread, "child", 100.0000021, 100.0000095, 3);
  }
  const std::string text = Read(path);
  EXPECT_THAT(text, HasSubstr("\"name\":\"parent\",\"pid\":1,\"tid\":1000000,"
                              "\"ts\":1764000100500001,\"dur\":8,"));
  EXPECT_THAT(text, HasSubstr("\"name\":\"child\",\"pid\":1,\"tid\":1000000,"
                              "\"ts\":1764000100500002,\"dur\":7,"));
}

// profiling.begin_on_batch and end_after_batch: only the batches of the window are written.
TEST(TraceWriterTest, OnlyTheWindowsBatchesAreWritten) {
  TempFolder folder;
  const std::string path = folder.path() + "/rank0.json";
  {
    auto trace = TraceWriter::Open(path, 0, 0, TraceBatchWindow{.first = 3, .last = 4});
    ASSERT_TRUE(trace.ok());
    for (uint64_t batch = 1; batch <= 6; ++batch) {
      (*trace)->Complete(TraceWriter::kTrainingThread, "step", 1.0 * batch, 1.0 * batch + 0.5,
                         batch);
      (*trace)->Instant(TraceWriter::kTrainingThread, "ready", 1.0 * batch + 0.25, batch);
    }
  }
  const std::string text = Read(path);
  for (uint64_t batch = 1; batch <= 6; ++batch) {
    const std::string tag = "\"args\":{\"batch\":" + std::to_string(batch) + "}";
    if (batch == 3 || batch == 4) {
      EXPECT_THAT(text, HasSubstr("\"name\":\"step\",\"pid\":1,\"tid\":1,\"ts\":" +
                                  std::to_string(batch * 1000000)));
      EXPECT_THAT(text, HasSubstr(tag)) << batch;
    } else {
      EXPECT_THAT(text, Not(HasSubstr(tag))) << batch;
    }
  }
}

TEST(TraceWriterTest, MissingFilesAndUnwritablePathsAreErrors) {
  TempFolder folder;
  EXPECT_FALSE(TraceWriter::Open(folder.path() + "/no/such/folder/t.json", 0, 0).ok());
  EXPECT_TRUE(absl::IsNotFound(
      MergeTraces({folder.path() + "/missing.json"}, folder.path() + "/out.json")));
}

}  // namespace
}  // namespace cohort
