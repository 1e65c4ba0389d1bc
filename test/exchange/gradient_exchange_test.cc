// GradientExchange over a real Gloo group: one thread per rank, each with its own arena, summing or
// averaging gradients bucket by bucket whatever order (or none) the plugin reports ranges in.
#include "runtime/exchange/gradient_exchange.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <latch>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/arena/arena_shard.h"
#include "runtime/arena/device_memory.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "test/collective/rank_threads.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

TensorDescriptor Tensor(const char* name, uint64_t count,
                        cohort_dtype dtype = COHORT_DTYPE_FLOAT32) {
  return TensorDescriptor{name, dtype, {COHORT_DEVICE_CPU, 0}, count};
}

// Sizes that are not multiples of the 16-float alignment, so the block has gaps between tensors.
std::vector<TensorDescriptor> ModelTensors() {
  return {Tensor("embedding", 37), Tensor("w1", 100), Tensor("b1", 5),
          Tensor("w2", 64),        Tensor("b2", 1),   Tensor("head", 19)};
}
constexpr size_t kB1 = 2;  // index of "b1" in ModelTensors()

// Small limits so the model is cut into many buckets.
ExchangeOptions SmallBuckets(CompressionOptions::Kind compression = CompressionOptions::kNone) {
  ExchangeOptions options;
  options.bucket_bytes = 128;
  options.first_bucket_bytes = 16;
  options.compression.kind = compression;
  return options;
}

using RankBody =
    std::function<absl::Status(uint32_t rank, TensorArena& arena, GradientExchange& exchange)>;

// Forms a Gloo group of `size` ranks, gives each rank an arena of `tensors` and an exchange over
// it, and runs `body` on every rank.
std::vector<absl::Status> RunExchangeGroup(
    uint32_t size, const ExchangeOptions& options, const RankBody& body,
    const std::vector<TensorDescriptor>& tensors = ModelTensors()) {
  InMemoryRendezvousStore store;
  GlooOptions gloo;
  gloo.timeout = std::chrono::seconds(20);
  gloo.prefix = "trial-1/attempt-0";
  return RunRanks(size, [&](uint32_t rank) -> absl::Status {
    CpuOnlyMemoryProvider memory;
    absl::StatusOr<std::unique_ptr<TensorArena>> arena = TensorArena::Create(tensors, memory);
    if (!arena.ok()) return arena.status();
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
        CreateGlooBackend(rank, size, store, gloo);
    if (!backend.ok()) return backend.status();
    absl::StatusOr<std::unique_ptr<GradientExchange>> exchange =
        GradientExchange::Create(**arena, **backend, options);
    if (!exchange.ok()) return exchange.status();
    if ((*exchange)->plan().size() < 6) {
      return absl::InternalError(
          absl::StrCat("only ", (*exchange)->plan().size(), " buckets planned"));
    }
    return body(rank, **arena, **exchange);
  });
}

void ExpectAllOk(const std::vector<absl::Status>& results) {
  for (size_t rank = 0; rank < results.size(); ++rank) {
    EXPECT_TRUE(results[rank].ok()) << "rank " << rank << ": " << results[rank];
  }
}

// A gradient element every rank can predict: a small multiple of 1/4, so float32 sums of a few of
// them, and their products with powers of two, are exact.
float LocalValue(uint32_t rank, size_t tensor, uint64_t i, uint32_t batch = 0) {
  const int units = static_cast<int>((rank + 1) * 3 + tensor * 5 + i % 11 + batch * 7) - 20;
  return 0.25f * static_cast<float>(units);
}

// The sum over `size` ranks of LocalValue, computed exactly.
double SumOfLocalValues(uint32_t size, size_t tensor, uint64_t i, uint32_t batch = 0) {
  double sum = 0;
  for (uint32_t rank = 0; rank < size; ++rank) sum += LocalValue(rank, tensor, i, batch);
  return sum;
}

// Writes value(tensor, i) into every tensor's gradient; the alignment gaps are left alone.
void FillGradients(TensorArena& arena, const std::function<float(size_t, uint64_t)>& value) {
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    float* grad = static_cast<float*>(arena.grad(t));
    for (uint64_t i = 0; i < arena.spec(t).element_count; ++i) grad[i] = value(t, i);
  }
}

// OK when every gradient element is within `relative_tolerance` of expected(tensor, i) (exactly
// equal for 0) and every alignment gap is still zero; else the first element that is not.
absl::Status CheckGradients(const TensorArena& arena,
                            const std::function<double(size_t, uint64_t)>& expected,
                            double relative_tolerance = 0) {
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    const float* grad = static_cast<const float*>(arena.grad(t));
    for (uint64_t i = 0; i < arena.spec(t).element_count; ++i) {
      const double want = expected(t, i);
      if (std::abs(grad[i] - want) > relative_tolerance * std::abs(want)) {
        return absl::InternalError(absl::StrCat("tensor '", arena.spec(t).name, "' element ", i,
                                                " is ", grad[i], ", expected ", want));
      }
    }
  }
  for (size_t b = 0; b < arena.blocks().size(); ++b) {
    const ArenaBlock& block = arena.blocks()[b];
    std::vector<bool> covered(block.element_count, false);
    for (size_t t = 0; t < arena.tensor_count(); ++t) {
      const TensorPlacement& placement = arena.placement(t);
      if (placement.block != b) continue;
      std::fill_n(covered.begin() + static_cast<std::ptrdiff_t>(placement.offset),
                  placement.element_count, true);
    }
    const float* grad = static_cast<const float*>(block.grad);
    for (uint64_t i = 0; i < block.element_count; ++i) {
      if (!covered[i] && grad[i] != 0.0f) {
        return absl::InternalError(
            absl::StrCat("gap element ", i, " of block ", b, " is ", grad[i]));
      }
    }
  }
  return absl::OkStatus();
}

