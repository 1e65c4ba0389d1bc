// ReadyRanges: the ranges of each gradient a plugin reported final in one train_batch
// (host_api.gradients_ready). Ranges of one tensor may not overlap: the host may exchange a range
// as soon as it is reported, so a second report means the plugin wrote it again after that. The
// host checks every report against its own ReadyRanges, so a plugin that breaks the rule fails
// at one slot as at many; the exchange's ReadyTracker keeps one to know when buckets are whole.
//
//   ReadyRanges ranges(arena);
//   if (absl::Status added = ranges.Add(tensor, offset, count); !added.ok()) ...;
//   if (ranges.Complete(tensor)) ...;
//   ranges.Clear();  // the next batch
//
// Thread-safety: not thread-safe; the caller serializes.
#ifndef COHORT_RUNTIME_PLUGIN_READY_RANGES_H_
#define COHORT_RUNTIME_PLUGIN_READY_RANGES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "runtime/arena/tensor_arena.h"

namespace cohort {

class ReadyRanges {
 public:
  // Keeps the names and element counts of `arena`'s tensors (indexed as in the arena); the arena
  // need not outlive it. Nothing is ready.
  explicit ReadyRanges(const TensorArena& arena);

  size_t tensor_count() const { return tensors_.size(); }

  // Records elements [offset, offset + count) of `tensor` as final. INVALID_ARGUMENT naming the
  // tensor and the range for an unknown tensor, an empty range, one past the tensor's end, or one
  // that overlaps a range already recorded since the last Clear; nothing is recorded then.
  absl::Status Add(size_t tensor, uint64_t offset, uint64_t count);

  // Whether every element of `tensor` is recorded (`tensor` < tensor_count()).
  bool Complete(size_t tensor) const;

  // Records what is left of `tensor` as final (`tensor` < tensor_count()); false when it was
  // complete already.
  bool Fill(size_t tensor);

  // Forgets every range, for the next batch.
  void Clear();

 private:
  struct Tensor {
    std::string name;
    uint64_t element_count = 0;
    uint64_t ready_elements = 0;
    std::vector<std::pair<uint64_t, uint64_t>> ready;  // disjoint [begin, end), sorted by begin
  };

  std::vector<Tensor> tensors_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_READY_RANGES_H_
