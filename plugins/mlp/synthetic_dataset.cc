// synthetic_dataset.cc -- record generation and the teacher network of SyntheticDataset.
#include "synthetic_dataset.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "counter_rng.h"

namespace mlp {
namespace {

// Fixed for every trial: the data is part of the example, not of the experiment.
constexpr uint64_t kDatasetSeed = 0x5eed0fc0117a7aULL;
// Training records are positions [0, 2^62) of the record stream, validation [2^62, 2^63).
constexpr uint64_t kValidationStream = uint64_t{1} << 62;
// The teacher's hidden width and the scale of its tanh inputs: wider and steeper give more
// tangled class boundaries (a harder problem).
constexpr size_t kTeacherHidden = 8;
constexpr double kTeacherGain = 1.5;

// Sub-streams of kDatasetSeed.
constexpr uint64_t kFeatureStream = 1;
constexpr uint64_t kTeacherInStream = 2;
constexpr uint64_t kTeacherOutStream = 3;

}  // namespace

SyntheticDataset::SyntheticDataset(cohort_split split, uint64_t records, size_t input_size,
                                   size_t class_count)
    : stream_(split == COHORT_SPLIT_VALIDATION ? kValidationStream : 0),
      records_(records),
      input_size_(input_size),
      class_count_(class_count) {
  if (split != COHORT_SPLIT_TRAINING && split != COHORT_SPLIT_VALIDATION) {
    throw std::invalid_argument("unknown split");
  }
  if (records >= kValidationStream) throw std::invalid_argument("too many synthetic records");
  if (input_size < 1) throw std::invalid_argument("synthetic data needs at least one input");
  if (class_count < 2) throw std::invalid_argument("synthetic data needs at least two classes");

  // Uniform weights with unit variance per output before the gain: U(-sqrt(3/n), sqrt(3/n)).
  const double in_limit = kTeacherGain * std::sqrt(3.0 / static_cast<double>(input_size));
  const uint64_t in_key = rng::DeriveKey(kDatasetSeed, kTeacherInStream);
  teacher_in_.resize(input_size * kTeacherHidden);
  for (size_t i = 0; i < teacher_in_.size(); ++i) {
    teacher_in_[i] = rng::UniformDouble(in_key, i, -in_limit, in_limit);
  }
  const uint64_t out_key = rng::DeriveKey(kDatasetSeed, kTeacherOutStream);
  teacher_out_.resize(class_count * kTeacherHidden);
  for (size_t i = 0; i < teacher_out_.size(); ++i) {
    teacher_out_[i] = rng::UniformDouble(out_key, i, -1.0, 1.0);
  }
}

int32_t SyntheticDataset::Read(uint64_t index, float* features) const {
  const uint64_t key =
      rng::DeriveKey(rng::DeriveKey(kDatasetSeed, kFeatureStream), stream_ + index);
  for (size_t k = 0; k < input_size_; ++k) features[k] = rng::UniformFloat(key, k, -1.0f, 1.0f);

  // The teacher, in double on the float features the student sees.
  double hidden[kTeacherHidden] = {};
  for (size_t k = 0; k < input_size_; ++k) {
    const double* row = teacher_in_.data() + k * kTeacherHidden;
    for (size_t h = 0; h < kTeacherHidden; ++h) hidden[h] += features[k] * row[h];
  }
  for (double& h : hidden) h = std::tanh(h);
  size_t best = 0;
  double best_logit = -HUGE_VAL;
  for (size_t c = 0; c < class_count_; ++c) {
    const double* row = teacher_out_.data() + c * kTeacherHidden;
    double logit = 0;
    for (size_t h = 0; h < kTeacherHidden; ++h) logit += hidden[h] * row[h];
    if (logit > best_logit) {
      best_logit = logit;
      best = c;
    }
  }
  return static_cast<int32_t>(best);
}

}  // namespace mlp
