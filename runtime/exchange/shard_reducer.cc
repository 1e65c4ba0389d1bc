#include "runtime/exchange/shard_reducer.h"

#include <algorithm>
#include <utility>

#include "runtime/arena/arena_shard.h"

namespace cohort {

ShardReducer::ShardReducer(std::vector<GradientBucket> plan, const TensorArena& arena,
                           CollectiveBackend& backend)
    : plan_(std::move(plan)), arena_(arena), backend_(backend) {}

absl::Status ShardReducer::Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                                  uint64_t /*step*/) {
  ScaleInPlace(grad, count, scale);
  const GradientBucket& slice = plan_[bucket];
  const uint64_t block_elements = arena_.blocks()[slice.block].element_count;
  const uint64_t end = slice.offset + count;
  for (uint32_t owner = 0; owner < backend_.size(); ++owner) {
    const ElementRange shard = ShardRange(block_elements, {owner, backend_.size()});
    const uint64_t from = std::max(shard.begin, slice.offset);
    const uint64_t to = std::min(shard.end, end);
    if (from >= to) continue;
    if (absl::Status status = backend_.ReduceSum(grad + (from - slice.offset), to - from,
                                                 COHORT_DTYPE_FLOAT32, owner);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace cohort
