// TempFolder: a fresh folder for one test, removed with everything in it when the test ends.
//
//   TempFolder folder;
//   WriteSomething(folder / "file");
#ifndef COHORT_TEST_COMMON_TEMP_FOLDER_H_
#define COHORT_TEST_COMMON_TEMP_FOLDER_H_

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "gtest/gtest.h"

namespace cohort {

class TempFolder {
 public:
  TempFolder() {
    std::string pattern = ::testing::TempDir() + "cohort-test-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    EXPECT_FALSE(path_.empty()) << "mkdtemp " << pattern << " failed";
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace cohort

#endif  // COHORT_TEST_COMMON_TEMP_FOLDER_H_
