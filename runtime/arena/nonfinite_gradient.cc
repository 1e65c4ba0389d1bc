#include "runtime/arena/nonfinite_gradient.h"

#include <bit>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/arena/block_staging.h"

namespace cohort {

namespace {

// The search over `count` gradients of block `block` starting at element `offset`, read from
// `grad` (host memory holding those elements).
std::optional<NonFiniteGradient> FindIn(const TensorArena& arena, size_t block, uint64_t offset,
                                        const float* grad, uint64_t count) {
  // An element is not finite when its exponent bits are all ones. One integer pass (which the
  // compiler vectorizes) says whether any is; the search below runs only when one is.
  uint32_t any = 0;
  for (uint64_t i = 0; i < count; ++i) {
    any |= (std::bit_cast<uint32_t>(grad[i]) & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
  }
  if (any == 0) return std::nullopt;
  for (uint64_t i = 0; i < count; ++i) {
    if (std::isfinite(grad[i])) continue;
    const uint64_t element = offset + i;  // in the block; the gaps between tensors hold zeros
    for (size_t t = 0; t < arena.tensor_count(); ++t) {
      const TensorPlacement& p = arena.placement(t);
      if (p.block == block && element >= p.offset && element < p.offset + p.element_count) {
        return NonFiniteGradient{t, element - p.offset, grad[i]};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<NonFiniteGradient> FindNonFiniteGradient(const TensorArena& arena, size_t block,
                                                       uint64_t offset, uint64_t count) {
  const ArenaBlock& b = arena.blocks()[block];
  if (!OnHost(b) || b.dtype != COHORT_DTYPE_FLOAT32) return std::nullopt;
  return FindIn(arena, block, offset, static_cast<const float*>(b.grad) + offset, count);
}

absl::StatusOr<std::optional<NonFiniteGradient>> FindNonFiniteGradient(const TensorArena& arena,
                                                                       DeviceGradientOps* device,
                                                                       ArenaShard shard) {
  // The elements of block `b` searched: the shard's range of its gradients.
  const auto searched = [&](const ArenaBlock& block) {
    const ElementRange range = ShardRange(block.element_count, shard);
    return std::pair{static_cast<const float*>(block.grad) + range.begin, range};
  };
  // With the device's own check, its blocks are read on the host only when it found something.
  bool device_blocks_finite = false;
  if (device != nullptr) {
    for (const ArenaBlock& block : arena.blocks()) {
      if (OnHost(block) || block.dtype != COHORT_DTYPE_FLOAT32) continue;
      const auto [grad, range] = searched(block);
      if (absl::Status s = device->CheckFinite(grad, block.dtype, range.count()); !s.ok()) {
        return s;
      }
    }
    absl::StatusOr<bool> found = device->TakeNonFinite();
    if (!found.ok()) return found.status();
    device_blocks_finite = !*found;
  }
  std::vector<float> staged;
  for (size_t b = 0; b < arena.blocks().size(); ++b) {
    const ArenaBlock& block = arena.blocks()[b];
    if (block.dtype != COHORT_DTYPE_FLOAT32) continue;
    auto [grad, range] = searched(block);
    if (!OnHost(block)) {
      if (device_blocks_finite) continue;
      staged.resize(range.count());
      if (absl::Status copied =
              block.memory->CopyToHost(staged.data(), grad, range.count() * sizeof(float));
          !copied.ok()) {
        return copied;
      }
      grad = staged.data();
    }
    if (std::optional<NonFiniteGradient> found =
            FindIn(arena, b, range.begin, grad, range.count())) {
      return found;
    }
  }
  return std::nullopt;
}

std::string DescribeNonFiniteGradient(const TensorArena& arena, const NonFiniteGradient& found) {
  const char* value = std::isnan(found.value) ? "nan" : found.value > 0 ? "inf" : "-inf";
  return absl::StrCat("tensor '", arena.spec(found.tensor).name, "' element ", found.element,
                      " is ", value);
}

}  // namespace cohort
