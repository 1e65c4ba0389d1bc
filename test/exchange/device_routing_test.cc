// How GradientExchange routes gradients on a CUDA device, tested without a GPU: host memory poses
// as cuda:0, and a DeviceExchange whose reducers are the host ones records what the exchange asks
// of it. Checks that device gradients go to the DeviceExchange's reducer with every bucket's
// tensors, that every bucket is marked ready before it is reduced, once per exchanged batch, that
// ZeRO stage 2 asks it for its shard reducer with each bucket's pieces, and the refusals (no
// DeviceExchange, another device, a mix of host and device gradients, stage 2 beside compression).
// The real CUDA reducers are checked against the host ones in test/gpu/cuda_exchange_test.cc.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/arena/arena_shard.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/exchange/compression/powersgd/powersgd_reducer.h"
#include "runtime/exchange/gradient_exchange.h"
#include "runtime/exchange/shard_reducer.h"
#include "test/collective/rank_threads.h"
#include "test/common/host_memory_as_device.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

// Serves host memory for every device, so "cuda:0" tensors live in host memory.
class HostMemoryForEveryDevice final : public DeviceMemoryProvider {
 public:
  absl::StatusOr<DeviceMemory*> For(cohort_device) override { return &cpu_; }

 private:
  CpuMemory cpu_;
};

// What the exchange asked of the device reducer, in order: "ready 3", "reduce 3", ...
class CallLog {
 public:
  void Add(std::string entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back(std::move(entry));
  }
  std::vector<std::string> entries() {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> entries_;
};

class RecordingReducer final : public BucketReducer {
 public:
  RecordingReducer(std::unique_ptr<BucketReducer> inner, CallLog& log)
      : inner_(std::move(inner)), log_(log) {}
  void BucketReady(size_t bucket) override { log_.Add(absl::StrCat("ready ", bucket)); }
  absl::Status Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                      uint64_t step) override {
    log_.Add(absl::StrCat("reduce ", bucket));
    return inner_->Reduce(bucket, grad, count, scale, step);
  }

 private:
  std::unique_ptr<BucketReducer> inner_;
  CallLog& log_;
};

class RecordingDeviceExchange final : public DeviceExchange {
 public:
  RecordingDeviceExchange(int device, const TensorArena& arena) : device_(device), arena_(arena) {}
  int device() const override { return device_; }
  void* compute_stream() override { return nullptr; }
  void* communication_stream() override { return nullptr; }
  DeviceGradientOps& gradient_ops() override { return gradient_ops_; }
  DeviceValueReader& value_reader() override { return value_reader_; }
  absl::Status CommunicationAfterCompute() override {
    log.Add("after compute");
    return absl::OkStatus();
  }
  absl::Status AllgatherHostBytes(CollectiveBackend& backend, const void* in, uint64_t bytes,
                                  void* out) override {
    log.Add("gather");
    return backend.Allgather(in, bytes, out);
  }
  absl::StatusOr<std::unique_ptr<BucketReducer>> CreateReducer(
      const CompressionOptions& compression, const std::vector<GradientBucket>& plan,
      const std::vector<std::vector<PowerSgdTensor>>& tensors,
      CollectiveBackend& backend) override {
    seen_tensors = tensors;
    absl::StatusOr<std::unique_ptr<BucketReducer>> inner =
        CreateBucketReducer(compression, plan, arena_, backend);
    if (!inner.ok()) return inner.status();
    return std::unique_ptr<BucketReducer>(new RecordingReducer(*std::move(inner), log));
  }

  absl::StatusOr<std::unique_ptr<BucketReducer>> CreateShardReducer(
      const std::vector<GradientBucket>& plan, std::vector<std::vector<ShardPiece>> pieces,
      CollectiveBackend& backend) override {
    seen_pieces = std::move(pieces);
    return std::unique_ptr<BucketReducer>(
        new RecordingReducer(std::make_unique<ShardReducer>(plan, arena_, backend), log));
  }

  CallLog log;
  std::vector<std::vector<PowerSgdTensor>> seen_tensors;  // as CreateReducer got them
  std::vector<std::vector<ShardPiece>> seen_pieces;       // as CreateShardReducer got them

 private:
  int device_;
  const TensorArena& arena_;
  testing::HostGradientOps gradient_ops_;
  testing::HostValueReader value_reader_;
};

std::vector<TensorDescriptor> Tensors(cohort_device device) {
  return {{"w1", COHORT_DTYPE_FLOAT32, device, 12 * 10, {12, 10}},
          {"b1", COHORT_DTYPE_FLOAT32, device, 10, {10}},
          {"w2", COHORT_DTYPE_FLOAT32, device, 10 * 3, {10, 3}},
          {"b2", COHORT_DTYPE_FLOAT32, device, 3, {}}};
}

