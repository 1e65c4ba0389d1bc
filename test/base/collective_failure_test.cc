// CollectiveFailure marks a failure met in a collective, keeping what marked it before.
#include "runtime/base/collective_failure.h"

#include "gtest/gtest.h"
#include "runtime/base/permanent_failure.h"

namespace cohort {
namespace {

TEST(CollectiveFailureTest, KeepsTheCodeTakesTheMessageAndMarksIt) {
  const absl::Status failure = CollectiveFailure(absl::UnavailableError("Connection reset by peer"),
                                                 "batch 3, gradient exchange: reset");
  EXPECT_TRUE(absl::IsUnavailable(failure));
  EXPECT_EQ(failure.message(), "batch 3, gradient exchange: reset");
  EXPECT_TRUE(IsCollectiveFailure(failure));
  EXPECT_FALSE(IsPermanentFailure(failure));
  EXPECT_FALSE(IsCollectiveFailure(absl::UnavailableError("Connection reset by peer")));
  EXPECT_FALSE(IsCollectiveFailure(absl::OkStatus()));
}

// Ranks whose metrics differ all fail alike: the merge's permanent failure stays permanent, and
// is not taken for a peer's failure seen from here.
TEST(CollectiveFailureTest, APermanentFailureStaysOneAndIsNotMarked) {
  const absl::Status failure = CollectiveFailure(
      PermanentFailure(absl::FailedPreconditionError("metrics differ")), "batch 5, merging: ...");
  EXPECT_TRUE(absl::IsFailedPrecondition(failure));
  EXPECT_TRUE(IsPermanentFailure(failure));
  EXPECT_FALSE(IsCollectiveFailure(failure));
}

}  // namespace
}  // namespace cohort
