// SaveState/LoadState: a restored optimizer continues bitwise identically, and bytes that are
// truncated, corrupt, from another optimizer or from another arena layout are refused by name.
#include "runtime/optim/optimizer_state.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/optim/optimizer.h"
#include "test/optim/optim_test_util.h"

namespace cohort {
namespace {

using optim_test::CpuTensor;
using optim_test::MakeArena;
using ::testing::HasSubstr;

using Kind = OptimizerOptions::Kind;

OptimizerOptions StateOptions(Kind kind, double momentum = 0, bool nesterov = false,
                              double weight_decay = 0) {
  OptimizerOptions options;
  options.kind = kind;
  options.learning_rate = 0.01;
  options.momentum = momentum;
  options.nesterov = nesterov;
  options.weight_decay = weight_decay;
  return options;
}

std::vector<TensorDescriptor> StateMixedSpecs() {
  return {CpuTensor("w1", 7, COHORT_DTYPE_FLOAT32), CpuTensor("w2", 3, COHORT_DTYPE_FLOAT64),
          CpuTensor("b1", 20, COHORT_DTYPE_FLOAT32)};
}

// Deterministic, irregular values for element i of tensor t at a step (step -1: initial values).
double StateValue(size_t tensor, size_t i, int step) {
  return std::sin(0.5 + 1.3 * tensor + 0.37 * i + 2.1 * step);
}

void SetStateGradients(const TensorArena& arena, int step) {
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    void* where = step < 0 ? arena.data(t) : arena.grad(t);
    for (uint64_t i = 0; i < arena.spec(t).element_count; ++i) {
      if (arena.spec(t).dtype == COHORT_DTYPE_FLOAT64) {
        static_cast<double*>(where)[i] = StateValue(t, i, step);
      } else {
        static_cast<float*>(where)[i] = static_cast<float>(StateValue(t, i, step));
      }
    }
  }
}

void RunSteps(const TensorArena& arena, Optimizer& optimizer, int from, int to) {
  for (int step = from; step < to; ++step) {
    SetStateGradients(arena, step);
    ASSERT_TRUE(optimizer.Step().ok());
  }
}

void CopyParams(const TensorArena& from, const TensorArena& to) {
  for (size_t b = 0; b < from.blocks().size(); ++b) {
    const ArenaBlock& block = from.blocks()[b];
    std::memcpy(to.blocks()[b].data, block.data, block.element_count * block.element_size);
  }
}

bool SameParams(const TensorArena& a, const TensorArena& b) {
  for (size_t i = 0; i < a.blocks().size(); ++i) {
    const ArenaBlock& block = a.blocks()[i];
    if (std::memcmp(block.data, b.blocks()[i].data, block.element_count * block.element_size) != 0)
      return false;
  }
  return true;
}

// A fresh optimizer over a fresh arena of StateMixedSpecs().
struct Trained {
  std::unique_ptr<TensorArena> arena;
  std::unique_ptr<Optimizer> optimizer;
};

Trained Fresh(const OptimizerOptions& options,
              std::vector<TensorDescriptor> specs = StateMixedSpecs()) {
  Trained t;
  t.arena = MakeArena(std::move(specs));
  if (t.arena == nullptr) return t;
  auto optimizer = Optimizer::Create(options, *t.arena);
  if (optimizer.ok()) t.optimizer = std::move(*optimizer);
  SetStateGradients(*t.arena, -1);
  return t;
}

class ContinuationTest : public ::testing::TestWithParam<OptimizerOptions> {};

TEST_P(ContinuationTest, RestoredOptimizerContinuesBitwiseIdentically) {
  constexpr int kSaveAt = 3, kTotal = 8;
  Trained straight = Fresh(GetParam());
  ASSERT_NE(straight.optimizer, nullptr);
  RunSteps(*straight.arena, *straight.optimizer, 0, kTotal);

  Trained first = Fresh(GetParam());
  ASSERT_NE(first.optimizer, nullptr);
  RunSteps(*first.arena, *first.optimizer, 0, kSaveAt);
  const std::string saved = first.optimizer->SaveState();
  first.optimizer.reset();  // nothing of the first run survives but the bytes and the parameters

  Trained resumed = Fresh(GetParam());
  ASSERT_NE(resumed.optimizer, nullptr);
  CopyParams(*first.arena, *resumed.arena);
  first.arena.reset();
  ASSERT_TRUE(resumed.optimizer->LoadState(saved).ok());
  EXPECT_EQ(resumed.optimizer->steps_taken(), static_cast<uint64_t>(kSaveAt));
  EXPECT_EQ(resumed.optimizer->SaveState(), saved);
  RunSteps(*resumed.arena, *resumed.optimizer, kSaveAt, kTotal);

  EXPECT_EQ(resumed.optimizer->steps_taken(), static_cast<uint64_t>(kTotal));
  EXPECT_TRUE(SameParams(*straight.arena, *resumed.arena));
  EXPECT_EQ(resumed.optimizer->SaveState(), straight.optimizer->SaveState());
}

TEST_P(ContinuationTest, WithoutTheStateTheRunDiverges) {
  // The check above has teeth: skipping LoadState (where there is state to lose) changes the
  // result.
  if (GetParam().kind == Kind::kSgd && GetParam().momentum == 0)
    GTEST_SKIP() << "plain SGD keeps no state";
  Trained straight = Fresh(GetParam());
  ASSERT_NE(straight.optimizer, nullptr);
  RunSteps(*straight.arena, *straight.optimizer, 0, 5);
  Trained first = Fresh(GetParam());
  ASSERT_NE(first.optimizer, nullptr);
  RunSteps(*first.arena, *first.optimizer, 0, 2);
  Trained forgetful = Fresh(GetParam());
  ASSERT_NE(forgetful.optimizer, nullptr);
  CopyParams(*first.arena, *forgetful.arena);
  RunSteps(*forgetful.arena, *forgetful.optimizer, 2, 5);
  EXPECT_FALSE(SameParams(*straight.arena, *forgetful.arena));
}

INSTANTIATE_TEST_SUITE_P(Kinds, ContinuationTest,
                         ::testing::Values(StateOptions(Kind::kSgd), StateOptions(Kind::kSgd, 0.9),
                                           StateOptions(Kind::kSgd, 0.9, true, 0.001),
                                           StateOptions(Kind::kAdam),
                                           StateOptions(Kind::kAdam, 0, false, 0.01),
                                           StateOptions(Kind::kAdamW, 0, false, 0.01)),
                         [](const auto& info) { return std::to_string(info.index); });

// The format the header documents, computed independently: FNV-1a 64 over all but the last 8
// bytes, stored little-endian in those 8 bytes.
void Reseal(std::string& bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i + 8 < bytes.size(); ++i) {
    hash ^= static_cast<unsigned char>(bytes[i]);
    hash *= 0x100000001b3ull;
  }
  for (size_t i = 0; i < 8; ++i) bytes[bytes.size() - 8 + i] = static_cast<char>(hash >> (8 * i));
}