ExchangeOptions SmallDeviceBuckets() {
  ExchangeOptions options;
  options.bucket_bytes = 128;
  options.first_bucket_bytes = 32;
  return options;
}

// Rank r's gradient element: exact in float32, and so is the average over two ranks.
float Value(uint32_t rank, size_t t, uint64_t i) {
  return static_cast<float>(rank * 4 + t + i % 5);
}

// One rank of a routed exchange: its "cuda:0" arena in host memory, a Gloo group and the
// recording DeviceExchange (members in the order of their lifetimes).
struct RoutedRank {
  HostMemoryForEveryDevice memory;
  std::unique_ptr<TensorArena> arena;
  std::unique_ptr<CollectiveBackend> backend;
  std::unique_ptr<RecordingDeviceExchange> device;
  std::unique_ptr<GradientExchange> exchange;
};

// Joins `rank` of `size` and makes its exchange with `options` (the device set here).
absl::Status Join(RoutedRank& routed, uint32_t rank, uint32_t size, RendezvousStore& store,
                  const GlooOptions& gloo, ExchangeOptions options) {
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      TensorArena::Create(Tensors({COHORT_DEVICE_CUDA, 0}), routed.memory);
  if (!arena.ok()) return arena.status();
  routed.arena = *std::move(arena);
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
      CreateGlooBackend(rank, size, store, gloo);
  if (!backend.ok()) return backend.status();
  routed.backend = *std::move(backend);
  routed.device = std::make_unique<RecordingDeviceExchange>(0, *routed.arena);
  options.device = routed.device.get();
  absl::StatusOr<std::unique_ptr<GradientExchange>> exchange =
      GradientExchange::Create(*routed.arena, *routed.backend, options);
  if (!exchange.ok()) return exchange.status();
  routed.exchange = *std::move(exchange);
  return absl::OkStatus();
}

// One exchanged batch of rank `rank`'s gradients (Value), reported last tensor first, averaged.
absl::Status ExchangeBatch(RoutedRank& routed, uint32_t rank) {
  TensorArena& arena = *routed.arena;
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    float* grad = static_cast<float*>(arena.grad(t));
    for (uint64_t i = 0; i < arena.spec(t).element_count; ++i) grad[i] = Value(rank, t, i);
  }
  routed.exchange->Begin(0.5, 0);
  for (size_t t = arena.tensor_count(); t-- > 0;) {
    routed.exchange->OnGradientsReady(static_cast<uint32_t>(t), 0, arena.spec(t).element_count);
  }
  return routed.exchange->Finish();
}

