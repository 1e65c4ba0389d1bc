// PermanentFailure marks what every attempt would meet; a full disk counts, other failures not.
#include "runtime/base/permanent_failure.h"

#include <cerrno>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(PermanentFailureTest, MarksAndKeepsTheStatus) {
  const absl::Status failure = absl::FailedPreconditionError("searcher.metric: 'x' is missing");
  EXPECT_FALSE(IsPermanentFailure(failure));
  const absl::Status marked = PermanentFailure(failure);
  EXPECT_TRUE(IsPermanentFailure(marked));
  EXPECT_EQ(marked.code(), failure.code());
  EXPECT_EQ(marked.message(), failure.message());
}

TEST(PermanentFailureTest, AFullDiskIsPermanentAHangIsNot) {
  EXPECT_TRUE(IsPermanentFailure(absl::ErrnoToStatus(ENOSPC, "write checkpoint")));
  EXPECT_FALSE(IsPermanentFailure(absl::DeadlineExceededError("a rank stopped taking part")));
  EXPECT_FALSE(IsPermanentFailure(absl::UnavailableError("a peer went away")));
  EXPECT_FALSE(IsPermanentFailure(absl::OkStatus()));
}

}  // namespace
}  // namespace cohort
