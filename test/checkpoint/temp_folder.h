// Small file helpers the checkpoint tests use to damage a store on purpose, and TempFolder.
#ifndef COHORT_TEST_CHECKPOINT_TEMP_FOLDER_H_
#define COHORT_TEST_CHECKPOINT_TEMP_FOLDER_H_

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "gtest/gtest.h"
#include "test/common/temp_folder.h"

namespace cohort {

// The names in `folder`, sorted; empty if it cannot be read.
inline std::vector<std::string> NamesIn(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

// Flips one bit of the byte at `offset`, keeping the file's size.
inline void FlipBit(const std::string& path, size_t offset) {
  std::string bytes = ReadBytes(path);
  ASSERT_LT(offset, bytes.size()) << path;
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0x10);
  WriteBytes(path, bytes);
}

}  // namespace cohort

#endif  // COHORT_TEST_CHECKPOINT_TEMP_FOLDER_H_