struct ReadyRange {
  uint32_t tensor;
  uint64_t offset;
  uint64_t count;
};

// Every tensor cut into ranges of up to 7 elements, from the last tensor's end back to the first
// tensor's start: the order a backward pass finishes them.
std::vector<ReadyRange> ReverseRanges(const TensorArena& arena) {
  constexpr uint64_t kChunk = 7;
  std::vector<ReadyRange> ranges;
  for (size_t t = arena.tensor_count(); t-- > 0;) {
    const uint64_t count = arena.spec(t).element_count;
    for (uint64_t end = count; end > 0;) {
      const uint64_t begin = end > kChunk ? end - kChunk : 0;
      ranges.push_back({static_cast<uint32_t>(t), begin, end - begin});
      end = begin;
    }
  }
  return ranges;
}

// Every tensor whole, in registration order: a model whose backward finishes its first registered
// tensor first.
std::vector<ReadyRange> ForwardRanges(const TensorArena& arena) {
  std::vector<ReadyRange> ranges;
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    ranges.push_back({static_cast<uint32_t>(t), 0, arena.spec(t).element_count});
  }
  return ranges;
}

// The plan SmallBuckets (or `limits`) gives ModelTensors along `order`.
std::vector<GradientBucket> SmallBucketsAlong(std::vector<size_t> order,
                                              BucketLimits limits = {
                                                  SmallBuckets().bucket_bytes,
                                                  SmallBuckets().first_bucket_bytes}) {
  CpuOnlyMemoryProvider memory;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena = TensorArena::Create(ModelTensors(), memory);
  EXPECT_TRUE(arena.ok()) << arena.status();
  absl::StatusOr<std::vector<GradientBucket>> plan =
      PlanBuckets(**arena, limits.bucket_bytes, limits.first_bucket_bytes, order);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : std::vector<GradientBucket>{};
}

// The same ranges shuffled, differently for every seed.
std::vector<ReadyRange> ScrambledRanges(const TensorArena& arena, uint32_t seed) {
  std::vector<ReadyRange> ranges = ReverseRanges(arena);
  std::mt19937 random(seed);
  std::shuffle(ranges.begin(), ranges.end(), random);
  return ranges;
}

void Report(GradientExchange& exchange, const std::vector<ReadyRange>& ranges) {
  for (const ReadyRange& range : ranges)
    exchange.OnGradientsReady(range.tensor, range.offset, range.count);
}

// Each rank holds size * LocalValue: scaled by 1/size (exact: 1/3 rounds to float with a relative
// error of 2^-25, too small to move the product off the integer multiple), the sum is exactly
// SumOfLocalValues, which is the average of what the ranks held.
absl::Status AverageOneBatch(uint32_t rank, uint32_t size, TensorArena& arena,
                             GradientExchange& exchange, const std::vector<ReadyRange>& ranges) {
  const float n = static_cast<float>(size);
  FillGradients(arena, [&](size_t t, uint64_t i) { return n * LocalValue(rank, t, i); });
  exchange.Begin(1.0 / size, /*step=*/0);
  if (!exchange.active()) return absl::InternalError("not active after Begin");
  Report(exchange, ranges);
  RETURN_IF_ERROR(exchange.Finish());
  if (exchange.active()) return absl::InternalError("still active after Finish");
  return CheckGradients(arena, [&](size_t t, uint64_t i) { return SumOfLocalValues(size, t, i); });
}

class GradientExchangeGroupTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GradientExchangeGroupTest, AveragesExactlyWhenReportedInReverseOrder) {
  const uint32_t size = GetParam();
  ExpectAllOk(RunExchangeGroup(
      size, SmallBuckets(), [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) {
        return AverageOneBatch(rank, size, arena, exchange, ReverseRanges(arena));
      }));
}

TEST_P(GradientExchangeGroupTest, AveragesExactlyWhenEachRankReportsInItsOwnScrambledOrder) {
  const uint32_t size = GetParam();
  ExpectAllOk(RunExchangeGroup(
      size, SmallBuckets(), [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) {
        return AverageOneBatch(rank, size, arena, exchange, ScrambledRanges(arena, rank + 1));
      }));
}

// ZeRO stage 2: each rank ends with the exact average of its own shard of the block (the
// buckets' pieces reduced onto their owners); the rest is not its to read.
TEST_P(GradientExchangeGroupTest, ReducesEachShardOntoItsOwnerOnly) {
  const uint32_t size = GetParam();
  ExchangeOptions options = SmallBuckets();
  options.reduce_to_shards = true;
  ExpectAllOk(RunExchangeGroup(
      size, options, [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) {
        const float n = static_cast<float>(size);
        for (uint32_t batch = 0; batch < 2; ++batch) {
          FillGradients(arena,
                        [&](size_t t, uint64_t i) { return n * LocalValue(rank, t, i, batch); });
          exchange.Begin(1.0 / size, /*step=*/batch, /*batch=*/batch);
          Report(exchange, ScrambledRanges(arena, rank + 7 * batch));
          RETURN_IF_ERROR(exchange.Finish());
          uint64_t checked = 0;
          for (size_t t = 0; t < arena.tensor_count(); ++t) {
            const TensorPlacement& place = arena.placement(t);
            const ElementRange mine =
                ShardRange(arena.blocks()[place.block].element_count, {rank, size});
            const float* grad = static_cast<const float*>(arena.grad(t));
            for (uint64_t i = 0; i < place.element_count; ++i) {
              if (place.offset + i < mine.begin || place.offset + i >= mine.end) continue;
              ++checked;
              if (grad[i] != SumOfLocalValues(size, t, i, batch)) {
                return absl::InternalError(
                    absl::StrCat("batch ", batch, ": tensor ", t, " element ", i, " is ", grad[i]));
              }
            }
          }
          if (checked == 0 && ShardRange(arena.blocks()[0].element_count, {rank, size}).count())
            return absl::InternalError("no element of this rank's shard was checked");
        }
        return absl::OkStatus();
      }));
}

