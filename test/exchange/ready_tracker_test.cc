// ReadyTracker: buckets launch complete and in plan order; ranges are checked; the order tensors
// completed in is kept.
#include "runtime/exchange/ready_tracker.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/arena/device_memory.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Four float32 tensors of 16 elements, one per bucket: plan = [d(3), c(2), b(1), a(0)].
class ReadyTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<TensorDescriptor> specs;
    for (const char* name : {"a", "b", "c", "d"}) {
      specs.push_back(TensorDescriptor{name, COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, 16});
    }
    auto arena = TensorArena::Create(specs, memory_);
    ASSERT_TRUE(arena.ok()) << arena.status();
    arena_ = *std::move(arena);
    auto plan = PlanBuckets(*arena_, 64, 64);
    ASSERT_TRUE(plan.ok());
    ASSERT_EQ(plan->size(), 4u);
    plan_ = *plan;
    auto tracker = ReadyTracker::Create(plan_, *arena_);
    ASSERT_TRUE(tracker.ok()) << tracker.status();
    tracker_ = std::make_unique<ReadyTracker>(*std::move(tracker));
  }

  std::vector<size_t> Mark(size_t tensor, uint64_t offset = 0, uint64_t count = 16) {
    auto launch = tracker_->MarkReady(tensor, offset, count);
    EXPECT_TRUE(launch.ok()) << launch.status();
    return launch.ok() ? *launch : std::vector<size_t>{99};
  }

  CpuOnlyMemoryProvider memory_;
  std::unique_ptr<TensorArena> arena_;
  std::vector<GradientBucket> plan_;
  std::unique_ptr<ReadyTracker> tracker_;
};

TEST_F(ReadyTrackerTest, ReverseOrderReadinessLaunchesEachBucketAtOnce) {
  EXPECT_THAT(Mark(3), ElementsAre(0));
  EXPECT_THAT(Mark(2), ElementsAre(1));
  EXPECT_THAT(Mark(1), ElementsAre(2));
  EXPECT_FALSE(tracker_->AllLaunched());
  EXPECT_THAT(Mark(0), ElementsAre(3));
  EXPECT_TRUE(tracker_->AllLaunched());
}

TEST_F(ReadyTrackerTest, OutOfOrderReadinessWaitsForEarlierBuckets) {
  EXPECT_THAT(Mark(0), IsEmpty());  // bucket 3 is complete but 0..2 are not launched
  EXPECT_THAT(Mark(2), IsEmpty());
  EXPECT_THAT(Mark(3), ElementsAre(0, 1));
  EXPECT_THAT(Mark(1), ElementsAre(2, 3));
  EXPECT_TRUE(tracker_->AllLaunched());
}

TEST_F(ReadyTrackerTest, PartialRangesCompleteATensor) {
  EXPECT_THAT(Mark(3, 8, 8), IsEmpty());
  EXPECT_THAT(Mark(3, 0, 4), IsEmpty());
  EXPECT_THAT(Mark(3, 4, 4), ElementsAre(0));
}

