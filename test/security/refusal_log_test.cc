// RefusalLog: a repeated refusal is reported once per interval, with the repeats counted.
#include "runtime/security/refusal_log.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;

TEST(RefusalLogTest, ReportsRepeatsOncePerInterval) {
  std::vector<std::string> lines;
  RefusalLog log([&](absl::string_view line) { lines.emplace_back(line); }, 60.0);
  log.Report("refused x", 0.0);
  log.Report("refused x", 0.1);
  log.Report("refused y", 0.2);
  log.Report("refused x", 30.0);
  log.Report("refused x", 60.5);
  log.Report("refused x", 200.0);
  EXPECT_THAT(lines, ElementsAre("refused x", "refused y",
                                 "refused x (2 more since the last report)", "refused x"));
}

}  // namespace
}  // namespace cohort
