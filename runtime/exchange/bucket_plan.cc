#include "runtime/exchange/bucket_plan.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

// The bucket a block is filling, and how many buckets that block has closed.
struct OpenBucket {
  std::optional<GradientBucket> bucket;
  size_t closed = 0;
};

uint64_t End(const TensorPlacement& placement) { return placement.offset + placement.element_count; }

}  // namespace

absl::StatusOr<std::vector<GradientBucket>> PlanBuckets(const TensorArena& arena,
                                                        uint64_t bucket_bytes,
                                                        uint64_t first_bucket_bytes) {
  const std::vector<ArenaBlock>& blocks = arena.blocks();
  std::vector<OpenBucket> open(blocks.size());
  std::vector<GradientBucket> plan;
  auto close = [&](OpenBucket& block) {
    if (!block.bucket) return;
    plan.push_back(*std::move(block.bucket));
    block.bucket.reset();
    ++block.closed;
  };
  for (size_t tensor = arena.tensor_count(); tensor-- > 0;) {
    const TensorPlacement& placement = arena.placement(tensor);
    OpenBucket& block = open[placement.block];
    if (block.bucket) {
      const GradientBucket& current = *block.bucket;
      if (End(placement) > current.offset) {
        return absl::InternalError(absl::StrCat(
            "tensor '", arena.spec(tensor).name, "' (", tensor,
            ") ends after the next registered tensor of its block starts"));
      }
      const uint64_t limit = block.closed == 0 ? first_bucket_bytes : bucket_bytes;
      const uint64_t range = current.offset + current.count - placement.offset;
      if (range * blocks[placement.block].element_size > limit) close(block);
    }
    if (!block.bucket) {
      block.bucket = GradientBucket{placement.block, placement.offset, placement.element_count, {}};
    } else {
      block.bucket->count += block.bucket->offset - placement.offset;
      block.bucket->offset = placement.offset;
    }
    block.bucket->tensors.push_back(tensor);
  }
  for (OpenBucket& block : open) close(block);
  // Buckets complete when their lowest-index tensor does; backward reaches higher indices first.
  std::sort(plan.begin(), plan.end(), [](const GradientBucket& a, const GradientBucket& b) {
    return a.tensors.back() > b.tensors.back();
  });
  return plan;
}

BucketLimits FitBucketLimits(const TensorArena& arena, uint64_t threshold_bytes) {
  uint64_t gradient_bytes = 0;
  for (const ArenaBlock& block : arena.blocks()) gradient_bytes += block.element_count * block.element_size;
  BucketLimits limits;
  limits.bucket_bytes = std::min(threshold_bytes, std::max(kSmallestBucketBytes, gradient_bytes / 4));
  limits.first_bucket_bytes = std::min({limits.bucket_bytes, uint64_t{1} << 20,
                                        std::max(kSmallestBucketBytes, gradient_bytes / 16)});
  return limits;
}

}  // namespace cohort
