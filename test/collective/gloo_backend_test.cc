// The Gloo backend with one thread per rank sharing an InMemoryRendezvousStore, for 1 to 4 ranks.
#include "runtime/collective/gloo/gloo_backend.h"

#include <atomic>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gloo/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/collective/rank_threads.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

// Forms a group of `size` ranks and runs `body` on each rank's backend.
std::vector<absl::Status> RunGroup(uint32_t size,
                                   const std::function<absl::Status(CollectiveBackend&)>& body,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  InMemoryRendezvousStore store;
  GlooOptions options;
  options.timeout = timeout;
  options.prefix = "trial-1/attempt-0";
  return RunRanks(size, [&](uint32_t rank) -> absl::Status {
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
        CreateGlooBackend(rank, size, store, options);
    if (!backend.ok()) return backend.status();
    if ((*backend)->rank() != rank || (*backend)->size() != size || (*backend)->name() != "gloo") {
      return absl::InternalError("backend reports the wrong rank, size or name");
    }
    return body(**backend);
  });
}

void ExpectAllOk(const std::vector<absl::Status>& results) {
  for (size_t rank = 0; rank < results.size(); ++rank)
    EXPECT_TRUE(results[rank].ok()) << "rank " << rank << ": " << results[rank];
}

class GlooGroupTest : public ::testing::TestWithParam<uint32_t> {};

template <typename T>
absl::Status CheckAllreduce(CollectiveBackend& backend, uint64_t count, cohort_dtype dtype) {
  const uint32_t n = backend.size();
  std::vector<T> data(count);
  for (uint64_t i = 0; i < count; ++i) data[i] = static_cast<T>(i % 7 + backend.rank());
  RETURN_IF_ERROR(backend.AllreduceSum(data.data(), count, dtype));
  for (uint64_t i = 0; i < count; ++i) {
    const T expected = static_cast<T>(n * (i % 7) + n * (n - 1) / 2);
    if (data[i] != expected) {
      return absl::InternalError(
          absl::StrCat("element ", i, " is ", data[i], ", expected ", expected));
    }
  }
  return absl::OkStatus();
}

TEST_P(GlooGroupTest, AllreduceSumsFloat32AndFloat64) {
  ExpectAllOk(RunGroup(GetParam(), [](CollectiveBackend& backend) -> absl::Status {
    for (uint64_t count : {uint64_t{1}, uint64_t{1000}, uint64_t{3'000'017}}) {
      RETURN_IF_ERROR(CheckAllreduce<float>(backend, count, COHORT_DTYPE_FLOAT32));
      RETURN_IF_ERROR(CheckAllreduce<double>(backend, count, COHORT_DTYPE_FLOAT64));
    }
    return absl::OkStatus();
  }));
}

TEST_P(GlooGroupTest, AllreduceSumsFloat16) {
  ExpectAllOk(RunGroup(GetParam(), [](CollectiveBackend& backend) -> absl::Status {
    std::vector<gloo::float16> data(100, gloo::float16(static_cast<int>(backend.rank()) + 1));
    RETURN_IF_ERROR(backend.AllreduceSum(data.data(), data.size(), COHORT_DTYPE_FLOAT16));
    const uint32_t n = backend.size();
    const float expected = static_cast<float>(n * (n + 1) / 2);
    for (const gloo::float16& value : data) {
      if (gloo::cpu_half2float(value) != expected) return absl::InternalError("wrong float16 sum");
    }
    return absl::OkStatus();
  }));
}