uint64_t ReadLittleEndian(const std::string& bytes, size_t at, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i)
    value |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return value;
}

TEST(OptimizerStateFormatTest, IsTheDocumentedLittleEndianLayout) {
  Trained t = Fresh(StateOptions(Kind::kAdam), {CpuTensor("w", 2, COHORT_DTYPE_FLOAT64)});
  ASSERT_NE(t.optimizer, nullptr);
  double* grad = static_cast<double*>(t.arena->grad(0));
  grad[0] = 2.0;
  grad[1] = -4.0;
  ASSERT_TRUE(t.optimizer->Step().ok());
  const std::string bytes = t.optimizer->SaveState();
  // header 8 + 4 + 4 + 8 + 4 + 4, one block entry 4 + 8, 2 buffers x 2 doubles, checksum 8
  ASSERT_EQ(bytes.size(), 32u + 12u + 32u + 8u);
  EXPECT_EQ(bytes.substr(0, 8), "COHOPTST");
  EXPECT_EQ(ReadLittleEndian(bytes, 8, 4), 1u);   // version
  EXPECT_EQ(ReadLittleEndian(bytes, 12, 4), 1u);  // kind: adam
  EXPECT_EQ(ReadLittleEndian(bytes, 16, 8), 1u);  // steps
  EXPECT_EQ(ReadLittleEndian(bytes, 24, 4), 1u);  // blocks
  EXPECT_EQ(ReadLittleEndian(bytes, 28, 4), 2u);  // buffers per block
  EXPECT_EQ(ReadLittleEndian(bytes, 32, 4), 4u);  // COHORT_DTYPE_FLOAT64
  EXPECT_EQ(ReadLittleEndian(bytes, 36, 8), 2u);  // elements
  // m = 0.1 * g = [0.2, -0.4]; v = 0.001 * g^2 = [0.004, 0.016]
  const double expected[] = {(1 - 0.9) * 2.0, (1 - 0.9) * -4.0, (1 - 0.999) * 4.0,
                             (1 - 0.999) * 16.0};
  for (size_t i = 0; i < 4; ++i) {
    double value;
    const uint64_t bits = ReadLittleEndian(bytes, 44 + 8 * i, 8);
    std::memcpy(&value, &bits, 8);
    EXPECT_DOUBLE_EQ(value, expected[i]) << "value " << i;
  }
  std::string resealed = bytes;
  Reseal(resealed);
  EXPECT_EQ(resealed, bytes);
}

