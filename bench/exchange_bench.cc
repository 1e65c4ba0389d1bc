// GradientExchange against the bare collectives it is built from. Two ranks run as two threads of
// this one process, each with its own arena and its own Gloo backend, the group joined over
// loopback TCP (127.0.0.1) through an InMemoryRendezvousStore: the bytes cross the kernel's
// loopback, not a network, and both ranks share this machine's cores.
//
//   exchange_64mib_bandwidth     16 float32 tensors of 4 MiB (64 MiB) exchanged through
//                                GradientExchange with its default buckets: Begin(0.5), every
//                                tensor reported ready in reverse registration order, Finish.
//                                Peer raw_gloo_allreduce: one AllreduceSum of the same 64 MiB
//                                block through the same backend.
//   bucketed_200x40kib_rate      200 float32 tensors of 40 KiB exchanged the same way with the
//                                default buckets (a 1 MiB first bucket, 64 MiB after it). Peer
//                                allreduce_per_gradient: 200 AllreduceSum calls, one per tensor,
//                                in the same reverse order.
//
// A side's time is wall time from just after a Barrier to its last call's return, the slower
// rank's; the gradients are refilled (untimed) before every call, and after it the first and last
// element of every tensor must hold the exact average (exchange) or sum (peer), or the bench
// fails. Both sides take turns in alternating order for ROUNDS rounds after one untimed round;
// medians over the rounds are reported.
//
//   exchange_bench [ROUNDS=15]
//
// Prints JSON lines {"name", "value", "unit", "peer", "peer_value", "ratio"}:
//   exchange_64mib_bandwidth     value and peer_value in GB/s (64 MiB over the median time),
//                                ratio = value / peer_value: the exchange's share of the raw
//                                allreduce's bandwidth.
//   bucketed_200x40kib_rate      value and peer_value in exchanges per second, ratio =
//                                value / peer_value: how many times faster the bucketed exchange
//                                is than one allreduce per gradient.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "runtime/arena/device_memory.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/collective/rendezvous_store.h"
#include "runtime/exchange/gradient_exchange.h"

namespace {

constexpr uint32_t kRanks = 2;
constexpr double kScale = 1.0 / kRanks;  // the exchange averages
// Each rank's gradient elements start at rank + 1, so a summed element holds 1 + 2 + ... + kRanks.
constexpr float kSumOfRanks = kRanks * (kRanks + 1) / 2.0f;

// A workload: `tensors` float32 tensors of `tensor_bytes` each.
struct Workload {
  size_t tensors;
  uint64_t tensor_bytes;
  uint64_t total_bytes() const { return tensors * tensor_bytes; }
};
constexpr Workload kBandwidth{16, uint64_t{4} << 20};
constexpr Workload kBucketed{200, uint64_t{40} << 10};

// Wall seconds of each timed round on one rank, per side.
struct SideSeconds {
  std::vector<double> exchange, peer;
};
struct RankSeconds {
  SideSeconds bandwidth, bucketed;
};

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

absl::StatusOr<std::unique_ptr<cohort::TensorArena>> MakeArena(
    const Workload& workload, cohort::DeviceMemoryProvider& memory) {
  std::vector<cohort::TensorDescriptor> specs;
  for (size_t t = 0; t < workload.tensors; ++t) {
    specs.push_back({absl::StrCat("grad", t),
                     COHORT_DTYPE_FLOAT32,
                     {COHORT_DEVICE_CPU, 0},
                     workload.tensor_bytes / sizeof(float)});
  }
  return cohort::TensorArena::Create(std::move(specs), memory);
}

void FillGradients(const cohort::TensorArena& arena, float value) {
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    float* grad = static_cast<float*>(arena.grad(t));
    std::fill_n(grad, arena.spec(t).element_count, value);
  }
}

// OK when the first and last element of every tensor's gradient equal `expected`.
absl::Status CheckGradients(const cohort::TensorArena& arena, float expected, const char* side) {
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    const float* grad = static_cast<const float*>(arena.grad(t));
    const uint64_t last = arena.spec(t).element_count - 1;
    if (grad[0] != expected || grad[last] != expected) {
      return absl::InternalError(absl::StrCat(side, ": tensor ", t, " holds ", grad[0], " .. ",
                                              grad[last], ", expected ", expected));
    }
  }
  return absl::OkStatus();
}