// SDK 1.2: gradients_ready may come from any thread (autograd's, the plugin's own), several at
// once. Each rank reports every element on its own, from 4 threads let go at the same moment,
// batch after batch; every bucket is still summed once and exactly, and a range reported twice
// (as a lost update in the bookkeeping would let through) fails Finish.
TEST_P(GradientExchangeGroupTest, AveragesExactlyWhenRangesComeFromManyThreadsAtOnce) {
  const uint32_t size = GetParam();
  constexpr size_t kThreads = 4;
  ExpectAllOk(RunExchangeGroup(
      size, SmallBuckets(), [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) {
        std::vector<ReadyRange> elements;
        for (size_t t = 0; t < arena.tensor_count(); ++t) {
          for (uint64_t i = 0; i < arena.spec(t).element_count; ++i) {
            elements.push_back({static_cast<uint32_t>(t), i, 1});
          }
        }
        for (uint32_t batch = 0; batch < 50; ++batch) {
          const float n = static_cast<float>(size);
          FillGradients(arena,
                        [&](size_t t, uint64_t i) { return n * LocalValue(rank, t, i, batch); });
          exchange.Begin(1.0 / size, /*step=*/batch, /*batch=*/batch);
          std::shuffle(elements.begin(), elements.end(), std::mt19937(rank * 100 + batch));
          std::latch start(kThreads);
          std::vector<std::thread> threads;
          for (size_t k = 0; k < kThreads; ++k) {
            threads.emplace_back([&, k] {
              start.arrive_and_wait();
              for (size_t r = k; r < elements.size(); r += kThreads) {
                exchange.OnGradientsReady(elements[r].tensor, elements[r].offset,
                                          elements[r].count);
              }
            });
          }
          for (std::thread& thread : threads) thread.join();
          RETURN_IF_ERROR(exchange.Finish());
          RETURN_IF_ERROR(CheckGradients(
              arena, [&](size_t t, uint64_t i) { return SumOfLocalValues(size, t, i, batch); }));
        }
        return absl::OkStatus();
      }));
}

// The exchange's times: the bytes every collective was handed (each bucket's floats, each step
// check's 24 bytes and the ready order's 4 per tensor), the time inside them, and a Take that
// starts the time from zero.
TEST_P(GradientExchangeGroupTest, TimesCountTheCollectivesBytesAndSeconds) {
  const uint32_t size = GetParam();
  ExchangeOptions options = SmallBuckets();
  options.step_check_every = 1;
  ExpectAllOk(RunExchangeGroup(
      size, options,
      [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
        uint64_t floats = 0;
        for (const GradientBucket& bucket : exchange.plan()) floats += bucket.count;
        for (int batch = 0; batch < 3; ++batch) {
          RETURN_IF_ERROR(AverageOneBatch(rank, size, arena, exchange, ReverseRanges(arena)));
        }
        const GradientExchange::Times times = exchange.TakeTimes();
        // Three batches of buckets and step checks, and once the ready order (4 bytes a tensor).
        const uint64_t expected = 3 * (floats * sizeof(float) + 24) + 4 * arena.tensor_count();
        if (times.bytes != expected) {
          return absl::InternalError(absl::StrCat("bytes ", times.bytes, ", expected ", expected));
        }
        if (!(times.exchange_seconds > 0) || !(times.codec_seconds >= 0)) {
          return absl::InternalError(absl::StrCat("seconds: exchange ", times.exchange_seconds,
                                                  ", codec ", times.codec_seconds));
        }
        const GradientExchange::Times again = exchange.TakeTimes();
        if (again.exchange_seconds != 0 || again.codec_seconds != 0 || again.bytes != times.bytes) {
          return absl::InternalError("a second Take did not start the time from zero");
        }
        return absl::OkStatus();
      }));
}

TEST_P(GradientExchangeGroupTest, FinishExchangesEverythingWhenNothingWasReported) {
  const uint32_t size = GetParam();
  ExpectAllOk(RunExchangeGroup(size, SmallBuckets(),
                               [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) {
                                 return AverageOneBatch(rank, size, arena, exchange, {});
                               }));
}

