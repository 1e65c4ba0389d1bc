// TraceWriter and MergeTraces: a rank's file is Chrome's JSON Array Format, one event per line;
// the merge keeps every whole event of every rank (dropping a line a kill cut short) in one
// {"traceEvents": [...]} document.
#include "runtime/trial/trace_writer.h"

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
    auto first = TraceWriter::Open(rank0, 0);
    auto second = TraceWriter::Open(rank1, 1);
    ASSERT_TRUE(first.ok() && second.ok());
    (*first)->Complete(TraceWriter::kTrainingThread, "inside the plugin's train_batch", 1.0,
                       1.25, 1);
    (*first)->Complete(TraceWriter::kExchangeThread, "bucket 1", 1.1, 1.2, 1);
    (*second)->Complete(TraceWriter::kTrainingThread, "a \"quoted\"\tname", 2.0, 2.5, 7);
  }
  const std::string own = Read(rank0);
  EXPECT_THAT(own, StartsWith("[\n"));
  EXPECT_THAT(own, HasSubstr("{\"ph\":\"X\",\"name\":\"inside the plugin's train_batch\","
                             "\"pid\":0,\"tid\":0,\"ts\":1000000.000,\"dur\":250000.000,"
                             "\"args\":{\"batch\":1}},\n"));
  EXPECT_THAT(own, HasSubstr("\"name\":\"thread_name\",\"pid\":0,\"tid\":1,\"args\":{\"name\":"
                             "\"gradient exchange\"}"));
  // A kill in the middle of a line leaves half an event behind.
  std::ofstream(rank1, std::ios::app) << "{\"ph\":\"X\",\"name\":\"cut";

  const std::string merged_path = folder.path() + "/timeline.json";
  ASSERT_TRUE(MergeTraces({rank0, rank1}, merged_path).ok());
  const std::string merged = Read(merged_path);
  EXPECT_THAT(merged, StartsWith("{\"traceEvents\":[\n{"));
  EXPECT_THAT(merged, HasSubstr("\"name\":\"bucket 1\",\"pid\":0,\"tid\":1"));
  EXPECT_THAT(merged, HasSubstr("\"name\":\"a \\\"quoted\\\"\\u0009name\",\"pid\":1"));
  EXPECT_THAT(merged, Not(HasSubstr("cut")));
  EXPECT_THAT(merged, Not(HasSubstr("},\n]")));  // no comma before the end
  EXPECT_THAT(merged, ::testing::EndsWith("}\n]}\n"));
}

TEST(TraceWriterTest, MissingFilesAndUnwritablePathsAreErrors) {
  TempFolder folder;
  EXPECT_FALSE(TraceWriter::Open(folder.path() + "/no/such/folder/t.json", 0).ok());
  EXPECT_TRUE(absl::IsNotFound(MergeTraces({folder.path() + "/missing.json"},
                                           folder.path() + "/out.json")));
}

}  // namespace
}  // namespace cohort
