// idx_dataset.h -- MNIST-style classification data from IDX files.
//
// IDX (http://yann.lecun.com/exdb/mnist/) is a big-endian header -- two zero bytes, a type code
// (0x08: unsigned bytes), the number of dimensions, then one uint32 per dimension -- followed by
// the values. An IdxDataset pairs an image file (3 dimensions: count x rows x cols) with a label
// file (1 dimension: count) and holds both in memory. Pixels are scaled to [0, 1]; labels must be
// digits, 0 to 9. gzip-compressed files are not read: decompress them first.
//
// Example:
//   std::unique_ptr<mlp::IdxDataset> train =
//       mlp::IdxDataset::OpenMnist("/data/mnist", COHORT_SPLIT_TRAINING);
//
// Errors are thrown as cohort::Error, each message naming the file: NOT_FOUND for a missing file,
// INVALID_ARGUMENT for a bad magic number, wrong dimensions, a size that does not match the
// header, a label out of range, or an image and label file of different lengths.
//
// Thread-safety: const after construction.
#ifndef COHORT_PLUGINS_MLP_IDX_DATASET_H_
#define COHORT_PLUGINS_MLP_IDX_DATASET_H_

#include <cohort/plugin.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dataset.h"

namespace mlp {

class IdxDataset : public Dataset {
 public:
  // The file names of MNIST's distribution, inside `dir`.
  static constexpr const char* kTrainImages = "train-images-idx3-ubyte";
  static constexpr const char* kTrainLabels = "train-labels-idx1-ubyte";
  static constexpr const char* kTestImages = "t10k-images-idx3-ubyte";
  static constexpr const char* kTestLabels = "t10k-labels-idx1-ubyte";
  static constexpr size_t kClassCount = 10;

  // Reads an image file and its label file.
  static std::unique_ptr<IdxDataset> Open(const std::string& images_path,
                                          const std::string& labels_path);
  // MNIST's training files in `dir` for COHORT_SPLIT_TRAINING, its t10k files for validation.
  static std::unique_ptr<IdxDataset> OpenMnist(const std::string& dir, cohort_split split);

  uint64_t size() const override { return labels_.size(); }
  size_t input_size() const override { return pixels_per_image_; }
  size_t class_count() const override { return kClassCount; }
  int32_t Read(uint64_t index, float* features) const override;

 private:
  IdxDataset(std::vector<uint8_t> pixels, size_t pixels_per_image, std::vector<uint8_t> labels);

  std::vector<uint8_t> pixels_;  // size() x pixels_per_image_, row-major
  size_t pixels_per_image_;
  std::vector<uint8_t> labels_;
};

}  // namespace mlp

#endif  // COHORT_PLUGINS_MLP_IDX_DATASET_H_
