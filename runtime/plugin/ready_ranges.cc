#include "runtime/plugin/ready_ranges.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace cohort {

ReadyRanges::ReadyRanges(const TensorArena& arena) {
  tensors_.reserve(arena.tensor_count());
  for (size_t tensor = 0; tensor < arena.tensor_count(); ++tensor) {
    tensors_.push_back(
        Tensor{arena.spec(tensor).name, arena.placement(tensor).element_count, 0, {}});
  }
}

absl::Status ReadyRanges::Add(size_t tensor, uint64_t offset, uint64_t count) {
  if (tensor >= tensors_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("gradients_ready: tensor ", tensor,
                                                   " does not exist (", tensors_.size(),
                                                   " tensors have gradients)"));
  }
  Tensor& state = tensors_[tensor];
  const auto where = [&] {
    return absl::StrCat("gradients_ready: tensor '", state.name, "', range [", offset, ", ", offset,
                        "+", count, ")");
  };
  if (count == 0) return absl::InvalidArgumentError(absl::StrCat(where(), " is empty"));
  if (offset > state.element_count || count > state.element_count - offset) {
    return absl::InvalidArgumentError(
        absl::StrCat(where(), " is past the tensor's end (", state.element_count, " elements)"));
  }
  const uint64_t end = offset + count;
  // The first recorded range that ends after `offset` is the only one that could overlap.
  auto next = std::upper_bound(state.ready.begin(), state.ready.end(), offset,
                               [](uint64_t at, const auto& range) { return at < range.second; });
  if (next != state.ready.end() && next->first < end) {
    return absl::InvalidArgumentError(
        absl::StrCat(where(), " overlaps range [", next->first, ", ", next->second,
                     ") reported ready before in this batch: a range is final once reported"));
  }
  state.ready.insert(next, {offset, end});
  state.ready_elements += count;
  return absl::OkStatus();
}

bool ReadyRanges::Complete(size_t tensor) const {
  return tensors_[tensor].ready_elements == tensors_[tensor].element_count;
}

bool ReadyRanges::Fill(size_t tensor) {
  Tensor& state = tensors_[tensor];
  if (state.ready_elements == state.element_count) return false;
  state.ready.assign(1, {0, state.element_count});
  state.ready_elements = state.element_count;
  return true;
}

void ReadyRanges::Clear() {
  for (Tensor& state : tensors_) {
    state.ready.clear();
    state.ready_elements = 0;
  }
}

}  // namespace cohort
