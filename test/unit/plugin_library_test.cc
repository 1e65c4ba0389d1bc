// Every refusal path of PluginLibrary::Open, each proved with a real (defective) plugin.
#include "runtime/plugin/plugin_library.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/unit/test_plugins.h"

namespace cohort {
namespace {

using ::testing::AllOf;
using testing::DefectivePlugin;
using ::testing::HasSubstr;
using testing::PluginPath;

std::string RefusalOf(const std::string& path) {
  absl::StatusOr<std::shared_ptr<const PluginLibrary>> plugin = PluginLibrary::Open(path);
  EXPECT_FALSE(plugin.ok()) << path << " was accepted";
  return plugin.ok() ? "" : std::string(plugin.status().message());
}

TEST(PluginLibraryTest, LoadsTheCReferencePlugin) {
  auto plugin = PluginLibrary::Open(PluginPath("test/c_quadratic.so"));
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->name(), "c_quadratic");
  EXPECT_EQ((*plugin)->abi_version().major, 1u);
  EXPECT_TRUE((*plugin)->has_state());
  EXPECT_FALSE((*plugin)->has_optimizer());
}

TEST(PluginLibraryTest, RefusesAMissingFile) {
  const std::string path = PluginPath("test/no_such_plugin.so");
  EXPECT_EQ(RefusalOf(path), "plugin '" + path + "': file not found");
}

TEST(PluginLibraryTest, RefusesAFileThatIsNotASharedLibrary) {
  const std::string path = ::testing::TempDir() + "/not_a_library.so";
  std::ofstream(path) << "This is a text file that happens to be named like a plugin: not ELF.\n";
  EXPECT_THAT(RefusalOf(path), AllOf(HasSubstr(path), HasSubstr("not a loadable shared library"),
                                     HasSubstr("invalid ELF header")));
  std::remove(path.c_str());
}

// A plugin built for another machine: the reference plugin with its ELF machine set to s390 (an
// aarch64 plugin on x86_64 is the usual case; dlopen alone says "No such file or directory").
TEST(PluginLibraryTest, NamesTheMachineAPluginWasBuiltFor) {
  std::ifstream in(PluginPath("test/c_quadratic.so"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 20u);
  bytes[18] = 22;  // e_machine = EM_S390, little-endian
  bytes[19] = 0;
  const std::string path = ::testing::TempDir() + "/s390_plugin.so";
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_THAT(RefusalOf(path), AllOf(HasSubstr(path), HasSubstr("built for s390 (64-bit), but "
                                                                "this machine runs ")));
  std::remove(path.c_str());
}

TEST(PluginLibraryTest, RefusesADirectory) {
  EXPECT_THAT(RefusalOf(PluginPath("test")), HasSubstr("not a regular file"));
}

TEST(PluginLibraryTest, RefusesAMissingEntrySymbol) {
  EXPECT_THAT(RefusalOf(DefectivePlugin("no_entry")),
              HasSubstr("entry symbol 'cohort_plugin_entry' not found"));
}

TEST(PluginLibraryTest, RefusesANullTable) {
  EXPECT_THAT(RefusalOf(DefectivePlugin("null_table")),
              HasSubstr("cohort_plugin_entry returned NULL"));
}

TEST(PluginLibraryTest, RefusesATableTooSmallForItsVersion) {
  EXPECT_THAT(RefusalOf(DefectivePlugin("tiny_table")),
              HasSubstr("struct_size is 4 bytes, too small to hold even its ABI version"));
}

// This host's version, as refusals name it.
const std::string kHostVersion =
    std::to_string(COHORT_ABI_VERSION_MAJOR) + "." + std::to_string(COHORT_ABI_VERSION_MINOR);

TEST(PluginLibraryTest, RefusesAnotherMajorNamingBothVersions) {
  EXPECT_THAT(RefusalOf(DefectivePlugin("other_major")),
              HasSubstr("built for Cohort ABI 2.3, but this host implements ABI " + kHostVersion));
}

TEST(PluginLibraryTest, RefusesATableSmallerThanTheFirstReleaseOfItsMajor) {
  EXPECT_THAT(RefusalOf(DefectivePlugin("small_table")),
              HasSubstr("smaller than the 112 bytes of ABI 1.0's cohort_plugin_api"));
}

TEST(PluginLibraryTest, RefusesAPluginNeedingANewerHostMinor) {
  EXPECT_THAT(RefusalOf(DefectivePlugin("newer_host")),
              HasSubstr("needs a host of ABI 1." + std::to_string(COHORT_ABI_VERSION_MINOR + 7) +
                        " or later, but this host implements ABI " + kHostVersion));
}

TEST(PluginLibraryTest, NamesEveryMissingRequiredFunction) {
  EXPECT_THAT(RefusalOf(DefectivePlugin("missing_functions")),
              HasSubstr("required functions train_batch, evaluate_batch missing"));
}

TEST(PluginLibraryTest, RefusesSaveStateWithoutLoadState) {
  EXPECT_THAT(RefusalOf(DefectivePlugin("half_state")),
              HasSubstr("save_state is set without load_state"));
}

TEST(PluginLibraryTest, RefusesANamelessPlugin) {
  EXPECT_THAT(RefusalOf(DefectivePlugin("no_name")), HasSubstr("the plugin table has no name"));
}

TEST(PluginLibraryTest, StatusCodesSayWhatKindOfProblem) {
  EXPECT_EQ(PluginLibrary::Open(PluginPath("test/none.so")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(PluginLibrary::Open(DefectivePlugin("other_major")).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace cohort
