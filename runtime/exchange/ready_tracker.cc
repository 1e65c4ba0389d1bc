#include "runtime/exchange/ready_tracker.h"

#include "absl/strings/str_cat.h"

namespace cohort {

absl::StatusOr<ReadyTracker> ReadyTracker::Create(const std::vector<GradientBucket>& plan,
                                                  const TensorArena& arena) {
  ReadyTracker tracker(arena);
  tracker.bucket_of_.resize(arena.tensor_count());
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
      tracker.bucket_of_[tensor] = bucket;
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
  if (absl::Status added = ranges_.Add(tensor, offset, count); !added.ok()) return added;
  if (!ranges_.Complete(tensor)) return std::vector<size_t>{};
  CompleteTensor(tensor);
  return Launchable();
}

std::vector<size_t> ReadyTracker::MarkAllReady() {
  for (size_t tensor = ranges_.tensor_count(); tensor-- > 0;) {
    if (ranges_.Fill(tensor)) CompleteTensor(tensor);
  }
  return Launchable();
}

void ReadyTracker::Reset() {
  ranges_.Clear();
  bucket_pending_ = bucket_tensors_;
  next_launch_ = 0;
  completed_.clear();
}

void ReadyTracker::CompleteTensor(size_t tensor) {
  --bucket_pending_[bucket_of_[tensor]];
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
