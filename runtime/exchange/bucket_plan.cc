#include "runtime/exchange/bucket_plan.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/arena/block_staging.h"

namespace cohort {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

uint64_t End(const TensorPlacement& placement) {
  return placement.offset + placement.element_count;
}

// A bucket being planned: the tensors from `low` to `high` (registration indices) of one block, and
// the position in the ready order of the last of them to complete.
struct Run {
  size_t block = 0;
  size_t low = 0;
  size_t high = 0;
  size_t last_position = 0;
};

// Each tensor's neighbours within its block, in registration (and so offset) order.
struct Neighbours {
  std::vector<size_t> previous;
  std::vector<size_t> next;
};

absl::StatusOr<Neighbours> FindNeighbours(const TensorArena& arena) {
  Neighbours n{std::vector<size_t>(arena.tensor_count(), kNone),
               std::vector<size_t>(arena.tensor_count(), kNone)};
  std::vector<size_t> last(arena.blocks().size(), kNone);
  for (size_t tensor = 0; tensor < arena.tensor_count(); ++tensor) {
    const size_t block = arena.placement(tensor).block;
    if (const size_t before = last[block]; before != kNone) {
      if (End(arena.placement(before)) > arena.placement(tensor).offset) {
        return absl::InternalError(
            absl::StrCat("tensor '", arena.spec(before).name, "' (", before,
                         ") ends after the next registered tensor of its block starts"));
      }
      n.previous[tensor] = before;
      n.next[before] = tensor;
    }
    last[block] = tensor;
  }
  return n;
}

absl::StatusOr<std::vector<size_t>> CheckedOrder(const TensorArena& arena,
                                                 absl::Span<const size_t> ready_order) {
  const size_t count = arena.tensor_count();
  std::vector<size_t> order;
  if (ready_order.empty()) {
    for (size_t tensor = count; tensor-- > 0;) order.push_back(tensor);
    return order;
  }
  if (ready_order.size() != count) {
    return absl::InvalidArgumentError(absl::StrCat("the ready order names ", ready_order.size(),
                                                   " tensors; the arena has ", count));
  }
  std::vector<bool> seen(count, false);
  for (size_t tensor : ready_order) {
    if (tensor >= count) {
      return absl::InvalidArgumentError(absl::StrCat("the ready order names tensor ", tensor,
                                                     "; the arena has ", count, " tensors"));
    }
    if (seen[tensor]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the ready order names tensor '", arena.spec(tensor).name, "' (", tensor, ") twice"));
    }
    seen[tensor] = true;
  }
  return std::vector<size_t>(ready_order.begin(), ready_order.end());
}

}  // namespace

absl::StatusOr<std::vector<GradientBucket>> PlanBuckets(const TensorArena& arena,
                                                        uint64_t bucket_bytes,
                                                        uint64_t first_bucket_bytes,
                                                        absl::Span<const size_t> ready_order) {
  absl::StatusOr<Neighbours> neighbours = FindNeighbours(arena);
  if (!neighbours.ok()) return neighbours.status();
  absl::StatusOr<std::vector<size_t>> order = CheckedOrder(arena, ready_order);
  if (!order.ok()) return order.status();
  const std::vector<ArenaBlock>& blocks = arena.blocks();
  // `earlier` and `later` (of one block, `later` completing after) as one run, when they lie side
  // by side in the block and the joined range stays within `limit` bytes.
  auto join = [&](const Run& earlier, const Run& later, uint64_t limit) -> std::optional<Run> {
    const bool below = neighbours->previous[earlier.low] == later.high;
    const bool above = neighbours->next[earlier.high] == later.low;
    if (!below && !above) return std::nullopt;
    const size_t low = below ? later.low : earlier.low;
    const size_t high = above ? later.high : earlier.high;
    const uint64_t bytes = (End(arena.placement(high)) - arena.placement(low).offset) *
                           blocks[earlier.block].element_size;
    if (bytes > limit) return std::nullopt;
    return Run{earlier.block, low, high, later.last_position};
  };
  // The limit of a block's bucket that has `before` buckets of its block before it.
  auto limit = [&](size_t before) { return before == 0 ? first_bucket_bytes : bucket_bytes; };
  // Appends `run` to `runs`, whose entries from `first` on are its block's, joined to the last of
  // them when it fits.
  auto add = [&](std::vector<Run>& runs, size_t first, const Run& run) {
    if (runs.size() > first) {
      if (std::optional<Run> joined = join(runs.back(), run, limit(runs.size() - 1 - first))) {
        runs.back() = *joined;
        return;
      }
    }
    runs.push_back(run);
  };

  // Each block's runs, in the order they were opened; the last one is the block's open bucket.
  std::vector<std::vector<Run>> runs(blocks.size());
  for (size_t position = 0; position < order->size(); ++position) {
    const size_t tensor = (*order)[position];
    const size_t block = arena.placement(tensor).block;
    add(runs[block], 0, Run{block, tensor, tensor, position});
  }

  // Join neighbouring runs of a block that fit together, then order every block's buckets by
  // when they complete.
  std::vector<Run> joined;
  for (const std::vector<Run>& mine : runs) {
    const size_t first = joined.size();
    for (const Run& run : mine) add(joined, first, run);
  }
  std::sort(joined.begin(), joined.end(),
            [](const Run& a, const Run& b) { return a.last_position < b.last_position; });

  std::vector<GradientBucket> plan;
  plan.reserve(joined.size());
  for (const Run& run : joined) {
    GradientBucket bucket{run.block, arena.placement(run.low).offset, 0, {}};
    bucket.count = End(arena.placement(run.high)) - bucket.offset;
    for (size_t tensor = run.high; tensor != kNone; tensor = neighbours->previous[tensor]) {
      bucket.tensors.push_back(tensor);
      if (tensor == run.low) break;
    }
    plan.push_back(std::move(bucket));
  }
  return plan;
}

uint64_t GradientBytes(const TensorArena& arena) {
  uint64_t bytes = 0;
  for (const ArenaBlock& block : arena.blocks()) bytes += BlockBytes(block);
  return bytes;
}

BucketLimits FitBucketLimits(const TensorArena& arena, uint64_t threshold_bytes) {
  const uint64_t gradient_bytes = GradientBytes(arena);
  BucketLimits limits;
  limits.bucket_bytes =
      std::min(threshold_bytes, std::max(kSmallestBucketBytes, gradient_bytes / 4));
  limits.first_bucket_bytes = std::min({limits.bucket_bytes, uint64_t{1} << 20,
                                        std::max(kSmallestBucketBytes, gradient_bytes / 16)});
  return limits;
}

}  // namespace cohort
