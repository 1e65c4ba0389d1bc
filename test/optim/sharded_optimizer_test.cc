// Sharded optimizers (ZeRO): `size` optimizers, one per rank, each stepping its shard of the same
// arena, then every shard's parameters copied into every rank's arena (what the trial's broadcast
// does), train bitwise as one whole optimizer; the shares they save assemble into the whole
// optimizer's bytes; a whole state loads into any shard, so a checkpoint re-shards onto another
// rank count. The same for the device optimizer's shards (DeviceArenaOptimizer on host memory
// posing as a GPU, with the CPU rules as its kernels).
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/arena/arena_shard.h"
#include "runtime/arena/staged_host_copies.h"
#include "runtime/optim/optimizer.h"
#include "test/common/host_memory_as_device.h"
#include "test/optim/optim_test_util.h"

namespace cohort::sharded_optimizer_test {
namespace {

using optim_test::CpuTensor;
using optim_test::HostRuleKernels;
using optim_test::MakeArena;

TEST(ShardRangeTest, CutsABlockIntoAlignedRangesThatCoverIt) {
  EXPECT_EQ(ShardChunk(1000, 4), 256u);
  EXPECT_EQ(ShardRange(1000, {0, 4}).begin, 0u);
  EXPECT_EQ(ShardRange(1000, {1, 4}).begin, 256u);
  EXPECT_EQ(ShardRange(1000, {1, 4}).end, 512u);
  EXPECT_EQ(ShardRange(1000, {3, 4}).end, 1000u);
  EXPECT_EQ(ShardRange(1000, {3, 4}).count(), 232u);
  // Fewer elements than ranks times the alignment: the last ranks own nothing.
  EXPECT_EQ(ShardRange(20, {0, 4}).count(), 16u);
  EXPECT_EQ(ShardRange(20, {1, 4}).count(), 4u);
  EXPECT_EQ(ShardRange(20, {2, 4}).count(), 0u);
  EXPECT_EQ(ShardRange(20, {3, 4}).count(), 0u);
  EXPECT_EQ(ShardRange(20, {}).count(), 20u);
  for (uint32_t size : {1u, 2u, 3u, 4u, 7u}) {
    uint64_t next = 0;
    for (uint32_t rank = 0; rank < size; ++rank) {
      const ElementRange range = ShardRange(12345, {rank, size});
      EXPECT_EQ(range.begin, next) << rank << " of " << size;
      next = range.end;
    }
    EXPECT_EQ(next, 12345u) << size;
  }
}

// One rank's arena and optimizer; on a device, host memory posing as cuda:0 and the CPU rules
// run there (DeviceArenaOptimizer), whose pointers the tests read directly.
struct Replica {
  std::unique_ptr<testing::HostMemoryAsDevice> memory;
  std::unique_ptr<HostRuleKernels> kernels;
  std::unique_ptr<TensorArena> arena;
  std::unique_ptr<Optimizer> optimizer;
};

// Two tensors of float32 (one block, alignment gaps included) and one of float64 (another).
std::vector<TensorDescriptor> Specs(bool on_device) {
  std::vector<TensorDescriptor> specs = {CpuTensor("a", 1001, COHORT_DTYPE_FLOAT32),
                                         CpuTensor("b", 37, COHORT_DTYPE_FLOAT32),
                                         CpuTensor("c", 523, COHORT_DTYPE_FLOAT64)};
  if (on_device) {
    for (TensorDescriptor& spec : specs) spec.device = {COHORT_DEVICE_CUDA, 0};
  }
  return specs;
}

// Deterministic values that differ per step and element.
double Value(uint64_t step, uint64_t element, double scale) {
  return scale * (static_cast<double>((element * 7919 + step * 104729) % 2003) / 1001.0 - 1.0);
}

void SetGradients(TensorArena& arena, uint64_t step) {
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    for (uint64_t i = 0; i < arena.spec(t).element_count; ++i) {
      if (arena.spec(t).dtype == COHORT_DTYPE_FLOAT64) {
        static_cast<double*>(arena.grad(t))[i] = Value(step, i + t * 3001, 0.5);
      } else {
        static_cast<float*>(arena.grad(t))[i] = static_cast<float>(Value(step, i + t * 3001, 0.5));
      }
    }
  }
}

void SetParameters(TensorArena& arena) {
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    for (uint64_t i = 0; i < arena.spec(t).element_count; ++i) {
      if (arena.spec(t).dtype == COHORT_DTYPE_FLOAT64) {
        static_cast<double*>(arena.data(t))[i] = Value(0, i + t * 17, 2.0);
      } else {
        static_cast<float*>(arena.data(t))[i] = static_cast<float>(Value(0, i + t * 17, 2.0));
      }
    }
  }
}