TEST_F(ReadyTrackerTest, DuplicateAndOverlappingRangesAreErrorsNamingTheTensor) {
  Mark(2, 4, 8);
  auto duplicate = tracker_->MarkReady(2, 4, 8);
  EXPECT_EQ(duplicate.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(duplicate.status().message(), HasSubstr("tensor 'c'"));
  EXPECT_THAT(duplicate.status().message(), HasSubstr("overlaps"));
  EXPECT_FALSE(tracker_->MarkReady(2, 0, 5).ok());   // overlaps [4, 12) from the left
  EXPECT_FALSE(tracker_->MarkReady(2, 11, 5).ok());  // and from the right
  EXPECT_FALSE(tracker_->MarkReady(2, 0, 16).ok());  // covers it
  EXPECT_FALSE(tracker_->MarkReady(2, 5, 1).ok());   // inside it
  // The failed calls recorded nothing: the rest still completes the tensor exactly.
  EXPECT_THAT(Mark(2, 0, 4), IsEmpty());
  EXPECT_THAT(Mark(2, 12, 4), IsEmpty());  // bucket 1 waits for bucket 0 (d)
  EXPECT_THAT(Mark(3), ElementsAre(0, 1));
}

TEST_F(ReadyTrackerTest, OutOfRangeAndEmptyRangesAreErrors) {
  auto past_end = tracker_->MarkReady(1, 10, 7);
  EXPECT_EQ(past_end.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(past_end.status().message(), HasSubstr("tensor 'b'"));
  EXPECT_FALSE(tracker_->MarkReady(1, 17, 0).ok());
  EXPECT_FALSE(tracker_->MarkReady(1, 0, 0).ok());
  EXPECT_FALSE(tracker_->MarkReady(1, UINT64_MAX, 2).ok());
  EXPECT_EQ(tracker_->MarkReady(4, 0, 1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ReadyTrackerTest, MarkAllReadyLaunchesTheRestInOrder) {
  EXPECT_THAT(Mark(3), ElementsAre(0));
  Mark(1, 0, 8);
  EXPECT_THAT(tracker_->MarkAllReady(), ElementsAre(1, 2, 3));
  EXPECT_TRUE(tracker_->AllLaunched());
  EXPECT_THAT(tracker_->MarkAllReady(), IsEmpty());
}

TEST_F(ReadyTrackerTest, MarkAllReadyWithoutAnyReport) {
  EXPECT_THAT(tracker_->MarkAllReady(), ElementsAre(0, 1, 2, 3));
}

// A tensor counts as completed when its last range comes; MarkAllReady completes the rest in
// reverse registration order; Reset forgets the order.
TEST_F(ReadyTrackerTest, CompletionOrderIsTheOrderTensorsCompleted) {
  Mark(1);
  Mark(2, 0, 8);
  Mark(0);
  Mark(2, 8, 8);
  EXPECT_THAT(tracker_->completion_order(), ElementsAre(1, 0, 2));
  tracker_->MarkAllReady();
  EXPECT_THAT(tracker_->completion_order(), ElementsAre(1, 0, 2, 3));
  tracker_->Reset();
  EXPECT_THAT(tracker_->completion_order(), IsEmpty());
  Mark(2, 0, 4);
  tracker_->MarkAllReady();
  EXPECT_THAT(tracker_->completion_order(), ElementsAre(3, 2, 1, 0));
}

TEST_F(ReadyTrackerTest, ResetStartsANewBatch) {
  Mark(3);
  Mark(2, 0, 8);
  tracker_->Reset();
  EXPECT_FALSE(tracker_->AllLaunched());
  EXPECT_THAT(Mark(2), IsEmpty());  // the earlier half of c was forgotten; d is not ready
  EXPECT_THAT(Mark(3), ElementsAre(0, 1));
}

TEST_F(ReadyTrackerTest, MultiTensorBucketLaunchesWhenAllItsTensorsAre) {
  auto plan = PlanBuckets(*arena_, 1 << 20, 1 << 20);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->size(), 1u);
  auto tracker = ReadyTracker::Create(*plan, *arena_);
  ASSERT_TRUE(tracker.ok());
  for (size_t tensor : {3, 2, 1}) EXPECT_THAT(*tracker->MarkReady(tensor, 0, 16), IsEmpty());
  EXPECT_THAT(*tracker->MarkReady(0, 0, 16), ElementsAre(0));
}

TEST_F(ReadyTrackerTest, CreateRejectsAPlanThatMissesOrRepeatsATensor) {
  std::vector<GradientBucket> missing = plan_;
  missing.pop_back();
  auto status = ReadyTracker::Create(missing, *arena_).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'a'"));
  std::vector<GradientBucket> repeated = plan_;
  repeated[0].tensors.push_back(2);
  EXPECT_FALSE(ReadyTracker::Create(repeated, *arena_).ok());
}

}  // namespace
}  // namespace cohort
