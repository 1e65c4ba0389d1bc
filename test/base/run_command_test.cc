// RunCommand against real programs: input in and output out, exit codes and signals, a missing
// program, a program past its time, and one that leaves its stdin unread.
#include "runtime/base/run_command.h"

#include <chrono>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

TEST(RunCommandTest, FeedsStdinAndCollectsBothOutputs) {
  absl::StatusOr<CommandOutput> out =
      RunCommand({"sh", "-c", "tr a-z A-Z; echo done >&2"}, "sbatch\n", 10);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(out->stdout_text, "SBATCH\n");
  EXPECT_EQ(out->stderr_text, "done\n");
}

TEST(RunCommandTest, AFailingProgramIsItsExitCodeNotAnError) {
  absl::StatusOr<CommandOutput> out = RunCommand({"sh", "-c", "echo why >&2; exit 3"}, "", 10);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->exit_code, 3);
  EXPECT_EQ(out->stderr_text, "why\n");
  absl::StatusOr<CommandOutput> killed = RunCommand({"sh", "-c", "kill -9 $$"}, "", 10);
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(killed->exit_code, 128 + 9);
}

TEST(RunCommandTest, AMissingProgramIsNotFoundNamingIt) {
  absl::StatusOr<CommandOutput> out = RunCommand({"cohort-no-such-program"}, "", 10);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsNotFound(out.status())) << out.status();
  EXPECT_THAT(out.status().message(), HasSubstr("cohort-no-such-program"));
}

TEST(RunCommandTest, AProgramPastItsTimeIsKilled) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CommandOutput> out = RunCommand({"sleep", "30"}, "", 0.3);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(out.status())) << out.status();
  EXPECT_THAT(out.status().message(), HasSubstr("sleep"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(RunCommandTest, AProgramThatLeavesItsStdinUnreadDoesNotEndTheCaller) {
  // More than a pipe holds: the writes fail with EPIPE once `true` has exited.
  absl::StatusOr<CommandOutput> out = RunCommand({"true"}, std::string(1 << 20, 'x'), 10);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->exit_code, 0);
}

}  // namespace
}  // namespace cohort