std::string Parameters(const TensorArena& arena) {
  std::string bytes;
  for (const ArenaBlock& block : arena.blocks()) {
    bytes.append(static_cast<const char*>(block.data), block.element_count * block.element_size);
  }
  return bytes;
}

void SetParametersTo(TensorArena& arena, const std::string& parameters) {
  size_t offset = 0;
  for (const ArenaBlock& block : arena.blocks()) {
    std::memcpy(block.data, parameters.data() + offset, block.element_count * block.element_size);
    offset += block.element_count * block.element_size;
  }
}

Replica MakeReplica(const OptimizerOptions& options, ArenaShard shard, bool on_device = false) {
  Replica replica;
  if (on_device) {
    replica.memory = std::make_unique<testing::HostMemoryAsDevice>();
    replica.kernels = std::make_unique<HostRuleKernels>();
    absl::StatusOr<std::unique_ptr<TensorArena>> arena =
        TensorArena::Create(Specs(true), *replica.memory);
    EXPECT_TRUE(arena.ok()) << arena.status();
    if (arena.ok()) replica.arena = *std::move(arena);
  } else {
    replica.arena = MakeArena(Specs(false));
  }
  EXPECT_NE(replica.arena, nullptr);
  SetParameters(*replica.arena);
  absl::StatusOr<std::unique_ptr<Optimizer>> optimizer =
      Optimizer::Create(options, *replica.arena, replica.kernels.get(), shard);
  EXPECT_TRUE(optimizer.ok()) << optimizer.status();
  if (optimizer.ok()) replica.optimizer = *std::move(optimizer);
  return replica;
}

// Every rank's shard of each block copied into every other rank's arena.
void ShareParameters(std::vector<Replica>& ranks) {
  const uint32_t size = static_cast<uint32_t>(ranks.size());
  for (uint32_t owner = 0; owner < size; ++owner) {
    for (size_t b = 0; b < ranks[owner].arena->blocks().size(); ++b) {
      const ArenaBlock& from = ranks[owner].arena->blocks()[b];
      const ElementRange range = ShardRange(from.element_count, {owner, size});
      for (uint32_t to = 0; to < size; ++to) {
        if (to == owner) continue;
        const ArenaBlock& into = ranks[to].arena->blocks()[b];
        std::memcpy(static_cast<char*>(into.data) + range.begin * into.element_size,
                    static_cast<const char*>(from.data) + range.begin * from.element_size,
                    range.count() * from.element_size);
      }
    }
  }
}

void StepAll(std::vector<Replica>& ranks, uint64_t step) {
  for (Replica& rank : ranks) {
    SetGradients(*rank.arena, step);
    ASSERT_TRUE(rank.optimizer->Step().ok());
  }
  ShareParameters(ranks);
}

// What the ranks' parts in saving the whole state (`save(rank, move, out)`, as
// Optimizer::SaveWholeStateInto) assemble on rank 0, played in one thread: each other rank first
// runs its part with a mover that keeps the pieces it sends (in call order, the same on every
// rank), then rank 0's mover puts each rank's piece of the call in its slot, as a gather onto
// rank 0 would.
using SavePart =
    std::function<absl::Status(uint32_t rank, const OptimizerState::PieceMover&, std::string*)>;
