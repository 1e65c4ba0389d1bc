// The gradient exchange on a CUDA device (the CUDA exchange module, NCCL at world size 1) against
// the same exchange in host memory (Gloo at world size 1), step by step, for every form of
// gradient compression: float32, fp16, bf16 and top-k must give the host's bits, PowerSGD the
// host's values to rounding (cuBLAS sums in another order); and the device reducers' state saved
// for a checkpoint continues bit for bit. Exits 77 (skipped) where no CUDA device is usable.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/arena/default_memory_provider.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/collective/nccl_loader.h"
#include "runtime/exchange/device_exchange.h"
#include "runtime/exchange/gradient_exchange.h"

namespace cohort {
namespace {

// A model with matrices (compressed by PowerSGD), vectors and sizes off the alignment.
std::vector<TensorDescriptor> Tensors(cohort_device device) {
  return {{"w1", COHORT_DTYPE_FLOAT32, device, 48 * 20, {48, 20}},
          {"b1", COHORT_DTYPE_FLOAT32, device, 20, {20}},
          {"w2", COHORT_DTYPE_FLOAT32, device, 20 * 33, {20, 33}},
          {"b2", COHORT_DTYPE_FLOAT32, device, 33, {}},
          {"head", COHORT_DTYPE_FLOAT32, device, 33 * 7, {33, 7}}};
}

// Gradient element i of tensor t at `step`: magnitudes from 2^-30 to 2^17, both signs, so the
// 16-bit formats round, flush to subnormals and overflow, and top-k has ties to break.
float GradientValue(size_t t, uint64_t i, uint32_t step) {
  const uint64_t h = (i * 2654435761u + t * 40503u + step * 9973u) % 1000003u;
  const float mantissa = 1.0f + static_cast<float>(h % 1024) / 1024.0f;
  const int exponent = static_cast<int>(h % 48) - 30;
  const float value = std::ldexp(mantissa, exponent) * ((h & 1) != 0 ? -1.0f : 1.0f);
  return h % 17 == 0 ? 0.75f : value;  // repeated magnitudes
}

// Members in the order of their lifetimes: the device's streams outlive NCCL, which runs on one.
struct Side {
  std::unique_ptr<DeviceExchange> device;  // the device side only
  std::unique_ptr<TensorArena> arena;
  std::unique_ptr<CollectiveBackend> backend;
  std::unique_ptr<GradientExchange> exchange;
};

// `shards`: ZeRO stage 2's reduce (with one rank, the scaled bucket lands on its one shard).
ExchangeOptions Options(CompressionOptions compression, bool shards = false) {
  ExchangeOptions options;
  options.reduce_to_shards = shards;
  options.bucket_bytes = 4096;  // several buckets, some holding more than one tensor
  options.first_bucket_bytes = 512;
  options.compression = compression;
  return options;
}

absl::Status MakeHost(Side& side, const CompressionOptions& compression,
                      DeviceMemoryProvider& memory, RendezvousStore& store, bool shards = false) {
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      TensorArena::Create(Tensors({COHORT_DEVICE_CPU, 0}), memory);
  if (!arena.ok()) return arena.status();
  side.arena = *std::move(arena);
  GlooOptions gloo;
  gloo.prefix = "host";
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend = CreateGlooBackend(0, 1, store, gloo);
  if (!backend.ok()) return backend.status();
  side.backend = *std::move(backend);
  absl::StatusOr<std::unique_ptr<GradientExchange>> exchange =
      GradientExchange::Create(*side.arena, *side.backend, Options(compression, shards));
  if (!exchange.ok()) return exchange.status();
  side.exchange = *std::move(exchange);
  return absl::OkStatus();
}

absl::Status MakeDevice(Side& side, const CompressionOptions& compression,
                        DeviceMemoryProvider& memory, RendezvousStore& store,
                        const std::string& prefix = "device", bool shards = false) {
  absl::StatusOr<std::unique_ptr<DeviceExchange>> device = OpenCudaExchange(0);
  if (!device.ok()) return device.status();
  side.device = *std::move(device);
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      TensorArena::Create(Tensors({COHORT_DEVICE_CUDA, 0}), memory);
  if (!arena.ok()) return arena.status();
  side.arena = *std::move(arena);
  NcclOptions nccl;
  nccl.prefix = prefix;
  nccl.stream = side.device->communication_stream();
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend = CreateNcclBackend(0, 1, store, nccl);
  if (!backend.ok()) return backend.status();
  side.backend = *std::move(backend);
  ExchangeOptions options = Options(compression, shards);
  options.device = side.device.get();
  absl::StatusOr<std::unique_ptr<GradientExchange>> exchange =
      GradientExchange::Create(*side.arena, *side.backend, options);
  if (!exchange.ok()) return exchange.status();
  side.exchange = *std::move(exchange);
  return absl::OkStatus();
}

// One exchanged batch: every gradient set for `step`, reported last tensor first, scaled by 1/2.
absl::Status Step(Side& side, uint32_t step, bool on_device) {
  TensorArena& arena = *side.arena;
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    std::vector<float> values(arena.spec(t).element_count);
    for (uint64_t i = 0; i < values.size(); ++i) values[i] = GradientValue(t, i, step);
    if (on_device) {
      if (cudaMemcpy(arena.grad(t), values.data(), values.size() * sizeof(float),
                     cudaMemcpyHostToDevice) != cudaSuccess) {
        return absl::InternalError("uploading gradients");
      }
    } else {
      std::memcpy(arena.grad(t), values.data(), values.size() * sizeof(float));
    }
  }
  side.exchange->Begin(0.5, step);
  for (size_t t = arena.tensor_count(); t-- > 0;) {
    side.exchange->OnGradientsReady(static_cast<uint32_t>(t), 0, arena.spec(t).element_count);
  }
  return side.exchange->Finish();
}

std::vector<float> Gradients(const TensorArena& arena, size_t t, bool on_device) {
  std::vector<float> values(arena.spec(t).element_count);
  if (on_device) {
    EXPECT_EQ(cudaMemcpy(values.data(), arena.grad(t), values.size() * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
  } else {
    std::memcpy(values.data(), arena.grad(t), values.size() * sizeof(float));
  }
  return values;
}

struct Form {
  const char* name;
  CompressionOptions compression;
  bool bitwise;
  bool shards = false;  // ZeRO stage 2's reducer
};

Form MakeForm(const char* name, CompressionOptions::Kind kind, bool bitwise, bool shards = false) {
  Form form{name, {}, bitwise, shards};
  form.compression.kind = kind;
  form.compression.topk_ratio = 0.1;
  form.compression.powersgd_rank = 2;
  form.compression.powersgd_start_iter = 1;
  return form;
}

class CudaExchangeTest : public ::testing::TestWithParam<Form> {};

TEST_P(CudaExchangeTest, MatchesTheHostExchangeStepByStep) {
  const Form& form = GetParam();
  DefaultMemoryProvider memory;
  InMemoryRendezvousStore store;
  Side host;
  Side device;
  ASSERT_TRUE(MakeHost(host, form.compression, memory, store, form.shards).ok());
  absl::Status made = MakeDevice(device, form.compression, memory, store, "device", form.shards);
  ASSERT_TRUE(made.ok()) << made;
  ASSERT_EQ(host.exchange->plan().size(), device.exchange->plan().size());
  ASSERT_GT(host.exchange->plan().size(), 2u);

  for (uint32_t step = 0; step < 6; ++step) {
    ASSERT_TRUE(Step(host, step, false).ok());
    absl::Status status = Step(device, step, true);
    ASSERT_TRUE(status.ok()) << status;
    for (size_t t = 0; t < host.arena->tensor_count(); ++t) {
      const std::vector<float> want = Gradients(*host.arena, t, false);
      const std::vector<float> got = Gradients(*device.arena, t, true);
      float largest = 0;
      for (float v : want) largest = std::max(largest, std::abs(v));
      for (size_t i = 0; i < want.size(); ++i) {
        if (form.bitwise) {
          uint32_t want_bits = 0;
          uint32_t got_bits = 0;
          std::memcpy(&want_bits, &want[i], 4);
          std::memcpy(&got_bits, &got[i], 4);
          ASSERT_EQ(got_bits, want_bits)
              << form.name << " step " << step << " tensor " << t << " element " << i << ": "
              << got[i] << " on the device, " << want[i] << " on the host";
        } else {
          ASSERT_NEAR(got[i], want[i], 1e-4f * largest)
              << form.name << " step " << step << " tensor " << t << " element " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryCompression, CudaExchangeTest,
    ::testing::Values(MakeForm("none", CompressionOptions::kNone, true),
                      MakeForm("fp16", CompressionOptions::kFp16, true),
                      MakeForm("bf16", CompressionOptions::kBf16, true),
                      MakeForm("topk", CompressionOptions::kTopK, true),
                      MakeForm("powersgd", CompressionOptions::kPowerSgd, false),
                      MakeForm("zero_stage_2", CompressionOptions::kNone, true, true)),
    [](const ::testing::TestParamInfo<Form>& info) { return std::string(info.param.name); });

// A checkpoint keeps the device reducers' state: an exchange restored from what another saved
// after 3 steps goes on bit for bit as the other does; top-k's state is the host's, byte for byte.
TEST(CudaExchangeStateTest, SavedCompressionStateContinuesBitForBit) {
  for (const Form& form : {MakeForm("topk", CompressionOptions::kTopK, true),
                           MakeForm("powersgd", CompressionOptions::kPowerSgd, false)}) {
    SCOPED_TRACE(form.name);
    DefaultMemoryProvider memory;
    InMemoryRendezvousStore store;
    Side host;
    Side going_on;
    Side restored;
    ASSERT_TRUE(MakeHost(host, form.compression, memory, store).ok());
    ASSERT_TRUE(MakeDevice(going_on, form.compression, memory, store, "going-on").ok());
    ASSERT_TRUE(MakeDevice(restored, form.compression, memory, store, "restored").ok());
    for (uint32_t step = 0; step < 3; ++step) {
      ASSERT_TRUE(Step(host, step, false).ok());
      ASSERT_TRUE(Step(going_on, step, true).ok());
    }
    absl::StatusOr<std::string> state = going_on.exchange->SaveCompressionState();
    ASSERT_TRUE(state.ok()) << state.status();
    ASSERT_FALSE(state->empty());
    if (form.bitwise) {
      absl::StatusOr<std::string> host_state = host.exchange->SaveCompressionState();
      ASSERT_TRUE(host_state.ok());
      EXPECT_EQ(*state, *host_state);
    }
    absl::Status taken = restored.exchange->RestoreCompressionState(*state);
    ASSERT_TRUE(taken.ok()) << taken;
    for (uint32_t step = 3; step < 6; ++step) {
      ASSERT_TRUE(Step(going_on, step, true).ok());
      ASSERT_TRUE(Step(restored, step, true).ok());
      for (size_t t = 0; t < going_on.arena->tensor_count(); ++t) {
        const std::vector<float> want = Gradients(*going_on.arena, t, true);
        const std::vector<float> got = Gradients(*restored.arena, t, true);
        ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
            << "step " << step << " tensor " << t;
      }
    }
  }
}

// The module's value reader: values noted from device memory are copied when EnqueueCopies comes
// (more than one launch's worth, both dtypes), so the sources may change afterwards; TakeAll gives
// them back by ticket, and tickets restart after it. The module's gradient ops: division as the
// host does it, and the non-finite flag.
TEST(CudaExchangeDeviceWorkTest, ValueReaderAndGradientOps) {
  absl::StatusOr<std::unique_ptr<DeviceExchange>> cuda = OpenCudaExchange(0);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  auto stream = static_cast<cudaStream_t>((*cuda)->compute_stream());
  constexpr int kValues = 37;
  void* double_memory = nullptr;
  void* float_memory = nullptr;
  ASSERT_EQ(cudaMalloc(&double_memory, kValues * sizeof(double)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&float_memory, kValues * sizeof(float)), cudaSuccess);
  auto* doubles = static_cast<double*>(double_memory);
  auto* floats = static_cast<float*>(float_memory);
  std::vector<double> want_doubles(kValues);
  std::vector<float> want_floats(kValues);
  for (int i = 0; i < kValues; ++i) {
    want_doubles[i] = 0.1 * i - 1.7;
    want_floats[i] = 0.25f * static_cast<float>(i) + 3.0f;
  }
  ASSERT_EQ(
      cudaMemcpy(doubles, want_doubles.data(), kValues * sizeof(double), cudaMemcpyHostToDevice),
      cudaSuccess);
  ASSERT_EQ(cudaMemcpy(floats, want_floats.data(), kValues * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  DeviceValueReader& reader = (*cuda)->value_reader();
  for (int i = 0; i < kValues; ++i) {
    absl::StatusOr<uint32_t> d = reader.Capture(doubles + i, COHORT_DTYPE_FLOAT64);
    absl::StatusOr<uint32_t> f = reader.Capture(floats + i, COHORT_DTYPE_FLOAT32);
    ASSERT_TRUE(d.ok() && f.ok());
    EXPECT_EQ(*d, static_cast<uint32_t>(2 * i));
    EXPECT_EQ(*f, static_cast<uint32_t>(2 * i + 1));
  }
  ASSERT_TRUE(reader.EnqueueCopies().ok());
  ASSERT_EQ(cudaMemsetAsync(doubles, 0, kValues * sizeof(double), stream), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(floats, 0, kValues * sizeof(float), stream), cudaSuccess);
  absl::StatusOr<std::vector<double>> values = reader.TakeAll();
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_EQ(values->size(), 2u * kValues);
  for (int i = 0; i < kValues; ++i) {
    EXPECT_EQ((*values)[2 * i], want_doubles[i]);
    EXPECT_EQ((*values)[2 * i + 1], static_cast<double>(want_floats[i]));
  }
  absl::StatusOr<uint32_t> again = reader.Capture(doubles, COHORT_DTYPE_FLOAT64);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0u);
  values = reader.TakeAll();  // enqueues what is still noted
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, std::vector<double>{0.0});

  DeviceGradientOps& ops = (*cuda)->gradient_ops();
  ASSERT_EQ(cudaMemcpy(floats, want_floats.data(), kValues * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_TRUE(ops.Divide(floats, COHORT_DTYPE_FLOAT32, kValues, 6).ok());
  ASSERT_TRUE(ops.CheckFinite(floats, COHORT_DTYPE_FLOAT32, kValues).ok());
  absl::StatusOr<bool> bad = ops.TakeNonFinite();
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(*bad);
  std::vector<float> divided(kValues);
  ASSERT_EQ(cudaMemcpy(divided.data(), floats, kValues * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (int i = 0; i < kValues; ++i) EXPECT_EQ(divided[i], want_floats[i] * (1.0f / 6.0f));
  const float infinity = INFINITY;
  ASSERT_EQ(cudaMemcpy(floats + 5, &infinity, sizeof infinity, cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_TRUE(ops.CheckFinite(floats, COHORT_DTYPE_FLOAT32, kValues).ok());
  bad = ops.TakeNonFinite();
  ASSERT_TRUE(bad.ok());
  EXPECT_TRUE(*bad);
  bad = ops.TakeNonFinite();  // taken: cleared
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(*bad);
  EXPECT_TRUE(absl::IsInvalidArgument(ops.Divide(floats, COHORT_DTYPE_FLOAT16, 4, 2)));
  cudaFree(doubles);
  cudaFree(floats);
}

TEST(CudaExchangeRefusalTest, DeviceGradientsNeedTheirDeviceExchange) {
  DefaultMemoryProvider memory;
  InMemoryRendezvousStore store;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      TensorArena::Create(Tensors({COHORT_DEVICE_CUDA, 0}), memory);
  ASSERT_TRUE(arena.ok());
  NcclOptions nccl;
  nccl.prefix = "refusal";
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend = CreateNcclBackend(0, 1, store, nccl);
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<GradientExchange>> exchange =
      GradientExchange::Create(**arena, **backend, Options({}));
  EXPECT_TRUE(absl::IsFailedPrecondition(exchange.status())) << exchange.status();
  EXPECT_NE(std::string(exchange.status().message()).find("cuda:0"), std::string::npos)
      << exchange.status();
}

}  // namespace
}  // namespace cohort
