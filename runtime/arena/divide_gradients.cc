#include "runtime/arena/divide_gradients.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/arena/block_staging.h"
#include "runtime/arena/dtype.h"

namespace cohort {
namespace {

// Multiplies `count` values at `grad` by 1 / divisor, in their own precision.
template <class T>
void Divide(void* grad, uint64_t count, uint64_t divisor) {
  T* values = static_cast<T*>(grad);
  const T scale = T{1} / static_cast<T>(divisor);
  for (uint64_t i = 0; i < count; ++i) values[i] *= scale;
}

}  // namespace

absl::Status DivideGradients(TensorArena& arena, uint64_t divisor, DeviceGradientOps* device) {
  std::vector<char> staged;
  for (const ArenaBlock& block : arena.blocks()) {
    if (block.dtype != COHORT_DTYPE_FLOAT32 && block.dtype != COHORT_DTYPE_FLOAT64) {
      return absl::UnimplementedError(
          absl::StrCat("averaging ", DtypeName(block.dtype), " gradients is not supported"));
    }
    if (!OnHost(block) && device != nullptr) {
      if (absl::Status s = device->Divide(block.grad, block.dtype, block.element_count, divisor);
          !s.ok()) {
        return s;
      }
      continue;
    }
    void* grad = block.grad;
    if (!OnHost(block)) {
      staged.resize(BlockBytes(block));
      if (absl::Status s = CopyBlockToHost(block, BlockPart::kGradients, staged.data()); !s.ok()) {
        return s;
      }
      grad = staged.data();
    }
    if (block.dtype == COHORT_DTYPE_FLOAT32) {
      Divide<float>(grad, block.element_count, divisor);
    } else {
      Divide<double>(grad, block.element_count, divisor);
    }
    if (!OnHost(block)) {
      if (absl::Status s = CopyBlockFromHost(block, BlockPart::kGradients, staged.data());
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cohort