TEST_P(GradientExchangeGroupTest, ReportsOutsideAnExchangedBatchKeepGradientsLocal) {
  const uint32_t size = GetParam();
  ExpectAllOk(RunExchangeGroup(
      size, SmallBuckets(), [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) {
        // Aggregation over two batches: the first is only accumulated locally.
        const float weight = 2.0f * static_cast<float>(size);
        FillGradients(arena,
                      [&](size_t t, uint64_t i) { return weight * LocalValue(rank, t, i, 0); });
        Report(exchange, ReverseRanges(arena));
        if (exchange.active()) return absl::InternalError("active without Begin");
        // A bucket wrongly launched would be summed by now.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        RETURN_IF_ERROR(exchange.Finish());
        auto local = [&](size_t t, uint64_t i) { return weight * LocalValue(rank, t, i, 0); };
        if (absl::Status status = CheckGradients(arena, local); !status.ok()) {
          return absl::InternalError(
              absl::StrCat("outside an exchanged batch: ", status.message()));
        }
        // The second batch accumulates onto the first and is exchanged, averaged over both batches.
        for (size_t t = 0; t < arena.tensor_count(); ++t) {
          float* grad = static_cast<float*>(arena.grad(t));
          for (uint64_t i = 0; i < arena.spec(t).element_count; ++i)
            grad[i] += weight * LocalValue(rank, t, i, 1);
        }
        exchange.Begin(1.0 / (2.0 * size), /*step=*/0);
        Report(exchange, ReverseRanges(arena));
        RETURN_IF_ERROR(exchange.Finish());
        return CheckGradients(arena, [&](size_t t, uint64_t i) {
          return SumOfLocalValues(size, t, i, 0) + SumOfLocalValues(size, t, i, 1);
        });
      }));
}

TEST_P(GradientExchangeGroupTest, ScaleOneSumsBatchAfterBatch) {
  const uint32_t size = GetParam();
  ExpectAllOk(RunExchangeGroup(
      size, SmallBuckets(), [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) {
        for (uint32_t batch = 0; batch < 5; ++batch) {
          RETURN_IF_ERROR(arena.ZeroGradients());
          FillGradients(arena, [&](size_t t, uint64_t i) { return LocalValue(rank, t, i, batch); });
          exchange.Begin(1.0, /*step=*/0);
          switch (batch % 3) {
            case 0:
              Report(exchange, ReverseRanges(arena));
              break;
            case 1:
              Report(exchange, ScrambledRanges(arena, rank * 10 + batch));
              break;
            default:
              break;  // nothing reported
          }
          RETURN_IF_ERROR(exchange.Finish());
          if (absl::Status status = CheckGradients(
                  arena, [&](size_t t, uint64_t i) { return SumOfLocalValues(size, t, i, batch); });
              !status.ok()) {
            return absl::InternalError(absl::StrCat("batch ", batch, ": ", status.message()));
          }
        }
        return absl::OkStatus();
      }));
}

