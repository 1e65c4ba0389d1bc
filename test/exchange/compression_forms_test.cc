// The registry of compression forms: one entry per CompressionOptions::Kind, each making a
// reducer; and the plans a form refuses (top-k's 32-bit indices) refused before any reducer is
// made, naming the settings to change.
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/arena/device_memory.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/collective/rendezvous_store.h"
#include "runtime/exchange/compression/compression_form.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

constexpr CompressionOptions::Kind kEveryKind[] = {
    CompressionOptions::kNone, CompressionOptions::kFp16, CompressionOptions::kBf16,
    CompressionOptions::kTopK, CompressionOptions::kPowerSgd};

TEST(CompressionFormsTest, EachKindHasOneEntry) {
  std::set<CompressionOptions::Kind> listed;
  for (const CompressionForm& form : CompressionForms()) {
    EXPECT_TRUE(listed.insert(form.kind).second)
        << CompressionKindName(form.kind) << " is listed twice";
    EXPECT_NE(form.create, nullptr) << CompressionKindName(form.kind);
  }
  EXPECT_EQ(listed.size(), std::size(kEveryKind));
  for (CompressionOptions::Kind kind : kEveryKind) {
    EXPECT_EQ(CompressionFormOf(kind).kind, kind) << CompressionKindName(kind);
  }
}

TEST(CompressionFormsTest, TopKRefusesABucketItsIndicesCannotAddress) {
  CompressionOptions topk;
  topk.kind = CompressionOptions::kTopK;
  topk.topk_ratio = 0.01;
  GradientBucket huge;
  huge.count = (uint64_t{1} << 32) + 1;
  const absl::Status refused = CheckCompressionFits(topk, {huge});
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("optimizations.gradient_compression"));
  EXPECT_THAT(std::string(refused.message()), HasSubstr("optimizations.tensor_fusion_threshold"));
  // The same plan suits every other form.
  for (CompressionOptions::Kind kind : kEveryKind) {
    if (kind == CompressionOptions::kTopK) continue;
    CompressionOptions other;
    other.kind = kind;
    EXPECT_TRUE(CheckCompressionFits(other, {huge}).ok()) << CompressionKindName(kind);
  }
  // And CreateBucketReducer refuses it before making a reducer.
  InMemoryRendezvousStore store;
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
      CreateGlooBackend(0, 1, store, GlooOptions{});
  ASSERT_TRUE(backend.ok()) << backend.status();
  CpuOnlyMemoryProvider memory;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      TensorArena::Create({{"w", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, 4}}, memory);
  ASSERT_TRUE(arena.ok()) << arena.status();
  EXPECT_EQ(CreateBucketReducer(topk, {huge}, **arena, **backend).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cohort