// One way of summing the arena's gradients over the group, and the value every element then holds.
struct Side {
  const char* name;
  std::function<absl::Status()> run;
  float expected;
};

// Runs one untimed round, then `rounds` timed rounds of both sides in alternating order; appends
// this rank's seconds per round. Every rank makes the same calls in the same order.
absl::Status MeasureRounds(uint32_t rank, int rounds, cohort::CollectiveBackend& backend,
                           const cohort::TensorArena& arena, const Side& exchange, const Side& peer,
                           SideSeconds& seconds) {
  const Side* sides[] = {&exchange, &peer};
  for (int round = -1; round < rounds; ++round) {
    for (int k = 0; k < 2; ++k) {
      const bool is_exchange = (round + 2 + k) % 2 == 0;
      const Side& side = *sides[is_exchange ? 0 : 1];
      FillGradients(arena, static_cast<float>(rank + 1));
      if (absl::Status s = backend.Barrier(); !s.ok()) return s;
      const double start = WallSeconds();
      if (absl::Status s = side.run(); !s.ok()) return s;
      const double elapsed = WallSeconds() - start;
      if (absl::Status s = CheckGradients(arena, side.expected, side.name); !s.ok()) return s;
      if (round >= 0) (is_exchange ? seconds.exchange : seconds.peer).push_back(elapsed);
    }
  }
  return absl::OkStatus();
}

// The exchange of one batch whose backward pass finishes the tensors in reverse order.
Side ExchangeSide(cohort::GradientExchange& exchange, const cohort::TensorArena& arena) {
  return {"exchange",
          [&exchange, &arena] {
            exchange.Begin(kScale, /*step=*/0);
            for (size_t t = arena.tensor_count(); t-- > 0;) {
              exchange.OnGradientsReady(static_cast<uint32_t>(t), 0, arena.spec(t).element_count);
            }
            return exchange.Finish();
          },
          static_cast<float>(kSumOfRanks * kScale)};
}

// Measures one workload on this rank: the exchange against `peer_name`, which `make_peer_run`
// builds over the arena.
absl::Status MeasureWorkload(
    uint32_t rank, int rounds, cohort::CollectiveBackend& backend, const Workload& workload,
    const char* peer_name,
    const std::function<std::function<absl::Status()>(const cohort::TensorArena&)>& make_peer_run,
    SideSeconds& seconds) {
  cohort::CpuOnlyMemoryProvider memory;
  absl::StatusOr<std::unique_ptr<cohort::TensorArena>> arena = MakeArena(workload, memory);
  if (!arena.ok()) return arena.status();
  absl::StatusOr<std::unique_ptr<cohort::GradientExchange>> exchange =
      cohort::GradientExchange::Create(**arena, backend, cohort::ExchangeOptions{});
  if (!exchange.ok()) return exchange.status();
  const Side peer{peer_name, make_peer_run(**arena), kSumOfRanks};
  return MeasureRounds(rank, rounds, backend, **arena, ExchangeSide(**exchange, **arena), peer,
                       seconds);
}

