// cnn_data.h -- the images of the torch_cnn example: MNIST's IDX files, or synthetic shapes.
//
// Both are mlp::Dataset splits (plugins/mlp/dataset.h) of 28 x 28 = 784 pixels in [0, 1], row by
// row, and 10 classes:
// - MNIST: OpenCnnData reads the four uncompressed files of MNIST's distribution from `data_dir`
//   (mlp::IdxDataset: train-* for training, t10k-* for validation); errors name the file.
// - SyntheticShapes, when `data_dir` is empty: one stroked shape per image, drawn at a random
//   position, size, angle and stroke width among two short clutter strokes, over uniform noise.
//   Record `index` of a split is a pure function of (split, index) (mlp::rng, keyed by a fixed
//   dataset seed, not the trial's, and by the split, so the splits share no record). The rule,
//   with every draw uniform:
//     label    the record's first draw, mod 10;
//     shape    label 0: a horizontal bar, 1: a vertical bar, 2: a diagonal "\", 3: an
//              anti-diagonal "/", 4: a plus, 5: an X, 6: a square outline, 7: a triangle outline,
//              8: a circle, 9: a T, each filling a box of half-side `size`;
//     size     4 to 8 pixels; the centre anywhere that keeps the turned box inside the image;
//     angle    -0.35 to 0.35 radians (about +-20 degrees) about the centre;
//     stroke   half-width 0.6 to 1.3 pixels, anti-aliased (full within it, fading over one
//              pixel at its edge); ink 0.6 to 1.0, times min(1, 4 / the outline's length in
//              half-sides), so long outlines (square 8, circle 6.3) are fainter than short ones
//              (bar 2, plus 4) and the total ink says little about the class;
//     clutter  2 strokes of length 2 to 4 pixels at any angle, centred anywhere at least 2 pixels
//              from the border, at the unscaled ink;
//     pixel    clamp(max(shape, clutter) + noise, 0, 1), noise in [-0.3, 0.3] per pixel.
//   The class is the shape's form, not where it is, how large or how bright, so a network must
//   find strokes and their arrangement wherever they are: convolutions with pooling do, a linear
//   model on the pixels does not (the figures are in cnn_data.cc).
//
// Thread-safety: datasets are const after construction; Read may run on several threads.
#ifndef COHORT_PLUGINS_TORCH_CNN_CNN_DATA_H_
#define COHORT_PLUGINS_TORCH_CNN_CNN_DATA_H_

#include <cohort/plugin.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "dataset.h"

namespace torch_cnn {

inline constexpr size_t kPixels = 28 * 28;

class SyntheticShapes : public mlp::Dataset {
 public:
  // `split` is COHORT_SPLIT_TRAINING or COHORT_SPLIT_VALIDATION (throws std::invalid_argument
  // otherwise, or for records >= 2^62).
  SyntheticShapes(cohort_split split, uint64_t records);

  uint64_t size() const override { return records_; }
  size_t input_size() const override { return kPixels; }
  size_t class_count() const override { return 10; }
  int32_t Read(uint64_t index, float* pixels) const override;

 private:
  uint64_t key_;  // this split's stream
  uint64_t records_;
};

// Where the data comes from: MNIST's files in `data_dir`, or synthetic shapes when it is empty.
struct DataOptions {
  std::string data_dir;
  uint64_t synthetic_train_records = 60000;
  uint64_t synthetic_validation_records = 10000;
};

struct CnnData {
  std::unique_ptr<mlp::Dataset> training;
  std::unique_ptr<mlp::Dataset> validation;
  const mlp::Dataset& split(cohort_split s) const {
    return s == COHORT_SPLIT_TRAINING ? *training : *validation;
  }
};

// Opens both splits. Throws cohort::Error: NOT_FOUND or INVALID_ARGUMENT naming the file for
// MNIST's files (see idx_dataset.h), INVALID_ARGUMENT when they are not 28 x 28 images or a
// synthetic split has no record.
CnnData OpenCnnData(const DataOptions& options);

}  // namespace torch_cnn

#endif  // COHORT_PLUGINS_TORCH_CNN_CNN_DATA_H_
