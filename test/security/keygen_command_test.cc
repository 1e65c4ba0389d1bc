// `cohort keygen`: the files it writes load as a key pair and as authorized keys, it prints the
// authorized-keys line, and it never overwrites keys; with --launch, a launched job's keys
// (launch_keys.h).
#include "harness/cohort/commands/keygen_command.h"

#include <sys/stat.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/cohort/run/launch_keys.h"
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

// --launch N: the orchestrator's and every rank's key pair, which the job's orchestrator admits
// under the ranks' names; never over existing keys.
TEST(KeygenCommandTest, TheKeysOfALaunchedJob) {
  TempFolder folder;
  const std::string out = folder / "job";
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(RunKeygenCommand({"--out", out, "--launch", "11"}), 0);
  ::testing::internal::GetCapturedStderr();

  absl::StatusOr<ServerSecurityOptions> server = LaunchServerSecurity(out);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE(server->server_keys && server->authorized_keys);
  for (const char* rank : {"rank-00", "rank-07", "rank-10"}) {
    absl::StatusOr<CurveClientConfig> mine = LaunchAgentKeys(out, rank);
    ASSERT_TRUE(mine.ok()) << rank << ": " << mine.status();
    EXPECT_EQ(mine->key_name, rank);
    EXPECT_EQ(mine->server_public_key, server->server_keys->public_key);
    const std::string* admitted = server->authorized_keys->NameOf(mine->keys.public_key);
    ASSERT_NE(admitted, nullptr) << rank;
    EXPECT_EQ(*admitted, rank);
  }
  absl::StatusOr<CurveClientConfig> missing = LaunchAgentKeys(out, "rank-11");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_THAT(std::string(missing.status().message()), ::testing::HasSubstr("--launch"));

  const std::string before = ReadSecretKeyFile(out + "/rank-03.key").value().secret_key;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunKeygenCommand({"--out", out, "--launch", "11"}), 1);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), ::testing::HasSubstr("never overwritten"));
  EXPECT_EQ(ReadSecretKeyFile(out + "/rank-03.key").value().secret_key, before);

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunKeygenCommand({"--out", out, "--launch", "0"}), 2);
  EXPECT_EQ(RunKeygenCommand({"--out", out, "--launch", "2", "--name", "x"}), 2);
  ::testing::internal::GetCapturedStderr();
}

}  // namespace
}  // namespace cohort