// A checkpoint's capture: the state without its checksum, sealed later (on the writer's thread),
// is SaveState's bytes; saved again into the same string, it reuses the string's memory.
TEST(OptimizerStateFormatTest, UnsealedThenSealedIsSaveStateInTheSameMemory) {
  Trained t = Fresh(StateOptions(Kind::kAdam), {CpuTensor("w", 64, COHORT_DTYPE_FLOAT32)});
  ASSERT_NE(t.optimizer, nullptr);
  RunSteps(*t.arena, *t.optimizer, 0, 2);
  std::string out;
  t.optimizer->SaveStateInto(out, /*sealed=*/false, nullptr);
  const std::string sealed = t.optimizer->SaveState();
  ASSERT_EQ(out.size() + 8, sealed.size());
  SealOptimizerState(out);
  EXPECT_EQ(out, sealed);
  const char* memory = out.data();
  RunSteps(*t.arena, *t.optimizer, 2, 3);
  t.optimizer->SaveStateInto(out, /*sealed=*/true, nullptr);
  EXPECT_EQ(out.data(), memory);
  EXPECT_EQ(out, t.optimizer->SaveState());
}

class DamagedStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trained_ = Fresh(StateOptions(Kind::kAdam), {CpuTensor("w", 3, COHORT_DTYPE_FLOAT32),
                                                 CpuTensor("v", 2, COHORT_DTYPE_FLOAT64)});
    ASSERT_NE(trained_.optimizer, nullptr);
    RunSteps(*trained_.arena, *trained_.optimizer, 0, 2);
    saved_ = trained_.optimizer->SaveState();
    target_ = Fresh(StateOptions(Kind::kAdam), {CpuTensor("w", 3, COHORT_DTYPE_FLOAT32),
                                                CpuTensor("v", 2, COHORT_DTYPE_FLOAT64)});
    ASSERT_NE(target_.optimizer, nullptr);
    RunSteps(*target_.arena, *target_.optimizer, 5, 6);
    target_state_ = target_.optimizer->SaveState();
  }

  // Loads `bytes` into the target, expecting INVALID_ARGUMENT and an untouched state; returns the
  // message.
  std::string Refused(absl::string_view bytes) {
    absl::Status status = target_.optimizer->LoadState(bytes);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_EQ(target_.optimizer->SaveState(), target_state_) << "a refused load changed the state";
    return std::string(status.message());
  }

  Trained trained_, target_;
  std::string saved_, target_state_;
};

TEST_F(DamagedStateTest, EveryTruncationIsRefused) {
  for (size_t length = 0; length < saved_.size(); ++length) {
    SCOPED_TRACE(length);
    Refused(absl::string_view(saved_).substr(0, length));
  }
  EXPECT_THAT(Refused(""), HasSubstr("is truncated: 0 bytes"));
  EXPECT_THAT(Refused(absl::string_view(saved_).substr(0, saved_.size() - 1)),
              HasSubstr("truncated or corrupt"));
}

TEST_F(DamagedStateTest, EveryFlippedBitIsRefused) {
  for (size_t at = 0; at < saved_.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = saved_;
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << bit));
      SCOPED_TRACE(testing::Message() << "byte " << at << " bit " << bit);
      Refused(damaged);
    }
  }
}

TEST_F(DamagedStateTest, TrailingBytesAreRefused) { Refused(saved_ + std::string(1, '\0')); }