std::string AssembleWhole(uint32_t size, const SavePart& save) {
  std::vector<std::vector<std::string>> sent(size);
  for (uint32_t rank = 1; rank < size; ++rank) {
    const absl::Status played = save(
        rank,
        [&](const void* piece, uint64_t bytes, void* slots) {
          if (slots != nullptr) return absl::InternalError("slots off rank 0");
          sent[rank].emplace_back(static_cast<const char*>(piece), bytes);
          return absl::OkStatus();
        },
        nullptr);
    EXPECT_TRUE(played.ok()) << played;
  }
  size_t call = 0;
  std::string whole;
  const absl::Status status = save(
      0,
      [&](const void* piece, uint64_t bytes, void* slots) {
        if (piece != slots) return absl::InternalError("rank 0's piece is not in its slot");
        for (uint32_t rank = 1; rank < size; ++rank) {
          const std::string& from = sent[rank].at(call);
          if (from.size() != bytes) return absl::InternalError("pieces of different sizes");
          std::memcpy(static_cast<char*>(slots) + rank * bytes, from.data(), bytes);
        }
        ++call;
        return absl::OkStatus();
      },
      &whole);
  EXPECT_TRUE(status.ok()) << status;
  return whole;
}

// The whole state the ranks' optimizers hold now.
std::string WholeState(const std::vector<Replica>& ranks) {
  return AssembleWhole(
      static_cast<uint32_t>(ranks.size()),
      [&](uint32_t rank, const OptimizerState::PieceMover& move, std::string* out) {
        return ranks[rank].optimizer->SaveWholeStateInto(move, out, true);
      });
}

// The whole state the ranks' copies of their shards (CopyShardStateInto) hold.
std::string WholeStateOf(const std::vector<std::optional<OptimizerState>>& copies) {
  return AssembleWhole(
      static_cast<uint32_t>(copies.size()),
      [&](uint32_t rank, const OptimizerState::PieceMover& move, std::string* out) {
        return copies[rank]->GatherWholeInto(move, out, true);
      });
}

struct Case {
  const char* name;
  OptimizerOptions options;
};

class ShardedOptimizerTest : public ::testing::TestWithParam<Case> {};

TEST_P(ShardedOptimizerTest, TrainsBitwiseAsTheWholeOptimizerAndSavesItsBytes) {
  const OptimizerOptions& options = GetParam().options;
  Replica whole = MakeReplica(options, {});
  for (uint64_t step = 1; step <= 5; ++step) {
    SetGradients(*whole.arena, step);
    ASSERT_TRUE(whole.optimizer->Step().ok());
  }
  // Shards of the CPU optimizer, and of the device optimizer (the same rules on "device" memory).
  for (const auto& [size, on_device] : std::vector<std::pair<uint32_t, bool>>{
           {2u, false}, {3u, false}, {4u, false}, {2u, true}, {3u, true}}) {
    SCOPED_TRACE(on_device ? "device optimizer" : "cpu optimizer");
    std::vector<Replica> ranks;
    for (uint32_t rank = 0; rank < size; ++rank)
      ranks.push_back(MakeReplica(options, {rank, size}, on_device));
    for (uint64_t step = 1; step <= 5; ++step) StepAll(ranks, step);
    for (uint32_t rank = 0; rank < size; ++rank) {
      EXPECT_EQ(Parameters(*ranks[rank].arena), Parameters(*whole.arena))
          << "rank " << rank << " of " << size;
    }
    EXPECT_EQ(ranks[0].optimizer->SaveState(), "") << "a shard has no whole state of its own";
    // Each shard keeps its share of the whole optimizer's state, give or take the 16-element
    // rounding of each block's range.
    for (const Replica& rank : ranks) {
      EXPECT_LE(rank.optimizer->state_bytes(),
                whole.optimizer->state_bytes() / size + 2 * 2 * 16 * sizeof(double));
      EXPECT_GE(rank.optimizer->state_bytes() + 2 * 2 * 16 * sizeof(double),
                whole.optimizer->state_bytes() / size);
    }
    EXPECT_EQ(WholeState(ranks), whole.optimizer->SaveState()) << size << " shares";
  }
}

