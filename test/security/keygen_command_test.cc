// `cohort keygen`: the files it writes load as a key pair and as authorized keys, it prints the
// authorized-keys line, and it never overwrites keys.
#include "harness/cohort/commands/keygen_command.h"

#include <sys/stat.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/security/authorized_keys.h"
#include "runtime/security/curve_keys.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

TEST(KeygenCommandTest, WritesAKeyPairThatLoadsBothWays) {
  TempFolder folder;
  const std::string out = folder / "keys/agents";
  ::testing::internal::CaptureStdout();
  const int code = RunKeygenCommand({"--out", out, "--name", "agent-7"});
  const std::string printed = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(code, 0);

  absl::StatusOr<CurveKeyPair> keys = ReadSecretKeyFile(out + "/agent-7.key");
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(printed, keys->public_key + " agent-7\n");
  struct stat info {};
  ASSERT_EQ(::stat(out.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);

  absl::StatusOr<AuthorizedKeys> authorized = AuthorizedKeys::Load(out);
  ASSERT_TRUE(authorized.ok()) << authorized.status();
  ASSERT_NE(authorized->NameOf(keys->public_key), nullptr);
  EXPECT_EQ(*authorized->NameOf(keys->public_key), "agent-7");

  EXPECT_EQ(RunKeygenCommand({"--out", out, "--name", "agent-7"}), 1);
  EXPECT_EQ(ReadSecretKeyFile(out + "/agent-7.key").value().secret_key, keys->secret_key);
}

TEST(KeygenCommandTest, UsageErrors) {
  TempFolder folder;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunKeygenCommand({}), 2);
  EXPECT_EQ(RunKeygenCommand({"--out"}), 2);
  EXPECT_EQ(RunKeygenCommand({"--out", folder.path(), "--bogus"}), 2);
  EXPECT_EQ(RunKeygenCommand({"--out", folder.path(), "--name", "../escape"}), 1);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              ::testing::HasSubstr("'../escape' is not a key name"));
}

}  // namespace
}  // namespace cohort
