// AuthorizedKeys: the file of `<key> <name>` lines, a folder of NAME.pub files, and uniqueness.
#include "runtime/security/authorized_keys.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/security/curve_keys.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

std::string NewPublicKey() { return GenerateCurveKeyPair().value().public_key; }

TEST(AuthorizedKeysTest, LoadsAFileOfNamedKeys) {
  TempFolder folder;
  const std::string a = NewPublicKey();
  const std::string b = NewPublicKey();
  std::ofstream(folder / "authorized_keys") << "# the agents\n\n"
                                            << a << " agent-1\n  " << b << "\tagent-2  \n";
  absl::StatusOr<AuthorizedKeys> keys = AuthorizedKeys::Load(folder / "authorized_keys");
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->size(), 2u);
  ASSERT_NE(keys->NameOf(a), nullptr);
  EXPECT_EQ(*keys->NameOf(a), "agent-1");
  EXPECT_EQ(*keys->NameOf(b), "agent-2");
  EXPECT_EQ(keys->NameOf(NewPublicKey()), nullptr);
}

TEST(AuthorizedKeysTest, ErrorsNameTheLine) {
  TempFolder folder;
  const std::string a = NewPublicKey();
  std::ofstream(folder / "dup_key") << a << " one\n" << a << " two\n";
  absl::StatusOr<AuthorizedKeys> dup_key = AuthorizedKeys::Load(folder / "dup_key");
  EXPECT_EQ(dup_key.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(dup_key.status().message(), HasSubstr("dup_key:2: "));

  std::ofstream(folder / "dup_name") << a << " one\n" << NewPublicKey() << " one\n";
  EXPECT_THAT(AuthorizedKeys::Load(folder / "dup_name").status().message(),
              HasSubstr("name 'one'"));

  std::ofstream(folder / "no_name") << "# header\n" << a << "\n";
  EXPECT_THAT(AuthorizedKeys::Load(folder / "no_name").status().message(),
              HasSubstr("no_name:2: expected"));

  std::ofstream(folder / "bad_key") << "abc agent\n";
  EXPECT_EQ(AuthorizedKeys::Load(folder / "bad_key").status().code(),
            absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(AuthorizedKeys::Load(folder / "missing").status().code(), absl::StatusCode::kNotFound);
}

TEST(AuthorizedKeysTest, LoadsAFolderOfPublicKeyFiles) {
  TempFolder folder;
  const CurveKeyPair a = GenerateCurveKeyPair().value();
  const CurveKeyPair b = GenerateCurveKeyPair().value();
  ASSERT_TRUE(WritePublicKeyFile(folder / "agent-1.pub", "agent-1", a.public_key).ok());
  ASSERT_TRUE(WritePublicKeyFile(folder / "client.pub", "client", b.public_key).ok());
  // Not a .pub file: ignored, even though it holds a key.
  ASSERT_TRUE(WriteSecretKeyFile(folder / "orchestrator.key", "orchestrator",
                                 GenerateCurveKeyPair().value())
                  .ok());
  absl::StatusOr<AuthorizedKeys> keys = AuthorizedKeys::Load(folder.path());
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->size(), 2u);
  EXPECT_EQ(*keys->NameOf(a.public_key), "agent-1");
  EXPECT_EQ(*keys->NameOf(b.public_key), "client");
}

TEST(AuthorizedKeysTest, AddChecksKeysAndNames) {
  AuthorizedKeys keys;
  const std::string a = NewPublicKey();
  EXPECT_TRUE(keys.Add(a, "a").ok());
  EXPECT_EQ(keys.Add("short", "b").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(keys.Add(NewPublicKey(), "no spaces").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(keys.Add(a, "c").code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(keys.size(), 1u);
}

}  // namespace
}  // namespace cohort
