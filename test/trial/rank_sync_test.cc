// What the ranks of a trial agree on, over a real Gloo group with one thread per rank: the same
// tensors (names, sizes, shapes), rank 0's starting parameters, a stop any rank asked for, and
// their metrics, merged by name (ranks naming them otherwise fail, named).
#include "runtime/trial/rank_sync.h"

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/arena/device_memory.h"
#include "runtime/base/permanent_failure.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "test/collective/rank_threads.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

TensorDescriptor Matrix(const char* name, uint64_t rows, uint64_t cols) {
  TensorDescriptor tensor{name, COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, rows * cols};
  tensor.shape = {rows, cols};
  return tensor;
}

// Runs `body` on every rank of a `size`-rank group, each with an arena of tensors_of(rank).
std::vector<absl::Status> RunGroup(
    uint32_t size, const std::function<std::vector<TensorDescriptor>(uint32_t)>& tensors_of,
    const std::function<absl::Status(uint32_t, CollectiveBackend&, TensorArena&)>& body) {
  InMemoryRendezvousStore store;
  GlooOptions gloo;
  gloo.timeout = std::chrono::seconds(20);
  return RunRanks(size, [&](uint32_t rank) -> absl::Status {
    CpuOnlyMemoryProvider memory;
    absl::StatusOr<std::unique_ptr<TensorArena>> arena =
        TensorArena::Create(tensors_of(rank), memory);
    if (!arena.ok()) return arena.status();
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
        CreateGlooBackend(rank, size, store, gloo);
    if (!backend.ok()) return backend.status();
    return body(rank, **backend, **arena);
  });
}

TEST(RankSyncTest, TheSameTensorsPassTheLayoutCheck) {
  const std::vector<absl::Status> results = RunGroup(
      3,
      [](uint32_t) {
        return std::vector<TensorDescriptor>{Matrix("w", 4, 6), Matrix("b", 1, 6)};
      },
      [](uint32_t, CollectiveBackend& backend, TensorArena& arena) {
        return CheckSameLayout(backend, arena);
      });
  for (const absl::Status& status : results) EXPECT_TRUE(status.ok()) << status;
}

TEST(RankSyncTest, ATransposedMatrixFailsTheLayoutCheckNamingTheRanks) {
  // Same names and sizes everywhere; ranks 1 and 2 register "w" as 6 x 4 instead of 4 x 6.
  const std::vector<absl::Status> results = RunGroup(
      3,
      [](uint32_t rank) {
        return std::vector<TensorDescriptor>{rank == 0 ? Matrix("w", 4, 6) : Matrix("w", 6, 4)};
      },
      [](uint32_t, CollectiveBackend& backend, TensorArena& arena) {
        return CheckSameLayout(backend, arena);
      });
  for (const absl::Status& status : results) {
    EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("ranks 1, 2 registered other tensors than rank 0"));
  }
}

TEST(RankSyncTest, ADifferentSizeFailsTheLayoutCheck) {
  const std::vector<absl::Status> results = RunGroup(
      2,
      [](uint32_t rank) {
        return std::vector<TensorDescriptor>{Matrix("w", 4, rank == 0 ? 6 : 7)};
      },
      [](uint32_t, CollectiveBackend& backend, TensorArena& arena) {
        return CheckSameLayout(backend, arena);
      });
  for (const absl::Status& status : results) {
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("rank 1 registered other tensors than rank 0"));
  }
}

TEST(RankSyncTest, BroadcastGivesEveryRankRankZerosParameters) {
  const std::vector<absl::Status> results = RunGroup(
      3, [](uint32_t) { return std::vector<TensorDescriptor>{Matrix("w", 3, 5)}; },
      [](uint32_t rank, CollectiveBackend& backend, TensorArena& arena) -> absl::Status {
        float* w = static_cast<float*>(arena.data(0));
        for (int i = 0; i < 15; ++i) w[i] = static_cast<float>(rank * 100 + i);
        RETURN_IF_ERROR(BroadcastParameters(backend, arena));
        for (int i = 0; i < 15; ++i) {
          if (w[i] != static_cast<float>(i)) {
            return absl::InternalError(absl::StrCat("rank ", rank, " element ", i, " is ", w[i]));
          }
        }
        return absl::OkStatus();
      });
  for (const absl::Status& status : results) EXPECT_TRUE(status.ok()) << status;
}