TEST_P(GlooGroupTest, ReduceLeavesTheSumOnEachRootInTurn) {
  ExpectAllOk(RunGroup(GetParam(), [](CollectiveBackend& backend) -> absl::Status {
    const uint32_t n = backend.size();
    for (uint32_t root = 0; root < n; ++root) {
      for (uint64_t count : {uint64_t{1}, uint64_t{1000}, uint64_t{300'007}}) {
        std::vector<float> data(count);
        for (uint64_t i = 0; i < count; ++i) {
          data[i] = static_cast<float>(backend.rank() + 1) * static_cast<float>(i % 97);
        }
        RETURN_IF_ERROR(backend.ReduceSum(data.data(), count, COHORT_DTYPE_FLOAT32, root));
        if (backend.rank() != root) continue;
        const float ranks = static_cast<float>(n * (n + 1) / 2);
        for (uint64_t i = 0; i < count; ++i) {
          if (data[i] != ranks * static_cast<float>(i % 97)) {
            return absl::InternalError(
                absl::StrCat("root ", root, ", element ", i, " of ", count, ": ", data[i]));
          }
        }
      }
    }
    std::vector<float> any(4);
    const absl::Status outside = backend.ReduceSum(any.data(), 4, COHORT_DTYPE_FLOAT32, n);
    if (outside.code() != absl::StatusCode::kInvalidArgument) {
      return absl::InternalError(absl::StrCat("a root outside the group: ", outside.ToString()));
    }
    return absl::OkStatus();
  }));
}

TEST_P(GlooGroupTest, BroadcastCopiesTheRootsBytes) {
  ExpectAllOk(RunGroup(GetParam(), [](CollectiveBackend& backend) -> absl::Status {
    const uint32_t root = backend.size() - 1;  // non-zero whenever there are two ranks or more
    std::vector<uint8_t> data(4099);
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<uint8_t>(backend.rank() == root ? i * 31 : 0xEE);
    RETURN_IF_ERROR(backend.Broadcast(data.data(), data.size(), root));
    for (size_t i = 0; i < data.size(); ++i) {
      if (data[i] != static_cast<uint8_t>(i * 31))
        return absl::InternalError(absl::StrCat("byte ", i, " differs"));
    }
    return absl::OkStatus();
  }));
}

// Gather: only the root receives, each rank's bytes in its slot; in place on the root as well,
// and onto a root other than 0.
TEST_P(GlooGroupTest, GatherPlacesEachRankInOrderOnTheRootAlone) {
  ExpectAllOk(RunGroup(GetParam(), [](CollectiveBackend& backend) -> absl::Status {
    constexpr size_t kBytes = 13;
    const uint32_t n = backend.size();
    for (const uint32_t root : {0u, n - 1}) {
      const bool is_root = backend.rank() == root;
      std::vector<uint8_t> mine(kBytes, static_cast<uint8_t>(backend.rank() + 1));
      std::vector<uint8_t> gathered(n * kBytes, 0);
      RETURN_IF_ERROR(
          backend.Gather(mine.data(), kBytes, is_root ? gathered.data() : nullptr, root));
      std::vector<uint8_t> in_place(n * kBytes, 0);
      uint8_t* own = in_place.data() + backend.rank() * kBytes;
      std::memset(own, static_cast<int>(backend.rank() + 1), kBytes);
      RETURN_IF_ERROR(backend.Gather(own, kBytes, is_root ? in_place.data() : nullptr, root));
      for (size_t i = 0; i < n * kBytes; ++i) {
        const uint8_t expected = is_root ? static_cast<uint8_t>(i / kBytes + 1) : 0;
        if (gathered[i] != expected) {
          return absl::InternalError(absl::StrCat("root ", root, ": byte ", i, " differs"));
        }
        // Off the root, only this rank's own slot holds anything.
        const uint8_t kept =
            is_root || i / kBytes == backend.rank() ? static_cast<uint8_t>(i / kBytes + 1) : 0;
        if (in_place[i] != kept) {
          return absl::InternalError(absl::StrCat("root ", root, ": byte ", i, " in place"));
        }
      }
    }
    if (backend.Gather(nullptr, kBytes, nullptr, 0).ok() ||
        backend.Gather(nullptr, 1, nullptr, n).code() != absl::StatusCode::kInvalidArgument) {
      return absl::InternalError("a null input or a root past the group was taken");
    }
    return absl::OkStatus();
  }));
}

TEST_P(GlooGroupTest, AllgatherPlacesEachRankInOrder) {
  ExpectAllOk(RunGroup(GetParam(), [](CollectiveBackend& backend) -> absl::Status {
    constexpr size_t kBytes = 13;
    const uint32_t n = backend.size();
    std::vector<uint8_t> mine(kBytes, static_cast<uint8_t>(backend.rank() + 1));
    std::vector<uint8_t> gathered(n * kBytes, 0);
    RETURN_IF_ERROR(backend.Allgather(mine.data(), kBytes, gathered.data()));
    // In place: this rank's slot of the output is the input.
    std::vector<uint8_t> in_place(n * kBytes, 0);
    std::memset(in_place.data() + backend.rank() * kBytes, static_cast<int>(backend.rank() + 1),
                kBytes);
    RETURN_IF_ERROR(
        backend.Allgather(in_place.data() + backend.rank() * kBytes, kBytes, in_place.data()));
    for (size_t i = 0; i < n * kBytes; ++i) {
      const auto expected = static_cast<uint8_t>(i / kBytes + 1);
      if (gathered[i] != expected || in_place[i] != expected) {
        return absl::InternalError(absl::StrCat("byte ", i, " differs"));
      }
    }
    return absl::OkStatus();
  }));
}

TEST_P(GlooGroupTest, BarrierWaitsForEveryRank) {
  std::atomic<uint32_t> arrived{0};
  ExpectAllOk(RunGroup(GetParam(), [&](CollectiveBackend& backend) -> absl::Status {
    if (backend.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    arrived.fetch_add(1);
    RETURN_IF_ERROR(backend.Barrier());
    if (arrived.load() != backend.size())
      return absl::InternalError("left the barrier before every rank arrived");
    return absl::OkStatus();
  }));
}

TEST_P(GlooGroupTest, UnsupportedDtypesAreNamed) {
  ExpectAllOk(RunGroup(GetParam(), [](CollectiveBackend& backend) -> absl::Status {
    uint16_t data[4] = {};
    absl::Status bf16 = backend.AllreduceSum(data, 4, COHORT_DTYPE_BFLOAT16);
    if (!absl::IsUnimplemented(bf16) ||
        bf16.message().find("bfloat16") == absl::string_view::npos) {
      return absl::InternalError(absl::StrCat("bfloat16 gave ", bf16.ToString()));
    }
    absl::Status unknown = backend.AllreduceSum(data, 4, 99);
    if (!absl::IsInvalidArgument(unknown) ||
        unknown.message().find("99") == absl::string_view::npos) {
      return absl::InternalError(absl::StrCat("dtype 99 gave ", unknown.ToString()));
    }
    // The group is still usable afterwards.
    return backend.Barrier();
  }));
}

INSTANTIATE_TEST_SUITE_P(Ranks, GlooGroupTest, ::testing::Values(1u, 2u, 3u, 4u),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return absl::StrCat(info.param, "ranks");
                         });

TEST(GlooBackendTest, RankThatNeverJoinsGivesDeadlineExceeded) {
  InMemoryRendezvousStore store;
  GlooOptions options;
  options.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  // Ranks 0 and 1 of 3 join; rank 2 never does.
  std::vector<absl::Status> results = RunRanks(
      2, [&](uint32_t rank) { return CreateGlooBackend(rank, 3, store, options).status(); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  for (const absl::Status& status : results) {
    EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("3 ranks"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("300 ms"));
  }
}

TEST(GlooBackendTest, PeerThatStopsCallingTimesOutTheOperation) {
  InMemoryRendezvousStore store;
  GlooOptions options;
  options.timeout = std::chrono::milliseconds(500);
  std::promise<void> rank0_done;
  std::shared_future<void> rank0_finished = rank0_done.get_future().share();
  std::vector<absl::Status> results = RunRanks(2, [&](uint32_t rank) -> absl::Status {
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
        CreateGlooBackend(rank, 2, store, options);
    if (rank == 1) {  // joins, then stays connected without taking part
      rank0_finished.wait();
      return backend.status();
    }
    if (!backend.ok()) {
      rank0_done.set_value();
      return backend.status();
    }
    float value = 1;
    absl::Status status = (*backend)->AllreduceSum(&value, 1, COHORT_DTYPE_FLOAT32);
    rank0_done.set_value();
    return status;
  });
  EXPECT_TRUE(results[1].ok()) << results[1];
  EXPECT_TRUE(absl::IsDeadlineExceeded(results[0])) << results[0];
  EXPECT_THAT(std::string(results[0].message()), HasSubstr("gloo allreduce"));
}

TEST(GlooBackendTest, PeerThatLeavesFailsTheOperation) {
  InMemoryRendezvousStore store;
  GlooOptions options;
  options.timeout = std::chrono::seconds(5);
  std::vector<absl::Status> results = RunRanks(2, [&](uint32_t rank) -> absl::Status {
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
        CreateGlooBackend(rank, 2, store, options);
    if (!backend.ok() || rank == 1) return backend.status();  // rank 1 closes its connections
    float value = 1;
    return (*backend)->AllreduceSum(&value, 1, COHORT_DTYPE_FLOAT32);
  });
  EXPECT_TRUE(results[1].ok()) << results[1];
  // Rank 0 sees the closed connection while joining or in the allreduce, whichever it reaches.
  EXPECT_TRUE(absl::IsUnavailable(results[0])) << results[0];
}

TEST(GlooBackendTest, RejectsARankOutsideTheGroup) {
  InMemoryRendezvousStore store;
  EXPECT_TRUE(absl::IsInvalidArgument(CreateGlooBackend(2, 2, store, GlooOptions()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(CreateGlooBackend(0, 0, store, GlooOptions()).status()));
}

TEST(GlooBackendTest, RejectsABroadcastRootOutsideTheGroup) {
  InMemoryRendezvousStore store;
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
      CreateGlooBackend(0, 1, store, GlooOptions());
  ASSERT_TRUE(backend.ok()) << backend.status();
  uint8_t byte = 0;
  EXPECT_TRUE(absl::IsInvalidArgument((*backend)->Broadcast(&byte, 1, 1)));
}

}  // namespace
}  // namespace cohort
