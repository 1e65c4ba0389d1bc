#include "runtime/exchange/shard_pieces.h"

#include <algorithm>

#include "runtime/arena/arena_shard.h"

namespace cohort {

std::vector<std::vector<ShardPiece>> ShardPieces(const std::vector<GradientBucket>& plan,
                                                 const TensorArena& arena, uint32_t ranks) {
  std::vector<std::vector<ShardPiece>> pieces(plan.size());
  for (size_t b = 0; b < plan.size(); ++b) {
    const GradientBucket& bucket = plan[b];
    const uint64_t block_elements = arena.blocks()[bucket.block].element_count;
    const uint64_t end = bucket.offset + bucket.count;
    for (uint32_t owner = 0; owner < ranks; ++owner) {
      const ElementRange shard = ShardRange(block_elements, {owner, ranks});
      const uint64_t from = std::max(shard.begin, bucket.offset);
      const uint64_t to = std::min(shard.end, end);
      if (from < to) pieces[b].push_back({from - bucket.offset, to - from, owner});
    }
  }
  return pieces;
}

}  // namespace cohort