// State tensors (ABI 1.4, an arena without gradients) are part of the layout, and start from
// rank 0's values.
TEST(RankSyncTest, StateTensorsJoinTheLayoutAndStartFromRankZeros) {
  const std::vector<absl::Status> results = RunGroup(
      3, [](uint32_t) { return std::vector<TensorDescriptor>{Matrix("w", 2, 2)}; },
      [](uint32_t rank, CollectiveBackend& backend, TensorArena& arena) -> absl::Status {
        CpuOnlyMemoryProvider memory;
        TensorDescriptor count{"count", COHORT_DTYPE_INT64, {COHORT_DEVICE_CPU, 0}, 1};
        absl::StatusOr<std::unique_ptr<TensorArena>> state =
            TensorArena::Create({count}, memory, ArenaGradients::kNone);
        if (!state.ok()) return state.status();
        *static_cast<int64_t*>((*state)->data(0)) = 7 + rank;
        RETURN_IF_ERROR(CheckSameLayout(backend, arena, state->get()));
        RETURN_IF_ERROR(BroadcastParameters(backend, **state));
        if (*static_cast<int64_t*>((*state)->data(0)) != 7) {
          return absl::InternalError(absl::StrCat("rank ", rank, " has count ",
                                                  *static_cast<int64_t*>((*state)->data(0))));
        }
        // Rank 2 without the state tensor: its layout differs.
        return CheckSameLayout(backend, arena, rank == 2 ? nullptr : state->get());
      });
  for (const absl::Status& status : results) {
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("rank 2 registered other tensors than rank 0"));
  }
}

TEST(RankSyncTest, AnyRankIsTrueEverywhereWhenOneRankAsks) {
  for (uint32_t asking : {0u, 2u, 3u}) {  // 3: nobody asks
    const std::vector<absl::Status> results = RunGroup(
        3, [](uint32_t) { return std::vector<TensorDescriptor>{Matrix("w", 2, 2)}; },
        [&](uint32_t rank, CollectiveBackend& backend, TensorArena&) -> absl::Status {
          absl::StatusOr<bool> any = AnyRank(backend, rank == asking);
          if (!any.ok()) return any.status();
          if (*any != (asking < 3))
            return absl::InternalError(absl::StrCat("rank ", rank, " got ", *any));
          return absl::OkStatus();
        });
    for (const absl::Status& status : results)
      EXPECT_TRUE(status.ok()) << "asking " << asking << ": " << status;
  }
}

// Rank `rank`'s metrics of one batch: loss and accuracy, first seen in an order that depends on
// the rank (as a plugin reporting them from a hash map might), or named otherwise on rank 1.
MetricAccumulator RankMetrics(uint32_t rank, bool misnamed = false) {
  BatchMetrics batch;
  const double loss = 1.0 + rank;
  const double accuracy = 0.5 + 0.125 * rank;
  const std::string accuracy_name = misnamed && rank == 1 ? "acc" : "accuracy";
  if (rank % 2 == 0) {
    EXPECT_TRUE(batch.Add("loss", loss, 10, COHORT_REDUCE_MEAN).ok());
    EXPECT_TRUE(batch.Add(accuracy_name, accuracy, 10, COHORT_REDUCE_MEAN).ok());
  } else {
    EXPECT_TRUE(batch.Add(accuracy_name, accuracy, 10, COHORT_REDUCE_MEAN).ok());
    EXPECT_TRUE(batch.Add("loss", loss, 10, COHORT_REDUCE_MEAN).ok());
  }
  MetricAccumulator metrics;
  EXPECT_TRUE(metrics.Add(batch).ok());
  return metrics;
}

TEST(RankSyncTest, MetricsMergeByNameWhateverOrderEachRankSawThemIn) {
  const std::vector<absl::Status> results = RunGroup(
      3, [](uint32_t) { return std::vector<TensorDescriptor>{Matrix("w", 2, 2)}; },
      [](uint32_t rank, CollectiveBackend& backend, TensorArena&) -> absl::Status {
        MetricAccumulator metrics = RankMetrics(rank);
        if (absl::Status merged = MergeMetricsAcrossRanks(backend, metrics); !merged.ok()) {
          return merged;
        }
        // Means over the 3 ranks' equal record counts: loss (1 + 2 + 3) / 3, accuracy
        // (0.5 + 0.625 + 0.75) / 3.
        for (const ReducedMetric& metric : metrics.Result()) {
          const double expected = metric.name == "loss" ? 2.0 : 0.625;
          if (metric.value != expected) {
            return absl::InternalError(
                absl::StrCat("rank ", rank, ": ", metric.name, " = ", metric.value));
          }
        }
        return absl::OkStatus();
      });
  for (const absl::Status& status : results) EXPECT_TRUE(status.ok()) << status;
}