// Everything one rank does. The backend is shared by the exchange and the peers, one at a time:
// each exchange has finished (and its thread is idle) before a peer's call.
absl::Status RunRank(uint32_t rank, int rounds, cohort::RendezvousStore& store,
                     RankSeconds& seconds) {
  cohort::GlooOptions gloo;
  gloo.timeout = std::chrono::seconds(60);
  gloo.prefix = "exchange-bench";
  absl::StatusOr<std::unique_ptr<cohort::CollectiveBackend>> joined =
      cohort::CreateGlooBackend(rank, kRanks, store, gloo);
  if (!joined.ok()) return joined.status();
  cohort::CollectiveBackend& backend = **joined;

  auto one_allreduce = [&backend](const cohort::TensorArena& arena) {
    return std::function<absl::Status()>([&backend, &arena] {
      const cohort::ArenaBlock& block = arena.blocks().front();
      return backend.AllreduceSum(block.grad, block.element_count, COHORT_DTYPE_FLOAT32);
    });
  };
  if (absl::Status s = MeasureWorkload(rank, rounds, backend, kBandwidth, "raw_gloo_allreduce",
                                       one_allreduce, seconds.bandwidth);
      !s.ok()) {
    return s;
  }

  auto allreduce_per_gradient = [&backend](const cohort::TensorArena& arena) {
    return std::function<absl::Status()>([&backend, &arena]() -> absl::Status {
      for (size_t t = arena.tensor_count(); t-- > 0;) {
        if (absl::Status s = backend.AllreduceSum(arena.grad(t), arena.spec(t).element_count,
                                                  COHORT_DTYPE_FLOAT32);
            !s.ok()) {
          return s;
        }
      }
      return absl::OkStatus();
    });
  };
  return MeasureWorkload(rank, rounds, backend, kBucketed, "allreduce_per_gradient",
                         allreduce_per_gradient, seconds.bucketed);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Median over rounds of the slower rank's seconds, for the exchange and the peer.
std::pair<double, double> MedianSeconds(const std::vector<RankSeconds>& ranks,
                                        SideSeconds RankSeconds::*workload) {
  std::vector<double> exchange, peer;
  const size_t rounds = (ranks.front().*workload).exchange.size();
  for (size_t r = 0; r < rounds; ++r) {
    double slowest_exchange = 0, slowest_peer = 0;
    for (const RankSeconds& rank : ranks) {
      slowest_exchange = std::max(slowest_exchange, (rank.*workload).exchange[r]);
      slowest_peer = std::max(slowest_peer, (rank.*workload).peer[r]);
    }
    exchange.push_back(slowest_exchange);
    peer.push_back(slowest_peer);
  }
  return {Median(std::move(exchange)), Median(std::move(peer))};
}

void Report(const char* name, double value, const char* unit, const char* peer, double peer_value,
            double ratio) {
  std::printf(
      "{\"name\": \"%s\", \"value\": %.3f, \"unit\": \"%s\", \"peer\": \"%s\", "
      "\"peer_value\": %.3f, \"ratio\": %.4f}\n",
      name, value, unit, peer, peer_value, ratio);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  if (argc > 2 || rounds < 1) {
    std::fprintf(stderr, "usage: %s [ROUNDS >= 1]\n", argv[0]);
    return 2;
  }

  cohort::InMemoryRendezvousStore store;
  std::vector<RankSeconds> seconds(kRanks);
  std::vector<absl::Status> results(kRanks);
  std::vector<std::thread> threads;
  for (uint32_t rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back(
        [&, rank] { results[rank] = RunRank(rank, rounds, store, seconds[rank]); });
  }
  for (std::thread& thread : threads) thread.join();
  bool failed = false;
  for (uint32_t rank = 0; rank < kRanks; ++rank) {
    if (results[rank].ok()) continue;
    std::fprintf(stderr, "exchange_bench: rank %u: %s\n", rank, results[rank].ToString().c_str());
    failed = true;
  }
  if (failed) return 1;

  const auto [bandwidth_exchange, bandwidth_raw] = MedianSeconds(seconds, &RankSeconds::bandwidth);
  const double bytes = static_cast<double>(kBandwidth.total_bytes());
  const double exchange_gbps = bytes / bandwidth_exchange / 1e9;
  const double raw_gbps = bytes / bandwidth_raw / 1e9;
  Report("exchange_64mib_bandwidth", exchange_gbps, "GB/s", "raw_gloo_allreduce", raw_gbps,
         exchange_gbps / raw_gbps);

  const auto [bucketed_exchange, per_gradient] = MedianSeconds(seconds, &RankSeconds::bucketed);
  Report("bucketed_200x40kib_rate", 1 / bucketed_exchange, "exchanges/s", "allreduce_per_gradient",
         1 / per_gradient, per_gradient / bucketed_exchange);
  return 0;
}
