#include "runtime/arena/arena_shard.h"

#include <algorithm>

namespace cohort {

uint64_t ShardChunk(uint64_t elements, uint32_t size) {
  constexpr uint64_t kAlignment = 16;
  if (size <= 1) return elements;
  const uint64_t even = (elements + size - 1) / size;
  return (even + kAlignment - 1) / kAlignment * kAlignment;
}

ElementRange ShardRange(uint64_t elements, ArenaShard shard) {
  if (shard.whole()) return {0, elements};
  const uint64_t chunk = ShardChunk(elements, shard.size);
  const uint64_t begin = std::min(elements, chunk * shard.rank);
  return {begin, std::min(elements, begin + chunk)};
}

}  // namespace cohort