TEST_F(DamagedStateTest, NamesWhatIsWrongWithWellSealedBytes) {
  std::string magic = saved_;
  magic[0] = 'X';
  EXPECT_THAT(Refused(magic), HasSubstr("does not start with \"COHOPTST\""));

  std::string version = saved_;
  version[8] = 2;
  EXPECT_THAT(Refused(version), HasSubstr("format version 2; this build reads version 1"));

  std::string kind = saved_;
  kind[12] = 9;
  Reseal(kind);
  EXPECT_THAT(Refused(kind), HasSubstr("was saved by an unknown kind (9); this optimizer is adam"));

  std::string longer = saved_;
  longer.insert(longer.size() - 8, "abcd");
  Reseal(longer);
  EXPECT_THAT(Refused(longer), HasSubstr("holds 60 bytes of buffers; its layout needs 56"));

  std::string header_only = saved_.substr(0, 20) + std::string(8, '\0');
  Reseal(header_only);
  EXPECT_THAT(Refused(header_only), HasSubstr("its header ends early"));

  std::string short_table = saved_.substr(0, 32 + 12) + std::string(8, '\0');
  Reseal(short_table);
  EXPECT_THAT(Refused(short_table), HasSubstr("its block table ends early"));

  ASSERT_TRUE(target_.optimizer->LoadState(saved_).ok());  // the undamaged bytes still load
  EXPECT_EQ(target_.optimizer->SaveState(), saved_);
}

std::string SavedBy(const OptimizerOptions& options, std::vector<TensorDescriptor> specs) {
  Trained t = Fresh(options, std::move(specs));
  if (t.optimizer == nullptr) return "";
  RunSteps(*t.arena, *t.optimizer, 0, 1);
  return t.optimizer->SaveState();
}

absl::Status LoadInto(const OptimizerOptions& options, std::vector<TensorDescriptor> specs,
                      const std::string& bytes) {
  Trained t = Fresh(options, std::move(specs));
  if (t.optimizer == nullptr) return absl::InternalError("no optimizer");
  return t.optimizer->LoadState(bytes);
}

TEST(MismatchedStateTest, AnotherKindIsRefused) {
  const std::vector<TensorDescriptor> specs = {CpuTensor("w", 4, COHORT_DTYPE_FLOAT32)};
  absl::Status status = LoadInto(StateOptions(Kind::kAdamW, 0, false, 0.01), specs,
                                 SavedBy(StateOptions(Kind::kAdam), specs));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "optimizer state was saved by adam; this optimizer is adamw");
  EXPECT_THAT(LoadInto(StateOptions(Kind::kSgd), specs, SavedBy(StateOptions(Kind::kAdamW), specs))
                  .message(),
              HasSubstr("was saved by adamw; this optimizer is sgd"));
}

TEST(MismatchedStateTest, AnotherBufferCountIsRefused) {
  const std::vector<TensorDescriptor> specs = {CpuTensor("w", 4, COHORT_DTYPE_FLOAT32)};
  absl::Status status =
      LoadInto(StateOptions(Kind::kSgd, 0.9), specs, SavedBy(StateOptions(Kind::kSgd), specs));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("keeps 0 buffers per block; this sgd optimizer keeps 1"));
}

TEST(MismatchedStateTest, AnotherLayoutIsRefusedNamingTheDifference) {
  const OptimizerOptions adam = StateOptions(Kind::kAdam);
  const std::string four_floats = SavedBy(adam, {CpuTensor("w", 4, COHORT_DTYPE_FLOAT32)});

  absl::Status count = LoadInto(adam, {CpuTensor("w", 5, COHORT_DTYPE_FLOAT32)}, four_floats);
  EXPECT_EQ(count.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      count.message(),
      HasSubstr(
          "block 0 is float32 with 4 elements; this arena's block 0 is float32 with 5 elements"));

  absl::Status dtype = LoadInto(adam, {CpuTensor("w", 4, COHORT_DTYPE_FLOAT64)}, four_floats);
  EXPECT_THAT(
      dtype.message(),
      HasSubstr(
          "block 0 is float32 with 4 elements; this arena's block 0 is float64 with 4 elements"));

  absl::Status blocks = LoadInto(
      adam, {CpuTensor("w", 4, COHORT_DTYPE_FLOAT32), CpuTensor("d", 4, COHORT_DTYPE_FLOAT64)},
      four_floats);
  EXPECT_THAT(blocks.message(), HasSubstr("has 1 blocks; this arena has 2"));

  // The same block sizes from other tensors are the same layout: the state is per block.
  EXPECT_TRUE(
      LoadInto(adam,
               {CpuTensor("a", 2, COHORT_DTYPE_FLOAT32), CpuTensor("b", 2, COHORT_DTYPE_FLOAT32)},
               SavedBy(adam, {CpuTensor("w", 2, COHORT_DTYPE_FLOAT32),
                              CpuTensor("x", 2, COHORT_DTYPE_FLOAT32)}))
          .ok());
}

}  // namespace
}  // namespace cohort