TEST(DeviceRoutingTest, DeviceGradientsGoToTheDeviceReducerEachBucketReadyBeforeItIsReduced) {
  constexpr uint32_t kSize = 2;
  InMemoryRendezvousStore store;
  GlooOptions gloo;
  gloo.prefix = "routing";
  std::vector<absl::Status> results = RunRanks(kSize, [&](uint32_t rank) -> absl::Status {
    RoutedRank routed;
    ExchangeOptions options = SmallDeviceBuckets();
    options.step_check_every = 1;
    RETURN_IF_ERROR(Join(routed, rank, kSize, store, gloo, options));
    const TensorArena* arena = routed.arena.get();
    RecordingDeviceExchange& device = *routed.device;
    const std::vector<GradientBucket>& plan = routed.exchange->plan();
    if (plan.size() < 3) return absl::InternalError(absl::StrCat(plan.size(), " buckets"));
    if (device.seen_tensors.size() != plan.size())
      return absl::InternalError("tensor lists do not match the plan");
    for (size_t b = 0; b < plan.size(); ++b) {
      const std::vector<PowerSgdTensor> want = PowerSgdTensorsOf(plan[b], *arena);
      const std::vector<PowerSgdTensor>& got = device.seen_tensors[b];
      if (got.size() != want.size())
        return absl::InternalError(absl::StrCat("bucket ", b, ": tensor count"));
      for (size_t t = 0; t < got.size(); ++t) {
        if (got[t].offset != want[t].offset || got[t].rows != want[t].rows ||
            got[t].cols != want[t].cols) {
          return absl::InternalError(absl::StrCat("bucket ", b, " tensor ", t, " differs"));
        }
      }
    }

    for (int batch = 0; batch < 2; ++batch) {
      RETURN_IF_ERROR(ExchangeBatch(routed, rank));
      for (size_t t = 0; t < arena->tensor_count(); ++t) {
        const float* grad = static_cast<const float*>(arena->grad(t));
        for (uint64_t i = 0; i < arena->spec(t).element_count; ++i) {
          const float want = (Value(0, t, i) + Value(1, t, i)) / 2;
          if (grad[i] != want) {
            return absl::InternalError(
                absl::StrCat("tensor ", t, " element ", i, ": ", grad[i], ", want ", want));
          }
        }
      }
    }
    // Per batch: the step check's gather before any bucket is reduced, then every bucket exactly
    // once ready and once reduced, ready first. After the first batch, one more gather: the ranks
    // agree on the order the gradients became ready in.
    const std::vector<std::string> log = device.log.entries();
    const size_t per_batch = 1 + 2 * plan.size();
    if (log.size() != 2 * per_batch + 1)
      return absl::InternalError(absl::StrCat(log.size(), " calls"));
    if (log[per_batch] != "gather")
      return absl::InternalError("no ready-order gather after batch 1");
    for (size_t batch = 0; batch < 2; ++batch) {
      const auto begin = log.begin() + static_cast<std::ptrdiff_t>(batch * (per_batch + 1));
      const auto end = begin + static_cast<std::ptrdiff_t>(per_batch);
      const auto gather = std::find(begin, end, "gather");
      const auto first_reduce = std::find_if(
          begin, end, [](const std::string& entry) { return entry.rfind("reduce", 0) == 0; });
      if (gather == end || gather > first_reduce) {
        return absl::InternalError(absl::StrCat("batch ", batch, ": no step check first"));
      }
      for (size_t b = 0; b < plan.size(); ++b) {
        const auto ready = std::find(begin, end, absl::StrCat("ready ", b));
        const auto reduce = std::find(begin, end, absl::StrCat("reduce ", b));
        if (ready == end || reduce == end || ready > reduce) {
          return absl::InternalError(
              absl::StrCat("batch ", batch, ": bucket ", b, " not marked ready before its reduce"));
        }
      }
    }
    return absl::OkStatus();
  });
  for (uint32_t rank = 0; rank < kSize; ++rank)
    EXPECT_TRUE(results[rank].ok()) << "rank " << rank << ": " << results[rank];
}

absl::Status CreateWith(const std::vector<TensorDescriptor>& tensors, DeviceExchange* device,
                        bool reduce_to_shards = false,
                        CompressionOptions::Kind compression = CompressionOptions::kNone) {
  HostMemoryForEveryDevice memory;
  InMemoryRendezvousStore store;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena = TensorArena::Create(tensors, memory);
  if (!arena.ok()) return arena.status();
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
      CreateGlooBackend(0, 1, store, GlooOptions{});
  if (!backend.ok()) return backend.status();
  ExchangeOptions options = SmallDeviceBuckets();
  options.device = device;
  options.reduce_to_shards = reduce_to_shards;
  options.compression.kind = compression;
  return GradientExchange::Create(**arena, **backend, options).status();
}

// ZeRO stage 2 on a GPU: the device's shard reducer, given each bucket's pieces in rank order,
// leaves every rank with the average of its own shard of every block.
TEST(DeviceRoutingTest, DeviceGradientsReduceToTheirShardsThroughTheDevicesShardReducer) {
  constexpr uint32_t kSize = 2;
  InMemoryRendezvousStore store;
  GlooOptions gloo;
  gloo.prefix = "shards";
  std::vector<absl::Status> results = RunRanks(kSize, [&](uint32_t rank) -> absl::Status {
    RoutedRank routed;
    ExchangeOptions options = SmallDeviceBuckets();
    options.reduce_to_shards = true;
    RETURN_IF_ERROR(Join(routed, rank, kSize, store, gloo, options));
    const TensorArena* arena = routed.arena.get();
    const RecordingDeviceExchange& device = *routed.device;
    const std::vector<GradientBucket>& plan = routed.exchange->plan();
    if (device.seen_pieces.size() != plan.size()) {
      return absl::InternalError(absl::StrCat(device.seen_pieces.size(), " lists of pieces for ",
                                              plan.size(), " buckets"));
    }
    bool cut = false;  // some bucket straddles the shards' boundary
    for (size_t b = 0; b < plan.size(); ++b) {
      uint64_t next = 0;
      const uint64_t block_elements = arena->blocks()[plan[b].block].element_count;
      for (const ShardPiece& piece : device.seen_pieces[b]) {
        const ElementRange shard = ShardRange(block_elements, {piece.owner, kSize});
        if (piece.offset != next || plan[b].offset + piece.offset < shard.begin ||
            plan[b].offset + piece.offset + piece.count > shard.end) {
          return absl::InternalError(absl::StrCat("bucket ", b, ": a piece out of place"));
        }
        next += piece.count;
      }
      if (next != plan[b].count) return absl::InternalError(absl::StrCat("bucket ", b, " uncut"));
      cut = cut || device.seen_pieces[b].size() > 1;
    }
    if (!cut) return absl::InternalError("no bucket is cut between two shards");

    RETURN_IF_ERROR(ExchangeBatch(routed, rank));
    for (size_t t = 0; t < arena->tensor_count(); ++t) {
      const TensorPlacement& placed = arena->placement(t);
      const ElementRange own =
          ShardRange(arena->blocks()[placed.block].element_count, {rank, kSize});
      const float* grad = static_cast<const float*>(arena->grad(t));
      for (uint64_t i = 0; i < arena->spec(t).element_count; ++i) {
        if (placed.offset + i < own.begin || placed.offset + i >= own.end) continue;
        const float want = (Value(0, t, i) + Value(1, t, i)) / 2;
        if (grad[i] != want) {
          return absl::InternalError(
              absl::StrCat("tensor ", t, " element ", i, ": ", grad[i], ", want ", want));
        }
      }
    }
    return absl::OkStatus();
  });
  for (uint32_t rank = 0; rank < kSize; ++rank)
    EXPECT_TRUE(results[rank].ok()) << "rank " << rank << ": " << results[rank];
}

