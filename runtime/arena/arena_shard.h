// ArenaShard: one rank's part of every arena block under ZeRO (optimizations.zero_stage): each
// block's elements are cut into `size` contiguous ranges of ShardChunk elements (the last ones
// shorter, or empty), and rank r owns range r. Its optimizer keeps state for, and steps, that range
// only, and the stepped range goes from it to every other rank (stage 1); under stage 2 the range's
// gradient is also summed only on it (a reduce to its owner instead of an allreduce).
//
//   ArenaShard shard{.rank = 1, .size = 4};
//   ElementRange mine = ShardRange(/*elements=*/1000, shard);   // [256, 512)
//
// The update rules are element-wise, so a sharded step computes every parameter exactly as a whole
// one does from the same gradient.
//
// Thread-safety: plain values and pure functions.
#ifndef COHORT_RUNTIME_ARENA_ARENA_SHARD_H_
#define COHORT_RUNTIME_ARENA_ARENA_SHARD_H_

#include <cstdint>

namespace cohort {

struct ArenaShard {
  uint32_t rank = 0;
  uint32_t size = 1;  // 1: the whole arena (no sharding)

  bool whole() const { return size <= 1; }
};

// Elements [begin, end) of a block.
struct ElementRange {
  uint64_t begin = 0;
  uint64_t end = 0;

  uint64_t count() const { return end - begin; }
};

// The elements of each range: `elements` / `size` rounded up to a multiple of 16 (64 bytes of
// float32, so every range but the last starts on a cache line of the block); `elements` itself
// when size is 1.
uint64_t ShardChunk(uint64_t elements, uint32_t size);

// The range of a block of `elements` that `shard` owns (the whole block when shard.whole()).
ElementRange ShardRange(uint64_t elements, ArenaShard shard);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_ARENA_SHARD_H_
