// idx_dataset_test.cc -- IdxDataset on tiny IDX files written by the test: reading, MNIST's file
// names, and the error (code and message) for each kind of bad input.
#include "idx_dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cohort/plugin.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace mlp {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

// An IDX file: magic number, big-endian dimensions, then `values`.
std::vector<uint8_t> IdxBytes(uint32_t magic, const std::vector<uint32_t>& dims,
                              const std::vector<uint8_t>& values) {
  std::vector<uint8_t> bytes;
  auto put32 = [&bytes](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(v >> shift));
  };
  put32(magic);
  for (uint32_t d : dims) put32(d);
  bytes.insert(bytes.end(), values.begin(), values.end());
  return bytes;
}

// Runs `body`, expecting a cohort::Error, and returns it.
cohort::Error ErrorFrom(const std::function<void()>& body) {
  try {
    body();
  } catch (const cohort::Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a cohort::Error";
  return cohort::Error(0, "");
}

class IdxDatasetTest : public ::testing::Test {
 protected:
  IdxDatasetTest()
      : dir_(fs::temp_directory_path() /
             ("idx_dataset_test_" + std::to_string(getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::create_directories(dir_);
  }
  ~IdxDatasetTest() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path.string();
  }

  // Three 2x2 images and their labels.
  std::string WriteImages(const std::string& name = "images") {
    return Write(name, IdxBytes(0x803, {3, 2, 2}, {0, 51, 102, 255, 1, 2, 3, 4, 5, 6, 7, 8}));
  }
  std::string WriteLabels(const std::string& name = "labels") {
    return Write(name, IdxBytes(0x801, {3}, {7, 0, 9}));
  }

  fs::path dir_;
};

TEST_F(IdxDatasetTest, ReadsImagesScaledToUnitRangeWithTheirLabels) {
  const auto data = IdxDataset::Open(WriteImages(), WriteLabels());
  EXPECT_EQ(data->size(), 3u);
  EXPECT_EQ(data->input_size(), 4u);
  EXPECT_EQ(data->class_count(), 10u);
  std::vector<float> features(4);
  EXPECT_EQ(data->Read(0, features.data()), 7);
  EXPECT_THAT(features, ::testing::Pointwise(::testing::FloatEq(), {0.0f, 0.2f, 0.4f, 1.0f}));
  EXPECT_EQ(data->Read(2, features.data()), 9);
  EXPECT_FLOAT_EQ(features[3], 8.0f / 255);
}

TEST_F(IdxDatasetTest, OpenMnistPicksTheTrainingOrTestFiles) {
  WriteImages(IdxDataset::kTrainImages);
  WriteLabels(IdxDataset::kTrainLabels);
  Write(IdxDataset::kTestImages, IdxBytes(0x803, {1, 1, 3}, {1, 2, 3}));
  Write(IdxDataset::kTestLabels, IdxBytes(0x801, {1}, {4}));
  EXPECT_EQ(IdxDataset::OpenMnist(dir_.string(), COHORT_SPLIT_TRAINING)->size(), 3u);
  const auto validation = IdxDataset::OpenMnist(dir_.string(), COHORT_SPLIT_VALIDATION);
  EXPECT_EQ(validation->size(), 1u);
  EXPECT_EQ(validation->input_size(), 3u);
}

TEST_F(IdxDatasetTest, MissingMnistFileNamesItAndTheExpectedNames) {
  const cohort::Error e =
      ErrorFrom([&] { IdxDataset::OpenMnist(dir_.string(), COHORT_SPLIT_TRAINING); });
  EXPECT_EQ(e.code(), COHORT_STATUS_NOT_FOUND);
  EXPECT_THAT(e.what(),
              AllOf(HasSubstr(dir_.string()), HasSubstr("'train-images-idx3-ubyte'"),
                    HasSubstr("train-labels-idx1-ubyte"), HasSubstr("t10k-images-idx3-ubyte"),
                    HasSubstr("t10k-labels-idx1-ubyte")));
  EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("gunzip")));
}

TEST_F(IdxDatasetTest, CompressedMnistFileIsPointedOut) {
  WriteImages(IdxDataset::kTestImages);
  Write(std::string(IdxDataset::kTestLabels) + ".gz", {0x1f, 0x8b});
  const cohort::Error e =
      ErrorFrom([&] { IdxDataset::OpenMnist(dir_.string(), COHORT_SPLIT_VALIDATION); });
  EXPECT_EQ(e.code(), COHORT_STATUS_NOT_FOUND);
  EXPECT_THAT(e.what(), AllOf(HasSubstr("'t10k-labels-idx1-ubyte'"),
                              HasSubstr("t10k-labels-idx1-ubyte.gz"), HasSubstr("gunzip")));
}