// Stage 2 reduces uncompressed gradients only, on the device as on the host.
TEST(DeviceRoutingTest, ReducingCompressedDeviceGradientsToShardsIsRefusedNamingBothKeys) {
  HostMemoryForEveryDevice memory;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      TensorArena::Create(Tensors({COHORT_DEVICE_CUDA, 0}), memory);
  ASSERT_TRUE(arena.ok());
  RecordingDeviceExchange device(0, **arena);
  absl::Status status =
      CreateWith(Tensors({COHORT_DEVICE_CUDA, 0}), &device, true, CompressionOptions::kFp16);
  EXPECT_TRUE(absl::IsUnimplemented(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("optimizations.zero_stage 2"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("gradient_compression"));
  EXPECT_TRUE(CreateWith(Tensors({COHORT_DEVICE_CUDA, 0}), &device, true).ok());
}

TEST(DeviceRoutingTest, DeviceGradientsWithoutTheirDeviceExchangeAreRefused) {
  HostMemoryForEveryDevice memory;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      TensorArena::Create(Tensors({COHORT_DEVICE_CUDA, 1}), memory);
  ASSERT_TRUE(arena.ok());
  absl::Status none = CreateWith(Tensors({COHORT_DEVICE_CUDA, 1}), nullptr);
  EXPECT_TRUE(absl::IsFailedPrecondition(none)) << none;
  EXPECT_THAT(std::string(none.message()), HasSubstr("cuda:1"));
  RecordingDeviceExchange other(0, **arena);
  absl::Status wrong = CreateWith(Tensors({COHORT_DEVICE_CUDA, 1}), &other);
  EXPECT_TRUE(absl::IsFailedPrecondition(wrong)) << wrong;
}

TEST(DeviceRoutingTest, HostAndDeviceGradientsInOneModelAreRefusedNamingBoth) {
  std::vector<TensorDescriptor> mixed = Tensors({COHORT_DEVICE_CUDA, 0});
  mixed[1].device = {COHORT_DEVICE_CPU, 0};
  absl::Status status = CreateWith(mixed, nullptr);
  EXPECT_TRUE(absl::IsUnimplemented(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("cuda:0"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("cpu"));
}

TEST(DeviceRoutingTest, OpenCudaExchangeOpensADeviceOrSaysWhyNot) {
  absl::StatusOr<std::unique_ptr<DeviceExchange>> cuda = OpenCudaExchange(0);
  if (cuda.ok()) {
    EXPECT_EQ((*cuda)->device(), 0);
    EXPECT_NE((*cuda)->compute_stream(), (*cuda)->communication_stream());
  } else {
    EXPECT_TRUE(absl::IsUnavailable(cuda.status())) << cuda.status();
    EXPECT_FALSE(cuda.status().message().empty());
  }
  absl::StatusOr<std::unique_ptr<DeviceExchange>> missing = OpenCudaExchange(1 << 20);
  EXPECT_TRUE(absl::IsUnavailable(missing.status())) << missing.status();
}

}  // namespace
}  // namespace cohort