TEST(RankSyncTest, ARankWhoseShareWasEmptyMergesWithoutMovingAnyValue) {
  // Rank 1's share of every validation batch was empty: it reports the names with count 0.
  const std::vector<absl::Status> results = RunGroup(
      2, [](uint32_t) { return std::vector<TensorDescriptor>{Matrix("w", 2, 2)}; },
      [](uint32_t rank, CollectiveBackend& backend, TensorArena&) -> absl::Status {
        BatchMetrics batch;
        const uint64_t records = rank == 0 ? 3 : 0;
        EXPECT_TRUE(batch.Add("loss", rank == 0 ? 0.5 : 0.0, records, COHORT_REDUCE_MEAN).ok());
        EXPECT_TRUE(batch.Add("low", rank == 0 ? 2.0 : 0.0, records, COHORT_REDUCE_MIN).ok());
        EXPECT_TRUE(batch.Add("high", rank == 0 ? -2.0 : 0.0, records, COHORT_REDUCE_MAX).ok());
        MetricAccumulator metrics;
        if (absl::Status added = metrics.Add(batch); !added.ok()) return added;
        if (absl::Status merged = MergeMetricsAcrossRanks(backend, metrics); !merged.ok()) {
          return merged;
        }
        const std::string got = absl::StrJoin(
            metrics.Result(), ", ", [](std::string* out, const ReducedMetric& metric) {
              absl::StrAppend(out, metric.name, "=", metric.value);
            });
        if (got != "loss=0.5, low=2, high=-2") {
          return absl::InternalError(absl::StrCat("rank ", rank, ": ", got));
        }
        return absl::OkStatus();
      });
  for (const absl::Status& status : results) EXPECT_TRUE(status.ok()) << status;
}

TEST(RankSyncTest, ARankReportingNoMetricsFailsTheMergeSayingHowAnEmptyShareReports) {
  const std::vector<absl::Status> results = RunGroup(
      2, [](uint32_t) { return std::vector<TensorDescriptor>{Matrix("w", 2, 2)}; },
      [](uint32_t rank, CollectiveBackend& backend, TensorArena&) {
        MetricAccumulator metrics = rank == 0 ? RankMetrics(rank) : MetricAccumulator();
        return MergeMetricsAcrossRanks(backend, metrics);
      });
  EXPECT_TRUE(IsPermanentFailure(results[0])) << results[0];
  EXPECT_THAT(std::string(results[0].message()),
              HasSubstr("rank 1 reported 0 metrics and rank 0 2; every rank must report the same "
                        "metrics (a batch without records, as a rank's empty share of a "
                        "validation, reports them with record count 0)"));
  EXPECT_THAT(std::string(results[1].message()),
              HasSubstr("rank 0 reported 2 metrics and rank 1 0"));
}

TEST(RankSyncTest, MetricsNamedOtherwiseOnOneRankFailTheMergeNamingThem) {
  const std::vector<absl::Status> results = RunGroup(
      2, [](uint32_t) { return std::vector<TensorDescriptor>{Matrix("w", 2, 2)}; },
      [](uint32_t rank, CollectiveBackend& backend, TensorArena&) {
        MetricAccumulator metrics = RankMetrics(rank, /*misnamed=*/true);
        return MergeMetricsAcrossRanks(backend, metrics);
      });
  EXPECT_TRUE(absl::IsFailedPrecondition(results[0])) << results[0];
  EXPECT_THAT(std::string(results[0].message()),
              HasSubstr("rank 1 reported metrics named (acc, loss) but rank 0 (accuracy, loss); "
                        "every rank must report the same metrics"));
  EXPECT_THAT(std::string(results[1].message()),
              HasSubstr("rank 0 reported metrics named (accuracy, loss) but rank 1 (acc, loss)"));
  EXPECT_TRUE(IsPermanentFailure(results[0])) << "every attempt would fail the same way";
}

}  // namespace
}  // namespace cohort