TEST_P(ShardedOptimizerTest, AWholeStateReshardsOntoAnotherRankCountAndTrainsOnBitwise) {
  const OptimizerOptions& options = GetParam().options;
  // Three steps on 2 shards, saved whole, then two more on 3 shards (and on a whole optimizer).
  std::vector<Replica> two;
  for (uint32_t rank = 0; rank < 2; ++rank) two.push_back(MakeReplica(options, {rank, 2}));
  for (uint64_t step = 1; step <= 3; ++step) StepAll(two, step);
  const std::string saved = WholeState(two);
  const std::string parameters = Parameters(*two[0].arena);

  const auto restore = [&](Replica& replica) {
    SetParametersTo(*replica.arena, parameters);
    const absl::Status loaded = replica.optimizer->LoadState(saved);
    ASSERT_TRUE(loaded.ok()) << loaded;
  };
  Replica whole = MakeReplica(options, {});
  restore(whole);
  // Onto 3 CPU shards, and onto 3 device shards (a checkpoint moves from CPU slots to GPUs).
  std::vector<Replica> three, three_on_device;
  for (uint32_t rank = 0; rank < 3; ++rank) {
    three.push_back(MakeReplica(options, {rank, 3}));
    restore(three.back());
    three_on_device.push_back(MakeReplica(options, {rank, 3}, /*on_device=*/true));
    restore(three_on_device.back());
  }
  for (uint64_t step = 4; step <= 5; ++step) {
    SetGradients(*whole.arena, step);
    ASSERT_TRUE(whole.optimizer->Step().ok());
    StepAll(three, step);
    StepAll(three_on_device, step);
    StepAll(two, step);
  }
  for (const Replica& rank : three) EXPECT_EQ(Parameters(*rank.arena), Parameters(*whole.arena));
  for (const Replica& rank : three_on_device) {
    EXPECT_EQ(Parameters(*rank.arena), Parameters(*whole.arena)) << "on the device";
  }
  EXPECT_EQ(Parameters(*two[1].arena), Parameters(*whole.arena));
  EXPECT_EQ(WholeState(three), whole.optimizer->SaveState());
  EXPECT_EQ(WholeState(three_on_device), whole.optimizer->SaveState()) << "on the device";
}

// A checkpoint gathered in the background: the whole state rank 0 lays out at the step, and the
// other ranks' copies of their shards, assemble the whole state of when they were taken, however
// the optimizers step on (rank 0 receives the pieces along its live optimizer's layout); so do
// copies of every shard. A device's pieces are staged, and land before they travel.
TEST_P(ShardedOptimizerTest, CopiesOfTheShardsAssembleTheStateOfWhenTheyWereTaken) {
  const OptimizerOptions& options = GetParam().options;
  for (const bool on_device : {false, true}) {
    SCOPED_TRACE(on_device ? "device optimizer" : "cpu optimizer");
    Replica reference = MakeReplica(options, {});
    std::vector<Replica> ranks;
    for (uint32_t rank = 0; rank < 3; ++rank) {
      ranks.push_back(MakeReplica(options, {rank, 3}, on_device));
    }
    std::vector<std::optional<OptimizerState>> copies(ranks.size());
    StagedHostCopies staged;  // after the ranks: it gives their memory back first
    for (uint64_t step = 1; step <= 6; ++step) {
      StepAll(ranks, step);
      SetGradients(*reference.arena, step);
      ASSERT_TRUE(reference.optimizer->Step().ok());
      if (step % 3 != 0) continue;
      const std::string then = reference.optimizer->SaveState();
      for (size_t rank = 0; rank < ranks.size(); ++rank) {
        ASSERT_TRUE(ranks[rank]
                        .optimizer->CopyShardStateInto(copies[rank], on_device ? &staged : nullptr)
                        .ok());
      }
      std::string laid;
      ASSERT_TRUE(
          ranks[0].optimizer->LayOutWholeStateInto(laid, on_device ? &staged : nullptr).ok());
      const size_t buffers = options.kind != OptimizerOptions::Kind::kSgd ? 2
                             : options.momentum > 0                       ? 1
                                                                          : 0;
      // Each rank's copy of its shard, and rank 0's layout.
      EXPECT_EQ(staged.staged(), on_device ? 4 * buffers * ranks[0].arena->blocks().size() : 0u);
      const std::string parameters = Parameters(*ranks[0].arena);
      StepAll(ranks, step + 100);  // the trial trains on while the pieces travel
      staged.Land();
      EXPECT_EQ(WholeStateOf(copies), then) << "taken after step " << step;
      const std::string received = AssembleWhole(
          3, [&](uint32_t rank, const OptimizerState::PieceMover& move, std::string* out) {
            if (rank != 0) return copies[rank]->SendPieces(move);
            *out = laid;
            return ranks[0].optimizer->ReceiveWholeStateInto(move, *out, true);
          });
      EXPECT_EQ(received, then) << "laid out after step " << step;
      EXPECT_NE(WholeState(ranks), then);
      // Back to where the reference is, for the next round.
      for (Replica& rank : ranks) {
        SetParametersTo(*rank.arena, parameters);
        ASSERT_TRUE(rank.optimizer->LoadState(then).ok());
      }
    }
  }
}

