// ShardPieces: where ZeRO stage 2 cuts each gradient bucket. A bucket is a slice of one arena
// block; the ranks' shards of that block (ShardRange, arena_shard.h) cut it into at most one
// piece per rank, and each piece is summed onto the rank that owns it only (a reduce). The host's
// ShardReducer and the CUDA exchange's follow the same pieces.
//
//   std::vector<std::vector<ShardPiece>> pieces = ShardPieces(plan, arena, /*ranks=*/4);
//   for (const ShardPiece& piece : pieces[b])
//     backend.ReduceSum(grad + piece.offset, piece.count, COHORT_DTYPE_FLOAT32, piece.owner);
#ifndef COHORT_RUNTIME_EXCHANGE_SHARD_PIECES_H_
#define COHORT_RUNTIME_EXCHANGE_SHARD_PIECES_H_

#include <cstdint>
#include <vector>

#include "runtime/arena/tensor_arena.h"
#include "runtime/exchange/bucket_plan.h"

namespace cohort {

struct ShardPiece {
  uint64_t offset = 0;  // elements from the bucket's first
  uint64_t count = 0;   // > 0
  uint32_t owner = 0;   // the rank whose shard holds it
};

// For each bucket of `plan` (a plan of `arena`), its pieces in rank order, covering the bucket.
std::vector<std::vector<ShardPiece>> ShardPieces(const std::vector<GradientBucket>& plan,
                                                 const TensorArena& arena, uint32_t ranks);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_SHARD_PIECES_H_
