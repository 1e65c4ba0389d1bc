#include "runtime/trial/record_sampler.h"

#include <algorithm>
#include <utility>

#include "runtime/trial/splitmix64.h"

namespace cohort {

std::vector<uint64_t> ShuffledIndices(uint64_t n, uint64_t seed, uint64_t epoch) {
  std::vector<uint64_t> order(n);
  for (uint64_t i = 0; i < n; ++i) order[i] = i;
  SplitMix64 random(MixSeeds(seed, epoch));
  for (uint64_t i = n; i > 1; --i) {
    std::swap(order[i - 1], order[random.Below(i)]);
  }
  return order;
}

RecordSampler::RecordSampler(uint64_t dataset_size, uint64_t seed, uint64_t global_batch_size,
                             uint32_t rank, uint32_t size)
    : dataset_size_(dataset_size),
      seed_(seed),
      per_slot_(global_batch_size / size),
      rank_(rank),
      size_(size) {}

const std::vector<uint64_t>& RecordSampler::Permutation(uint64_t epoch) {
  for (const CachedEpoch& cached : cache_) {
    if (cached.epoch == epoch) return cached.order;
  }
  // Replace the older of the two entries.
  CachedEpoch& slot = (cache_[0].epoch == UINT64_MAX ||
                       (cache_[1].epoch != UINT64_MAX && cache_[0].epoch < cache_[1].epoch))
                          ? cache_[0]
                          : cache_[1];
  slot.order = ShuffledIndices(dataset_size_, seed_, epoch);
  slot.epoch = epoch;
  return slot.order;
}

BatchSpec RecordSampler::TrainingBatch(uint64_t batch_index) {
  BatchSpec batch;
  batch.split = COHORT_SPLIT_TRAINING;
  batch.batch_index = batch_index;
  const uint64_t first = batch_index * effective_global_batch_size() + rank_ * per_slot_;
  batch.epoch = first / dataset_size_;
  batch.record_indices.reserve(per_slot_);
  // The positions [first, first + per_slot_) of the endless sequence of epochs, copied a run
  // within one epoch at a time.
  const uint64_t end = first + per_slot_;
  for (uint64_t position = first; position < end;) {
    const std::vector<uint64_t>& order = Permutation(position / dataset_size_);
    const uint64_t offset = position % dataset_size_;
    const uint64_t run = std::min(end - position, dataset_size_ - offset);
    batch.record_indices.insert(batch.record_indices.end(), order.begin() + offset,
                                order.begin() + offset + run);
    position += run;
  }
  return batch;
}

uint64_t RecordSampler::ValidationBatchCount(uint64_t validation_size) const {
  const uint64_t global = effective_global_batch_size();
  return (validation_size + global - 1) / global;
}

BatchSpec RecordSampler::ValidationBatch(uint64_t validation_size, uint64_t batch_index) const {
  BatchSpec batch;
  batch.split = COHORT_SPLIT_VALIDATION;
  batch.batch_index = batch_index;
  const uint64_t first =
      std::min(validation_size, batch_index * effective_global_batch_size() + rank_ * per_slot_);
  const uint64_t end = std::min(validation_size, first + per_slot_);
  for (uint64_t record = first; record < end; ++record) batch.record_indices.push_back(record);
  return batch;
}

}  // namespace cohort
