#include "runtime/exchange/ready_tracker.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace cohort {

absl::StatusOr<ReadyTracker> ReadyTracker::Create(const std::vector<GradientBucket>& plan,
                                                  const TensorArena& arena) {
  ReadyTracker tracker;
  tracker.tensors_.resize(arena.tensor_count());
  std::vector<bool> planned(arena.tensor_count(), false);
  for (size_t bucket = 0; bucket < plan.size(); ++bucket) {
    for (size_t tensor : plan[bucket].tensors) {
      if (tensor >= arena.tensor_count()) {
        return absl::InvalidArgumentError(absl::StrCat("bucket ", bucket, " names tensor ", tensor,
                                                       " but the arena has ", arena.tensor_count(),
                                                       " tensors"));
      }
      const std::string& name = arena.spec(tensor).name;
      if (planned[tensor]) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", name, "' (", tensor, ") is in more than one bucket"));
      }
      if (arena.placement(tensor).block != plan[bucket].block) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor '", name, "' (", tensor, ") is in bucket ", bucket, " of another block"));
      }
      planned[tensor] = true;
      tracker.tensors_[tensor] =
          TensorState{name, arena.placement(tensor).element_count, bucket, 0, {}};
    }
    tracker.bucket_tensors_.push_back(plan[bucket].tensors.size());
  }
  for (size_t tensor = 0; tensor < planned.size(); ++tensor) {
    if (!planned[tensor]) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", arena.spec(tensor).name, "' (", tensor, ") is in no bucket"));
    }
  }
  tracker.bucket_pending_ = tracker.bucket_tensors_;
  return tracker;
}

absl::StatusOr<std::vector<size_t>> ReadyTracker::MarkReady(size_t tensor, uint64_t offset,
                                                            uint64_t count) {
  if (tensor >= tensors_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("gradients_ready: tensor ", tensor,
                                                   " does not exist (", tensors_.size(),
                                                   " tensors registered)"));
  }
  TensorState& state = tensors_[tensor];
  const std::string where = absl::StrCat("gradients_ready: tensor '", state.name, "' (", tensor,
                                         "), range [", offset, ", ", offset + count, ")");
  if (count == 0) return absl::InvalidArgumentError(absl::StrCat(where, " is empty"));
  if (offset > state.element_count || count > state.element_count - offset) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " is past the tensor's end (", state.element_count, " elements)"));
  }
  const uint64_t end = offset + count;
  // The first recorded range that ends after `offset` is the only one that could overlap.
  auto next = std::upper_bound(state.ready.begin(), state.ready.end(), offset,
                               [](uint64_t at, const auto& range) { return at < range.second; });
  if (next != state.ready.end() && next->first < end) {
    return absl::InvalidArgumentError(absl::StrCat(where, " overlaps range [", next->first, ", ",
                                                   next->second, ") already reported ready"));
  }
  state.ready.insert(next, {offset, end});
  state.ready_elements += count;
  if (state.ready_elements < state.element_count) return std::vector<size_t>{};
  CompleteTensor(tensor);
  return Launchable();
}

std::vector<size_t> ReadyTracker::MarkAllReady() {
  for (size_t tensor = tensors_.size(); tensor-- > 0;) {
    TensorState& state = tensors_[tensor];
    if (state.ready_elements == state.element_count) continue;
    state.ready.assign(1, {0, state.element_count});
    state.ready_elements = state.element_count;
    CompleteTensor(tensor);
  }
  return Launchable();
}

void ReadyTracker::Reset() {
  for (TensorState& state : tensors_) {
    state.ready.clear();
    state.ready_elements = 0;
  }
  bucket_pending_ = bucket_tensors_;
  next_launch_ = 0;
  completed_.clear();
}

void ReadyTracker::CompleteTensor(size_t tensor) {
  --bucket_pending_[tensors_[tensor].bucket];
  completed_.push_back(tensor);
}

std::vector<size_t> ReadyTracker::Launchable() {
  std::vector<size_t> launch;
  while (next_launch_ < bucket_pending_.size() && bucket_pending_[next_launch_] == 0) {
    launch.push_back(next_launch_++);
  }
  return launch;
}

}  // namespace cohort
