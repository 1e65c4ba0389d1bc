// dataset.h -- the interface the MLP reads its records through.
//
// A dataset is one split (training or validation) of labelled records, each a fixed number of
// float features and an integer class. Implementations: SyntheticDataset (generated from the
// record index) and IdxDataset (MNIST's IDX files).
//
// Thread-safety: every method is const and safe to call from several threads at once.
#ifndef COHORT_PLUGINS_MLP_DATASET_H_
#define COHORT_PLUGINS_MLP_DATASET_H_

#include <cstddef>
#include <cstdint>

namespace mlp {

class Dataset {
 public:
  virtual ~Dataset() = default;

  // Number of records; valid indices are [0, size()).
  virtual uint64_t size() const = 0;
  // Features per record.
  virtual size_t input_size() const = 0;
  // Labels are in [0, class_count()).
  virtual size_t class_count() const = 0;

  // Writes record `index`'s input_size() features into `features` and returns its label.
  // Requires index < size(). The same index always gives the same record.
  virtual int32_t Read(uint64_t index, float* features) const = 0;
};

}  // namespace mlp

#endif  // COHORT_PLUGINS_MLP_DATASET_H_