OptimizerOptions Sgd(double momentum) {
  OptimizerOptions options;
  options.learning_rate = 0.05;
  options.momentum = momentum;
  options.weight_decay = 0.01;
  return options;
}

OptimizerOptions Adam() {
  OptimizerOptions options;
  options.kind = OptimizerOptions::Kind::kAdam;
  options.learning_rate = 0.01;
  return options;
}

INSTANTIATE_TEST_SUITE_P(Kinds, ShardedOptimizerTest,
                         ::testing::Values(Case{"sgd", Sgd(0)}, Case{"momentum", Sgd(0.9)},
                                           Case{"adam", Adam()}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ShardedOptimizerStateTest, AWholeOptimizerHasNoPiecesToGather) {
  Replica whole = MakeReplica(Adam(), {});
  std::string out;
  const absl::Status refused = whole.optimizer->SaveWholeStateInto(
      [](const void*, uint64_t, void*) { return absl::OkStatus(); }, &out, true);
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnimplemented) << refused;
  std::optional<OptimizerState> copy;
  EXPECT_EQ(whole.optimizer->CopyShardStateInto(copy, nullptr).code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(copy.has_value());
  EXPECT_EQ(whole.optimizer->LayOutWholeStateInto(out, nullptr).code(),
            absl::StatusCode::kUnimplemented);
  // Only the shard's rank 0 lays out the whole state.
  Replica other = MakeReplica(Adam(), {1, 2});
  EXPECT_EQ(other.optimizer->LayOutWholeStateInto(out, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
}

// The whole state is assembled on rank 0, whose pieces stay put: each other rank sends its
// pieces there, one gather for each buffer, and receives nothing.
TEST(ShardedOptimizerStateTest, EachOtherRankSendsOnlyItsOwnPieces) {
  Replica rank = MakeReplica(Adam(), {1, 3});
  std::vector<uint64_t> sent;
  const absl::Status played = rank.optimizer->SaveWholeStateInto(
      [&](const void* piece, uint64_t bytes, void* slots) {
        if (piece == nullptr || slots != nullptr) return absl::InternalError("not a send");
        sent.push_back(bytes);
        return absl::OkStatus();
      },
      nullptr, true);
  ASSERT_TRUE(played.ok()) << played;
  // For each of the 2 blocks, Adam's 2 buffers: 4 sends, a block's two the same size.
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[0], sent[1]);
  EXPECT_EQ(sent[2], sent[3]);
  std::string out;
  const absl::Status refused = rank.optimizer->SaveWholeStateInto(
      [](const void*, uint64_t, void*) { return absl::OkStatus(); }, &out, true);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
}

TEST(ShardedOptimizerStateTest, AFailedMoveIsTheError) {
  Replica rank = MakeReplica(Adam(), {1, 2});
  const absl::Status failed = rank.optimizer->SaveWholeStateInto(
      [](const void*, uint64_t, void*) { return absl::DeadlineExceededError("rank 0 is gone"); },
      nullptr, true);
  EXPECT_EQ(failed.code(), absl::StatusCode::kDeadlineExceeded) << failed;
}

}  // namespace
}  // namespace cohort::sharded_optimizer_test
