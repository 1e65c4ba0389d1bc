// CreateNcclBackend on any machine: a single-rank NCCL group where a GPU and the NCCL module are
// present, and a clean UNAVAILABLE (not a crash) where either is missing.
#include "runtime/collective/nccl_loader.h"

#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(NcclLoaderTest, SingleRankGroupOrUnavailable) {
  InMemoryRendezvousStore store;
  NcclOptions options;
  options.timeout = std::chrono::seconds(20);
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
      CreateNcclBackend(0, 1, store, options);
  if (backend.ok()) {
    EXPECT_EQ((*backend)->name(), "nccl");
    EXPECT_EQ((*backend)->size(), 1u);
    EXPECT_TRUE((*backend)->Barrier().ok());
  } else {
    EXPECT_TRUE(absl::IsUnavailable(backend.status())) << backend.status();
    EXPECT_FALSE(backend.status().message().empty());
  }
}

TEST(NcclLoaderTest, RejectsARankOutsideTheGroup) {
  InMemoryRendezvousStore store;
  EXPECT_TRUE(absl::IsInvalidArgument(CreateNcclBackend(1, 1, store, NcclOptions()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(CreateNcclBackend(0, 0, store, NcclOptions()).status()));
}

}  // namespace
}  // namespace cohort