TEST_P(GradientExchangeGroupTest, BadRangeFailsFinishOnThatRankWithoutHangingTheGroup) {
  const uint32_t size = GetParam();
  const auto start = std::chrono::steady_clock::now();
  ExpectAllOk(RunExchangeGroup(
      size, SmallBuckets(), [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) {
        const float n = static_cast<float>(size);
        FillGradients(arena, [&](size_t t, uint64_t i) { return n * LocalValue(rank, t, i); });
        exchange.Begin(1.0 / size, /*step=*/0);
        std::vector<ReadyRange> ranges = ReverseRanges(arena);
        if (rank == 0) {
          // Halfway through, one element past the end of "b1" (5 elements); the rest is reported
          // too.
          ranges.insert(ranges.begin() + static_cast<std::ptrdiff_t>(ranges.size() / 2),
                        ReadyRange{kB1, 5, 1});
        }
        Report(exchange, ranges);
        absl::Status finished = exchange.Finish();
        if (rank == 0) {
          if (!absl::IsInvalidArgument(finished) ||
              finished.message().find("'b1'") == absl::string_view::npos ||
              finished.message().find("past the tensor's end") == absl::string_view::npos) {
            return absl::InternalError(absl::StrCat("the bad range gave ", finished.ToString()));
          }
        } else {
          RETURN_IF_ERROR(finished);
        }
        // Every bucket was still exchanged, on every rank.
        RETURN_IF_ERROR(CheckGradients(
            arena, [&](size_t t, uint64_t i) { return SumOfLocalValues(size, t, i); }));
        // The error belonged to that batch only.
        return AverageOneBatch(rank, size, arena, exchange, ReverseRanges(arena));
      }));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// Values near 1 that neither 16-bit format holds exactly; every rank's differ.
float NearOne(uint32_t rank, size_t tensor, uint64_t i) {
  return 1.0f + static_cast<float>((rank * 37 + tensor * 11 + i * 7) % 101) / 1000.0f;
}

// Averages NearOne over the group through `compression`; every element must be within
// `relative_tolerance` of the exact average and bit for bit the same on every rank.
void ExpectCompressedAverage(uint32_t size, CompressionOptions::Kind compression,
                             double relative_tolerance) {
  std::vector<std::vector<float>> results(size);
  ExpectAllOk(RunExchangeGroup(
      size, SmallBuckets(compression),
      [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
        FillGradients(arena, [&](size_t t, uint64_t i) { return NearOne(rank, t, i); });
        exchange.Begin(1.0 / size, /*step=*/0);
        Report(exchange, ScrambledRanges(arena, rank + 7));
        RETURN_IF_ERROR(exchange.Finish());
        const ArenaBlock& block = arena.blocks()[0];
        const float* grad = static_cast<const float*>(block.grad);
        results[rank].assign(grad, grad + block.element_count);
        return CheckGradients(
            arena,
            [&](size_t t, uint64_t i) {
              double sum = 0;
              for (uint32_t r = 0; r < size; ++r) sum += NearOne(r, t, i);
              return sum / size;
            },
            relative_tolerance);
      }));
  for (uint32_t rank = 1; rank < size; ++rank) {
    ASSERT_EQ(results[rank].size(), results[0].size());
    EXPECT_EQ(
        std::memcmp(results[rank].data(), results[0].data(), results[0].size() * sizeof(float)), 0)
        << "rank " << rank << " differs from rank 0";
  }
}

// fp16 on values near 1: each scaled value rounds once on encoding and each partial sum once in
// Gloo's half-precision add, half an ulp each time. These values stay within 1e-3 of the exact
// average (8.5e-4 at most, with three ranks), though the worst case for three ranks is 1.1e-3.
TEST_P(GradientExchangeGroupTest, Fp16AveragesWithinOnePartInAThousandAndAgreesBitForBit) {
  ExpectCompressedAverage(GetParam(), CompressionOptions::kFp16, 1e-3);
}

// bf16 keeps 8 significant bits: each value rounds once (2^-9 relative), the sum is float32.
TEST_P(GradientExchangeGroupTest, Bf16AveragesWithinOnePartInAHundredAndAgreesBitForBit) {
  ExpectCompressedAverage(GetParam(), CompressionOptions::kBf16, 1e-2);
}

// The step check: ranks that disagree on the batch (or the step) fail together, each naming every
// rank's position, instead of summing gradients of different batches; no bucket is exchanged.
TEST(GradientExchangeStepCheckTest, RanksOutOfStepFailTogetherNamingEachRanksBatch) {
  const uint32_t size = 3;
  std::vector<absl::Status> finished(size);
  ExchangeOptions options = SmallBuckets();
  options.step_check_every = 1;
  ExpectAllOk(RunExchangeGroup(
      size, options, [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) {
        // One batch in step first: the check passes.
        RETURN_IF_ERROR(AverageOneBatch(rank, size, arena, exchange, ReverseRanges(arena)));
        FillGradients(arena, [&](size_t t, uint64_t i) { return LocalValue(rank, t, i); });
        exchange.Begin(1.0 / size, /*step=*/1, /*batch=*/rank == 2 ? 2 : 1);  // rank 2 skipped one
        Report(exchange, ReverseRanges(arena));
        finished[rank] = exchange.Finish();
        // Nothing was summed: each rank still holds its own gradient.
        return CheckGradients(arena, [&](size_t t, uint64_t i) { return LocalValue(rank, t, i); });
      }));
  for (uint32_t rank = 0; rank < size; ++rank) {
    EXPECT_FALSE(finished[rank].ok()) << "rank " << rank;
    const std::string message(finished[rank].message());
    EXPECT_THAT(message, HasSubstr("out of step"));
    EXPECT_THAT(message, HasSubstr("rank 0 at batch 2"));
    EXPECT_THAT(message, HasSubstr("rank 2 at batch 3"));
  }
}

// After the first exchanged batch every rank cuts its buckets along the order rank 0's plugin
// reported (whatever order the others saw), keeps that cut, and goes on averaging exactly.
TEST_P(GradientExchangeGroupTest, BucketsFollowRankZerosReadyOrderAfterTheFirstBatch) {
  const uint32_t size = GetParam();
  const std::vector<GradientBucket> forward_plan = SmallBucketsAlong({0, 1, 2, 3, 4, 5});
  ASSERT_NE(forward_plan, SmallBucketsAlong({}));
  ExpectAllOk(RunExchangeGroup(
      size, SmallBuckets(),
      [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
        EXPECT_EQ(exchange.plan(), SmallBucketsAlong({}));
        EXPECT_FALSE(exchange.ready_order().has_value());
        RETURN_IF_ERROR(
            AverageOneBatch(rank, size, arena, exchange,
                            rank == 0 ? ForwardRanges(arena) : ScrambledRanges(arena, rank)));
        EXPECT_EQ(exchange.plan(), forward_plan) << "rank " << rank;
        EXPECT_EQ(exchange.ready_order(), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}))
            << "rank " << rank;
        for (uint32_t batch = 1; batch < 4; ++batch) {
          RETURN_IF_ERROR(AverageOneBatch(rank, size, arena, exchange,
                                          ScrambledRanges(arena, 10 * batch + rank)));
        }
        EXPECT_EQ(exchange.plan(), forward_plan) << "rank " << rank;
        return absl::OkStatus();
      }));
}

// Off, the buckets keep reverse registration order and no order is kept.
TEST_P(GradientExchangeGroupTest, BucketsKeepRegistrationOrderWhenNotFollowingReadyOrder) {
  const uint32_t size = GetParam();
  ExchangeOptions options = SmallBuckets();
  options.follow_ready_order = false;
  ExpectAllOk(RunExchangeGroup(
      size, options,
      [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
        RETURN_IF_ERROR(AverageOneBatch(rank, size, arena, exchange, ForwardRanges(arena)));
        EXPECT_EQ(exchange.plan(), SmallBucketsAlong({}));
        EXPECT_FALSE(exchange.ready_order().has_value());
        return absl::OkStatus();
      }));
}

// New limits (tensor_fusion_threshold auto) cut the buckets again along the order learned from
// the first batch, and the exchange goes on averaging exactly; a zero limit changes nothing.
TEST_P(GradientExchangeGroupTest, NewBucketLimitsCutAgainAlongTheLearnedOrder) {
  const uint32_t size = GetParam();
  const BucketLimits wide{1 << 10, 64};
  const std::vector<GradientBucket> wide_plan = SmallBucketsAlong({0, 1, 2, 3, 4, 5}, wide);
  ASSERT_NE(wide_plan, SmallBucketsAlong({0, 1, 2, 3, 4, 5}));
  ASSERT_NE(wide_plan, SmallBucketsAlong({}, wide));
  ExpectAllOk(RunExchangeGroup(
      size, SmallBuckets(),
      [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
        RETURN_IF_ERROR(AverageOneBatch(rank, size, arena, exchange, ForwardRanges(arena)));
        RETURN_IF_ERROR(exchange.SetBucketLimits(wide));
        EXPECT_EQ(exchange.bucket_limits(), wide);
        EXPECT_EQ(exchange.plan(), wide_plan) << "rank " << rank;
        EXPECT_EQ(exchange.SetBucketLimits({0, 64}).code(), absl::StatusCode::kInvalidArgument);
        EXPECT_EQ(exchange.plan(), wide_plan) << "rank " << rank;
        for (uint32_t batch = 1; batch < 3; ++batch) {
          RETURN_IF_ERROR(AverageOneBatch(rank, size, arena, exchange,
                                          ScrambledRanges(arena, 10 * batch + rank)));
        }
        return absl::OkStatus();
      }));
}

