// RecordSampler: which records each batch holds, the same on every run and for every slot count.
//
// Training reads an endless stream of epochs; epoch e is a shuffle of 0 .. dataset_size-1 seeded
// from (seed, e). Global batch t is stream positions [t*B, (t+1)*B) with B = per_slot * size, and
// rank r takes the r-th contiguous slice of per_slot records. So global batch t holds the same
// records whatever `size` is (as long as the global batch divides evenly), which is what lets a
// data-parallel run be checked against one slot. A batch may straddle two epochs; its `epoch` is
// the epoch of its first record.
//
// Validation is not shuffled: batch k is positions [k*B, (k+1)*B) of 0 .. dataset_size-1, cut at
// the end; a rank with no share of the last batch gets zero records.
//
//   RecordSampler sampler(60000, /*seed=*/42, /*global_batch_size=*/32, /*rank=*/0, /*size=*/1);
//   BatchSpec batch = sampler.TrainingBatch(7);
//
// The sampler keeps no state beyond a cache: batch t depends only on the constructor arguments and
// t, so resuming needs nothing but the number of batches trained.
// Thread-safety: not thread-safe (TrainingBatch fills the cache).
#ifndef COHORT_RUNTIME_TRIAL_RECORD_SAMPLER_H_
#define COHORT_RUNTIME_TRIAL_RECORD_SAMPLER_H_

#include <cstdint>
#include <vector>

#include "runtime/plugin/loaded_model.h"

namespace cohort {

class RecordSampler {
 public:
  // Requires dataset_size >= 1, size >= 1, rank < size and global_batch_size >= size.
  RecordSampler(uint64_t dataset_size, uint64_t seed, uint64_t global_batch_size, uint32_t rank,
                uint32_t size);

  uint64_t per_slot_batch_size() const { return per_slot_; }
  // per_slot_batch_size * size: the records one global training batch really holds.
  uint64_t effective_global_batch_size() const { return per_slot_ * size_; }

  BatchSpec TrainingBatch(uint64_t batch_index);

  // Number of validation batches that cover a split of `validation_size` records once.
  uint64_t ValidationBatchCount(uint64_t validation_size) const;
  BatchSpec ValidationBatch(uint64_t validation_size, uint64_t batch_index) const;

 private:
  const std::vector<uint64_t>& Permutation(uint64_t epoch);

  uint64_t dataset_size_;
  uint64_t seed_;
  uint64_t per_slot_;
  uint32_t rank_;
  uint32_t size_;

  // The two most recent epochs' permutations (a batch touches at most two).
  struct CachedEpoch {
    uint64_t epoch = UINT64_MAX;
    std::vector<uint64_t> order;
  };
  CachedEpoch cache_[2];
};

// The shuffle of 0 .. n-1 for (seed, epoch): Fisher-Yates driven by a SplitMix64 stream, defined
// here bit for bit so it never changes with the standard library.
std::vector<uint64_t> ShuffledIndices(uint64_t n, uint64_t seed, uint64_t epoch);

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_RECORD_SAMPLER_H_