TEST_F(IdxDatasetTest, MissingFileIsNotFound) {
  const std::string labels = WriteLabels();
  const cohort::Error e = ErrorFrom([&] { IdxDataset::Open((dir_ / "nope").string(), labels); });
  EXPECT_EQ(e.code(), COHORT_STATUS_NOT_FOUND);
  EXPECT_THAT(e.what(), HasSubstr((dir_ / "nope").string()));
}

TEST_F(IdxDatasetTest, BadMagicNumberIsNamed) {
  // A label file passed as the images: one dimension instead of three.
  const std::string labels = WriteLabels();
  const cohort::Error e = ErrorFrom([&] { IdxDataset::Open(labels, labels); });
  EXPECT_EQ(e.code(), COHORT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), AllOf(HasSubstr(labels), HasSubstr("magic number 0x00000801"),
                              HasSubstr("expected 0x00000803")));

  // Not unsigned bytes (0x0D is float).
  const std::string floats = Write("floats", IdxBytes(0xD03, {1, 1, 1}, {0, 0, 0, 0}));
  EXPECT_THAT(ErrorFrom([&] { IdxDataset::Open(floats, labels); }).what(),
              HasSubstr("magic number 0x00000D03"));
}

TEST_F(IdxDatasetTest, TruncatedFilesAreRejected) {
  const std::string labels = WriteLabels();
  const std::string short_values = Write("short", IdxBytes(0x803, {3, 2, 2}, {1, 2, 3}));
  cohort::Error e = ErrorFrom([&] { IdxDataset::Open(short_values, labels); });
  EXPECT_EQ(e.code(), COHORT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(),
              AllOf(HasSubstr(short_values), HasSubstr("3 x 2 x 2"), HasSubstr("truncated")));

  const std::string short_header = Write("header", {0, 0, 8, 3, 0, 0});
  e = ErrorFrom([&] { IdxDataset::Open(short_header, labels); });
  EXPECT_EQ(e.code(), COHORT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), AllOf(HasSubstr(short_header), HasSubstr("truncated")));

  const std::string empty = Write("empty", {});
  EXPECT_THAT(ErrorFrom([&] { IdxDataset::Open(empty, labels); }).what(),
              AllOf(HasSubstr(empty), HasSubstr("truncated")));
}

TEST_F(IdxDatasetTest, TrailingBytesAreRejected) {
  const std::string images = WriteImages();
  const std::string labels = Write("long", IdxBytes(0x801, {3}, {1, 2, 3, 4}));
  const cohort::Error e = ErrorFrom([&] { IdxDataset::Open(images, labels); });
  EXPECT_EQ(e.code(), COHORT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), AllOf(HasSubstr(labels), HasSubstr("trailing")));
}

TEST_F(IdxDatasetTest, HugeDimensionsDoNotOverflow) {
  const std::string labels = WriteLabels();
  const std::string huge =
      Write("huge", IdxBytes(0x803, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, {1, 2, 3, 4}));
  EXPECT_THAT(ErrorFrom([&] { IdxDataset::Open(huge, labels); }).what(), HasSubstr("truncated"));
}

TEST_F(IdxDatasetTest, ImageAndLabelCountsMustAgree) {
  const std::string images = WriteImages();
  const std::string labels = Write("two", IdxBytes(0x801, {2}, {1, 2}));
  const cohort::Error e = ErrorFrom([&] { IdxDataset::Open(images, labels); });
  EXPECT_EQ(e.code(), COHORT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), AllOf(HasSubstr("2 labels"), HasSubstr("3 images")));
}

TEST_F(IdxDatasetTest, LabelsMustBeDigits) {
  const std::string images = WriteImages();
  const std::string labels = Write("ten", IdxBytes(0x801, {3}, {1, 10, 2}));
  const cohort::Error e = ErrorFrom([&] { IdxDataset::Open(images, labels); });
  EXPECT_EQ(e.code(), COHORT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), AllOf(HasSubstr(labels), HasSubstr("label 10 at record 1")));
}

TEST_F(IdxDatasetTest, ZeroDimensionIsRejected) {
  const std::string images = Write("flat", IdxBytes(0x803, {3, 0, 2}, {}));
  const cohort::Error e = ErrorFrom([&] { IdxDataset::Open(images, WriteLabels()); });
  EXPECT_EQ(e.code(), COHORT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), HasSubstr("zero dimension"));
}

}  // namespace
}  // namespace mlp