INSTANTIATE_TEST_SUITE_P(Ranks, GradientExchangeGroupTest, ::testing::Values(1u, 2u, 3u),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return absl::StrCat(info.param, "ranks");
                         });

// Create's refusals, against a group of one.
absl::Status CreateOnOneRank(std::vector<TensorDescriptor> specs, const ExchangeOptions& options) {
  InMemoryRendezvousStore store;
  CpuOnlyMemoryProvider memory;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      TensorArena::Create(std::move(specs), memory);
  if (!arena.ok()) return arena.status();
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
      CreateGlooBackend(0, 1, store, GlooOptions{});
  if (!backend.ok()) return backend.status();
  return GradientExchange::Create(**arena, **backend, options).status();
}

TEST(GradientExchangeTest, CreateRefusesAFloat64Block) {
  absl::Status status =
      CreateOnOneRank({Tensor("w", 8), Tensor("d", 8, COHORT_DTYPE_FLOAT64)}, SmallBuckets());
  EXPECT_TRUE(absl::IsUnimplemented(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("float64"));
}

TEST(GradientExchangeTest, CreateAcceptsFloat32WithEveryCompression) {
  for (CompressionOptions::Kind kind :
       {CompressionOptions::kNone, CompressionOptions::kFp16, CompressionOptions::kBf16,
        CompressionOptions::kTopK, CompressionOptions::kPowerSgd}) {
    ExchangeOptions options = SmallBuckets(kind);
    options.compression.topk_ratio = 0.01;
    options.compression.powersgd_rank = 1;
    EXPECT_TRUE(CreateOnOneRank(ModelTensors(), options).ok()) << CompressionKindName(kind);
  }
}

// Copies every rank's whole gradient block, so ranks can be compared bit for bit.
void ExpectSameBitsOnEveryRank(const std::vector<std::vector<float>>& results) {
  for (size_t rank = 1; rank < results.size(); ++rank) {
    ASSERT_EQ(results[rank].size(), results[0].size());
    EXPECT_EQ(
        std::memcmp(results[rank].data(), results[0].data(), results[0].size() * sizeof(float)), 0)
        << "rank " << rank << " differs from rank 0";
  }
}

std::vector<float> GradientBlock(const TensorArena& arena) {
  const ArenaBlock& block = arena.blocks()[0];
  const float* grad = static_cast<const float*>(block.grad);
  return std::vector<float>(grad, grad + block.element_count);
}

class CompressedExchangeTest : public ::testing::TestWithParam<uint32_t> {};

// With ratio 1 every entry is sent: top-k is then an exact average (the values are quarter units).
TEST_P(CompressedExchangeTest, TopKWithRatioOneAveragesExactly) {
  const uint32_t size = GetParam();
  ExchangeOptions options = SmallBuckets(CompressionOptions::kTopK);
  options.compression.topk_ratio = 1.0;
  ExpectAllOk(RunExchangeGroup(
      size, options, [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) {
        return AverageOneBatch(rank, size, arena, exchange, ScrambledRanges(arena, rank + 3));
      }));
}

// Exchanges the same gradients (the average of LocalValue) for `steps` steps and checks that the
// running sum of what was delivered is within `held_back` largest averages of the running sum of
// the true averages (error feedback: what is not sent now is sent later), and that every rank
// ends with the same bits.
void ExpectErrorFeedbackDeliversTheRunningSum(uint32_t size, const ExchangeOptions& options,
                                              const std::vector<TensorDescriptor>& tensors,
                                              int steps, double held_back) {
  std::vector<std::vector<float>> results(size);
  ExpectAllOk(RunExchangeGroup(
      size, options,
      [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
        std::vector<double> delivered(arena.blocks()[0].element_count, 0.0);
        for (int step = 0; step < steps; ++step) {
          RETURN_IF_ERROR(arena.ZeroGradients());
          FillGradients(arena, [&](size_t t, uint64_t i) {
            return static_cast<float>(size) * LocalValue(rank, t, i);
          });
          exchange.Begin(1.0 / size, static_cast<uint64_t>(step));
          Report(exchange, ReverseRanges(arena));
          RETURN_IF_ERROR(exchange.Finish());
          const std::vector<float> block = GradientBlock(arena);
          for (size_t i = 0; i < block.size(); ++i) delivered[i] += block[i];
        }
        results[rank] = GradientBlock(arena);
        double largest = 0;
        for (size_t t = 0; t < arena.tensor_count(); ++t) {
          for (uint64_t i = 0; i < arena.spec(t).element_count; ++i) {
            largest = std::max(largest, std::abs(SumOfLocalValues(size, t, i)));
          }
        }
        for (size_t t = 0; t < arena.tensor_count(); ++t) {
          const TensorPlacement& placement = arena.placement(t);
          for (uint64_t i = 0; i < placement.element_count; ++i) {
            const double want = steps * SumOfLocalValues(size, t, i);
            const double got = delivered[placement.offset + i];
            if (std::abs(got - want) > held_back * largest + 1e-3 * std::abs(want)) {
              return absl::InternalError(absl::StrCat("tensor '", arena.spec(t).name, "' element ",
                                                      i, ": delivered ", got, " over ", steps,
                                                      " steps, expected about ", want));
            }
          }
        }
        return absl::OkStatus();
      },
      tensors));
  ExpectSameBitsOnEveryRank(results);
}

// Top-k holds back at most about 1/ratio steps' worth of an element.
TEST_P(CompressedExchangeTest, TopKErrorFeedbackDeliversTheRunningSum) {
  ExchangeOptions options = SmallBuckets(CompressionOptions::kTopK);
  options.compression.topk_ratio = 0.1;
  ExpectErrorFeedbackDeliversTheRunningSum(GetParam(), options, ModelTensors(), /*steps=*/100,
                                           /*held_back=*/12);
}

// The model with matrix shapes on "w1" (10 x 10) and "w2" (8 x 8); the others are vectors.
std::vector<TensorDescriptor> ShapedModelTensors() {
  std::vector<TensorDescriptor> tensors = ModelTensors();
  tensors[1].shape = {10, 10};
  tensors[3].shape = {8, 8};
  return tensors;
}

// A rank-one matrix per rank (a multiple of u v^T) for the shaped tensors, the usual values for
// the vectors: the average is rank one, which PowerSGD of rank 1 reproduces from the first
// compressed step on; vectors are summed exactly.
float RankOneValue(uint32_t rank, size_t tensor, uint64_t i) {
  if (tensor == 1 || tensor == 3) {
    const uint64_t cols = tensor == 1 ? 10 : 8;
    const float u = 0.5f + static_cast<float>(i / cols) * 0.25f;
    const float v = static_cast<float>(i % cols) * 0.125f - 0.5f;
    return static_cast<float>(rank + 1) * u * v;
  }
  return LocalValue(rank, tensor, i);
}

TEST_P(CompressedExchangeTest, PowerSgdIsExactBeforeStartIterAndReproducesARankOneAverageAfter) {
  const uint32_t size = GetParam();
  ExchangeOptions options = SmallBuckets(CompressionOptions::kPowerSgd);
  options.compression.powersgd_rank = 1;
  options.compression.powersgd_start_iter = 2;
  std::vector<std::vector<float>> results(size);
  ExpectAllOk(RunExchangeGroup(
      size, options,
      [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
        auto average = [&](size_t t, uint64_t i) {
          double sum = 0;
          for (uint32_t r = 0; r < size; ++r) sum += RankOneValue(r, t, i);
          return sum / size;
        };
        for (uint64_t step = 0; step < 4; ++step) {
          RETURN_IF_ERROR(arena.ZeroGradients());
          FillGradients(arena, [&](size_t t, uint64_t i) { return RankOneValue(rank, t, i); });
          exchange.Begin(1.0 / size, step);
          Report(exchange, ReverseRanges(arena));
          RETURN_IF_ERROR(exchange.Finish());
          // Before start_iter the sum is exact; after it, rounding in the factors only.
          if (absl::Status status = CheckGradients(arena, average, step < 2 ? 1e-6 : 1e-4);
              !status.ok()) {
            return absl::InternalError(absl::StrCat("step ", step, ": ", status.message()));
          }
        }
        results[rank] = GradientBlock(arena);
        return absl::OkStatus();
      },
      ShapedModelTensors()));
  ExpectSameBitsOnEveryRank(results);
}

// A full-rank average is only approximated, but error feedback keeps the running sum on track.
TEST_P(CompressedExchangeTest, PowerSgdErrorFeedbackDeliversTheRunningSum) {
  ExchangeOptions options = SmallBuckets(CompressionOptions::kPowerSgd);
  options.compression.powersgd_rank = 2;
  options.compression.powersgd_start_iter = 0;
  ExpectErrorFeedbackDeliversTheRunningSum(GetParam(), options, ShapedModelTensors(), /*steps=*/100,
                                           /*held_back=*/12);
}

// Runs batches [from, to) of gradients that change with the batch on `exchange`, collecting the
// summed block of each.
absl::Status RunBatches(uint32_t rank, uint32_t size, TensorArena& arena,
                        GradientExchange& exchange, uint32_t from, uint32_t to,
                        std::vector<std::vector<float>>* blocks, bool forward = false) {
  for (uint32_t batch = from; batch < to; ++batch) {
    RETURN_IF_ERROR(arena.ZeroGradients());
    FillGradients(arena, [&](size_t t, uint64_t i) { return LocalValue(rank, t, i, batch); });
    exchange.Begin(1.0 / size, batch);
    Report(exchange, forward ? ForwardRanges(arena) : ReverseRanges(arena));
    RETURN_IF_ERROR(exchange.Finish());
    blocks->push_back(GradientBlock(arena));
  }
  return absl::OkStatus();
}

// A checkpoint keeps every rank's compression state: an exchange restored from what another saved
// after 3 batches reduces the next 3 exactly as the other goes on to; one started anew does not.
TEST_P(CompressedExchangeTest, SavedCompressionStateContinuesBitForBit) {
  const uint32_t size = GetParam();
  for (CompressionOptions::Kind kind : {CompressionOptions::kTopK, CompressionOptions::kPowerSgd}) {
    SCOPED_TRACE(CompressionKindName(kind));
    ExchangeOptions options = SmallBuckets(kind);
    options.compression.topk_ratio = 0.2;
    options.compression.powersgd_rank = 1;
    options.compression.powersgd_start_iter = 0;
    std::vector<std::string> saved(size);
    std::vector<std::vector<std::vector<float>>> going_on(size), restored(size), anew(size);
    ExpectAllOk(RunExchangeGroup(
        size, options,
        [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
          std::vector<std::vector<float>> first;
          RETURN_IF_ERROR(RunBatches(rank, size, arena, exchange, 0, 3, &first));
          absl::StatusOr<std::string> state = exchange.SaveCompressionState();
          if (!state.ok()) return state.status();
          if (state->empty()) return absl::InternalError("no compression state to save");
          saved[rank] = *state;
          return RunBatches(rank, size, arena, exchange, 3, 6, &going_on[rank]);
        },
        ShapedModelTensors()));
    ExpectAllOk(RunExchangeGroup(
        size, options,
        [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
          RETURN_IF_ERROR(exchange.RestoreCompressionState(saved[rank]));
          return RunBatches(rank, size, arena, exchange, 3, 6, &restored[rank]);
        },
        ShapedModelTensors()));
    ExpectAllOk(RunExchangeGroup(
        size, options,
        [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
          return RunBatches(rank, size, arena, exchange, 3, 6, &anew[rank]);
        },
        ShapedModelTensors()));
    for (uint32_t rank = 0; rank < size; ++rank) {
      ASSERT_EQ(restored[rank].size(), 3u);
      for (size_t batch = 0; batch < 3; ++batch) {
        EXPECT_EQ(std::memcmp(restored[rank][batch].data(), going_on[rank][batch].data(),
                              going_on[rank][batch].size() * sizeof(float)),
                  0)
            << "rank " << rank << ", batch " << batch + 4;
      }
      EXPECT_NE(anew[rank][0], going_on[rank][0]) << "the saved state made no difference";
    }
  }
}

// What a checkpoint keeps of a model reported in forward order: the ready order learned after the
// first batch, adopted before the compression state is restored, continues bit for bit.
TEST_P(CompressedExchangeTest, AdoptedReadyOrderAndStateContinueBitForBit) {
  const uint32_t size = GetParam();
  ExchangeOptions options = SmallBuckets(CompressionOptions::kTopK);
  options.compression.topk_ratio = 0.2;
  std::vector<std::string> saved(size);
  std::vector<uint32_t> order;
  std::vector<std::vector<std::vector<float>>> going_on(size), restored(size);
  ExpectAllOk(RunExchangeGroup(
      size, options,
      [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
        std::vector<std::vector<float>> first;
        RETURN_IF_ERROR(RunBatches(rank, size, arena, exchange, 0, 3, &first, /*forward=*/true));
        absl::StatusOr<std::string> state = exchange.SaveCompressionState();
        if (!state.ok()) return state.status();
        saved[rank] = *state;
        if (rank == 0) order = exchange.ready_order().value_or(std::vector<uint32_t>{});
        return RunBatches(rank, size, arena, exchange, 3, 6, &going_on[rank], /*forward=*/true);
      }));
  ASSERT_EQ(order, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
  ExpectAllOk(RunExchangeGroup(
      size, options,
      [&](uint32_t rank, TensorArena& arena, GradientExchange& exchange) -> absl::Status {
        const absl::Status bad = exchange.AdoptReadyOrder({0, 1, 2});
        EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;
        EXPECT_FALSE(exchange.ready_order().has_value());
        RETURN_IF_ERROR(exchange.AdoptReadyOrder(order));
        EXPECT_EQ(exchange.plan(), SmallBucketsAlong({0, 1, 2, 3, 4, 5}));
        RETURN_IF_ERROR(exchange.RestoreCompressionState(saved[rank]));
        return RunBatches(rank, size, arena, exchange, 3, 6, &restored[rank], /*forward=*/true);
      }));
  for (uint32_t rank = 0; rank < size; ++rank) {
    ASSERT_EQ(restored[rank].size(), 3u);
    for (size_t batch = 0; batch < 3; ++batch) {
      ASSERT_EQ(restored[rank][batch].size(), going_on[rank][batch].size());
      EXPECT_EQ(std::memcmp(restored[rank][batch].data(), going_on[rank][batch].data(),
                            going_on[rank][batch].size() * sizeof(float)),
                0)
          << "rank " << rank << ", batch " << batch + 4;
    }
  }
}

TEST(GradientExchangeTest, CompressionStateOfAnotherSizeIsRefusedNamingBoth) {
  ExchangeOptions options = SmallBuckets(CompressionOptions::kTopK);
  options.compression.topk_ratio = 0.2;
  ExpectAllOk(RunExchangeGroup(
      1, options, [&](uint32_t, TensorArena&, GradientExchange& exchange) -> absl::Status {
        const absl::Status status = exchange.RestoreCompressionState(std::string(12, '\0'));
        EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
        EXPECT_THAT(std::string(status.message()),
                    HasSubstr("holds 12 bytes; this exchange keeps "));
        return exchange.RestoreCompressionState("");  // empty: start anew
      }));
  ExpectAllOk(RunExchangeGroup(
      1, SmallBuckets(), [&](uint32_t, TensorArena&, GradientExchange& exchange) -> absl::Status {
        absl::StatusOr<std::string> state = exchange.SaveCompressionState();
        EXPECT_TRUE(state.ok() && state->empty()) << "an uncompressed exchange keeps nothing";
        EXPECT_TRUE(absl::IsFailedPrecondition(exchange.RestoreCompressionState("x")));
        return absl::OkStatus();
      }));
}

INSTANTIATE_TEST_SUITE_P(Ranks, CompressedExchangeTest, ::testing::Values(1u, 2u, 3u),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return absl::StrCat(info.param, "ranks");
                         });

}  // namespace
}  // namespace cohort
