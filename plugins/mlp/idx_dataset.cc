// idx_dataset.cc -- reading and validating IDX files (see idx_dataset.h).
#include "idx_dataset.h"

#include <cohort/plugin.hpp>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

namespace mlp {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;

// The contents of one IDX file of unsigned bytes.
struct IdxFile {
  std::vector<uint64_t> dims;
  std::vector<uint8_t> values;  // product(dims) bytes
};

[[noreturn]] void Invalid(const std::string& path, const std::string& problem) {
  throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT, "IDX file '" + path + "' " + problem);
}

std::string Hex32(uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08X", value);
  return text;
}

uint32_t BigEndian32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

std::vector<uint8_t> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw cohort::Error(COHORT_STATUS_NOT_FOUND, "cannot open IDX file '" + path + "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) Invalid(path, "could not be read");
  return bytes;
}

// Reads `path` and checks that it holds unsigned bytes in `rank` dimensions, none of them zero,
// and exactly as many values as its header declares.
IdxFile ReadIdx(const std::string& path, uint8_t rank) {
  std::vector<uint8_t> bytes = ReadWholeFile(path);
  const uint32_t expected_magic = uint32_t{kUnsignedByteType} << 8 | rank;
  if (bytes.size() < 4) {
    Invalid(path, "is truncated: " + std::to_string(bytes.size()) +
                      " bytes, too short for the magic number");
  }
  const uint32_t magic = BigEndian32(bytes.data());
  if (magic != expected_magic) {
    Invalid(path, "has magic number " + Hex32(magic) + ", expected " + Hex32(expected_magic) +
                      " (unsigned bytes, " + std::to_string(rank) + " dimensions)");
  }
  const size_t header = 4 + 4 * size_t{rank};
  if (bytes.size() < header) {
    Invalid(path, "is truncated: " + std::to_string(bytes.size()) + " bytes, its header needs " +
                      std::to_string(header));
  }

  IdxFile file;
  const uint64_t payload = bytes.size() - header;
  uint64_t count = 1;
  std::string shape;
  for (size_t d = 0; d < rank; ++d) {
    const uint64_t dim = BigEndian32(bytes.data() + 4 + 4 * d);
    if (dim == 0) Invalid(path, "has a zero dimension");
    file.dims.push_back(dim);
    shape += (d == 0 ? "" : " x ") + std::to_string(dim);
    count = count > payload / dim ? payload + 1 : count * dim;  // saturates past the payload
  }
  if (count != payload) {
    Invalid(path, "has " + std::to_string(payload) + " bytes of values but its header declares " +
                      shape + (count > payload ? " (truncated)" : " (trailing bytes)"));
  }
  file.values.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return file;
}

// Throws NOT_FOUND naming `name` and the files MNIST needs when `dir`/`name` does not exist.
std::string RequireMnistFile(const std::string& dir, const char* name) {
  const std::filesystem::path path = std::filesystem::path(dir) / name;
  if (std::filesystem::exists(path)) return path.string();
  std::string message = "data_dir '" + dir + "' has no file '" + name + "'; MNIST needs " +
                        IdxDataset::kTrainImages + ", " + IdxDataset::kTrainLabels + ", " +
                        IdxDataset::kTestImages + " and " + IdxDataset::kTestLabels +
                        ", uncompressed";
  if (std::filesystem::exists(path.string() + ".gz")) {
    message += " (found " + std::string(name) + ".gz: gzip is not read, run gunzip on it)";
  }
  throw cohort::Error(COHORT_STATUS_NOT_FOUND, message);
}

}  // namespace

std::unique_ptr<IdxDataset> IdxDataset::Open(const std::string& images_path,
                                             const std::string& labels_path) {
  IdxFile images = ReadIdx(images_path, 3);
  IdxFile labels = ReadIdx(labels_path, 1);
  if (images.dims[0] != labels.dims[0]) {
    Invalid(labels_path, "has " + std::to_string(labels.dims[0]) + " labels but '" + images_path +
                             "' has " + std::to_string(images.dims[0]) + " images");
  }
  for (size_t i = 0; i < labels.values.size(); ++i) {
    if (labels.values[i] >= kClassCount) {
      Invalid(labels_path, "has label " + std::to_string(labels.values[i]) + " at record " +
                               std::to_string(i) + ", outside [0, " + std::to_string(kClassCount) +
                               ")");
    }
  }
  const size_t pixels_per_image = images.dims[1] * images.dims[2];
  return std::unique_ptr<IdxDataset>(
      new IdxDataset(std::move(images.values), pixels_per_image, std::move(labels.values)));
}

std::unique_ptr<IdxDataset> IdxDataset::OpenMnist(const std::string& dir, cohort_split split) {
  const bool training = split == COHORT_SPLIT_TRAINING;
  const std::string images = RequireMnistFile(dir, training ? kTrainImages : kTestImages);
  const std::string labels = RequireMnistFile(dir, training ? kTrainLabels : kTestLabels);
  return Open(images, labels);
}

IdxDataset::IdxDataset(std::vector<uint8_t> pixels, size_t pixels_per_image,
                       std::vector<uint8_t> labels)
    : pixels_(std::move(pixels)), pixels_per_image_(pixels_per_image), labels_(std::move(labels)) {}

int32_t IdxDataset::Read(uint64_t index, float* features) const {
  const uint8_t* image = pixels_.data() + index * pixels_per_image_;
  for (size_t p = 0; p < pixels_per_image_; ++p) features[p] = image[p] / 255.0f;
  return labels_[index];
}

}  // namespace mlp
