// Key pairs and key files: generation, the file round trip, the refusals, and the client config
// loaded from `--key FILE --orchestrator-key FILE_OR_Z85`.
#include "runtime/security/curve_keys.h"

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/security/curve_client_config.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

mode_t ModeOf(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

void WriteText(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

TEST(CurveKeysTest, GeneratesDistinctWellFormedPairs) {
  absl::StatusOr<CurveKeyPair> first = GenerateCurveKeyPair();
  absl::StatusOr<CurveKeyPair> second = GenerateCurveKeyPair();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(IsCurveKey(first->public_key));
  EXPECT_TRUE(IsCurveKey(first->secret_key));
  EXPECT_NE(first->public_key, first->secret_key);
  EXPECT_NE(first->secret_key, second->secret_key);
  EXPECT_EQ(CurvePublicKeyOf(first->secret_key).value(), first->public_key);
}

TEST(CurveKeysTest, RecognizesKeysAndNames) {
  EXPECT_TRUE(IsCurveKey("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"));
  EXPECT_FALSE(IsCurveKey("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf"));    // 39 characters
  EXPECT_FALSE(IsCurveKey("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7 "));  // 41
  EXPECT_FALSE(IsCurveKey("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf\""));  // '"' is not Z85
  EXPECT_FALSE(IsCurveKey("%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%"));   // groups past 2^32
  EXPECT_FALSE(CurvePublicKeyOf("short").ok());

  EXPECT_TRUE(IsKeyName("agent-7"));
  EXPECT_TRUE(IsKeyName("gpu.node_01"));
  EXPECT_FALSE(IsKeyName(""));
  EXPECT_FALSE(IsKeyName(".hidden"));
  EXPECT_FALSE(IsKeyName("-flag"));
  EXPECT_FALSE(IsKeyName("two words"));
  EXPECT_FALSE(IsKeyName("a/b"));
  EXPECT_FALSE(IsKeyName(std::string(65, 'a')));
}

TEST(CurveKeysTest, FilesRoundTripWithPrivateSecretFile) {
  TempFolder folder;
  const CurveKeyPair keys = GenerateCurveKeyPair().value();
  ASSERT_TRUE(WriteSecretKeyFile(folder / "agent-7.key", "agent-7", keys).ok());
  ASSERT_TRUE(WritePublicKeyFile(folder / "agent-7.pub", "agent-7", keys.public_key).ok());
  EXPECT_EQ(ModeOf(folder / "agent-7.key"), 0600u);
  EXPECT_EQ(ModeOf(folder / "agent-7.pub"), 0644u);

  absl::StatusOr<CurveKeyPair> loaded = ReadSecretKeyFile(folder / "agent-7.key");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->public_key, keys.public_key);
  EXPECT_EQ(loaded->secret_key, keys.secret_key);
  EXPECT_EQ(ReadPublicKeyFile(folder / "agent-7.pub").value(), keys.public_key);
  EXPECT_EQ(ReadPublicKeyFile(folder / "agent-7.key").value(), keys.public_key);

  std::ifstream in(folder / "agent-7.pub");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("public-key = \"" + keys.public_key + "\""));
  EXPECT_THAT(text, Not(HasSubstr("secret-key")));
}

// One key file named where the other belongs is said to be so: a public key given as this side's
// secret (not told that its mode 0644 is unsafe), a secret key given as a peer's public one.
TEST(CurveKeysTest, NamesAKeyFileGivenForTheOtherKind) {
  TempFolder folder;
  const CurveKeyPair keys = GenerateCurveKeyPair().value();
  ASSERT_TRUE(WriteSecretKeyFile(folder / "alice.key", "alice", keys).ok());
  ASSERT_TRUE(WritePublicKeyFile(folder / "alice.pub", "alice", keys.public_key).ok());
  const absl::StatusOr<CurveKeyPair> secret = ReadSecretKeyFile(folder / "alice.pub");
  EXPECT_EQ(secret.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(secret.status().message(),
              HasSubstr("alice.pub has no secret-key line: it holds a public key only"));
  const absl::StatusOr<std::string> peer = ReadPeerPublicKeyFile(folder / "alice.key");
  EXPECT_EQ(peer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(peer.status().message(), HasSubstr("alice.key holds a secret key"));
  EXPECT_EQ(ReadPeerPublicKeyFile(folder / "alice.pub").value(), keys.public_key);
}

TEST(CurveKeysTest, NeverOverwritesAKeyFile) {
  TempFolder folder;
  const CurveKeyPair keys = GenerateCurveKeyPair().value();
  ASSERT_TRUE(WriteSecretKeyFile(folder / "a.key", "a", keys).ok());
  const absl::Status again =
      WriteSecretKeyFile(folder / "a.key", "a", GenerateCurveKeyPair().value());
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_EQ(ReadSecretKeyFile(folder / "a.key").value().secret_key, keys.secret_key);
}

TEST(CurveKeysTest, RefusesASecretFileOthersCanRead) {
  TempFolder folder;
  const CurveKeyPair keys = GenerateCurveKeyPair().value();
  const std::string path = folder / "a.key";
  ASSERT_TRUE(WriteSecretKeyFile(path, "a", keys).ok());
  for (mode_t mode : {0644, 0640, 0604, 0660}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    absl::StatusOr<CurveKeyPair> loaded = ReadSecretKeyFile(path);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kPermissionDenied) << std::oct << mode;
    EXPECT_THAT(loaded.status().message(), HasSubstr("chmod 600 " + path));
  }
  ASSERT_EQ(::chmod(path.c_str(), 0400), 0);
  EXPECT_TRUE(ReadSecretKeyFile(path).ok());
  // The public key in it is not secret.
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_TRUE(ReadPublicKeyFile(path).ok());
}

TEST(CurveKeysTest, ReadsZeroMqCertificatesWrittenByOtherTools) {
  TempFolder folder;
  const CurveKeyPair keys = GenerateCurveKeyPair().value();
  WriteText(folder / "zcert_secret",
            "#   ****  Generated on 2024-01-01 by CZMQ  ****\n"
            "#   ZeroMQ CURVE **Secret** Certificate\n\n"
            "metadata\ncurve\n"
            "    public-key = \"" +
                keys.public_key +
                "\"\n"
                "    secret-key = \"" +
                keys.secret_key + "\"\n",
            0600);
  absl::StatusOr<CurveKeyPair> loaded = ReadSecretKeyFile(folder / "zcert_secret");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->public_key, keys.public_key);
}

TEST(CurveKeysTest, RefusesMalformedAndMismatchedFiles) {
  TempFolder folder;
  const CurveKeyPair keys = GenerateCurveKeyPair().value();
  const CurveKeyPair other = GenerateCurveKeyPair().value();
  WriteText(folder / "mismatch",
            "curve\n    public-key = \"" + other.public_key + "\"\n    secret-key = \"" +
                keys.secret_key + "\"\n",
            0600);
  EXPECT_THAT(ReadSecretKeyFile(folder / "mismatch").status().message(),
              HasSubstr("does not belong"));
  WriteText(folder / "no_secret", "curve\n    public-key = \"" + keys.public_key + "\"\n", 0600);
  EXPECT_THAT(ReadSecretKeyFile(folder / "no_secret").status().message(),
              HasSubstr("no secret-key line"));
  WriteText(folder / "bad", "curve\n    public-key = \"not a key\"\n", 0644);
  EXPECT_EQ(ReadPublicKeyFile(folder / "bad").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadPublicKeyFile(folder / "missing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(
      WriteSecretKeyFile(folder / "x.key", "x", CurveKeyPair{other.public_key, keys.secret_key})
          .ok());
  EXPECT_FALSE(WriteSecretKeyFile(folder / "y.key", "bad name", keys).ok());
}

TEST(CurveKeysTest, ReadsTheNameAKeyFileWasMadeUnder) {
  TempFolder folder;
  const CurveKeyPair keys = GenerateCurveKeyPair().value();
  ASSERT_TRUE(WriteSecretKeyFile(folder / "agent-7.key", "agent-7", keys).ok());
  ASSERT_TRUE(WritePublicKeyFile(folder / "renamed.pub", "agent-7", keys.public_key).ok());
  EXPECT_EQ(ReadKeyFileName(folder / "agent-7.key").value(), "agent-7");
  EXPECT_EQ(ReadKeyFileName(folder / "renamed.pub").value(), "agent-7");
  WriteText(folder / "anonymous", "curve\n    public-key = \"" + keys.public_key + "\"\n", 0644);
  EXPECT_EQ(ReadKeyFileName(folder / "anonymous").value(), "");
  EXPECT_EQ(ReadKeyFileName(folder / "missing").status().code(), absl::StatusCode::kNotFound);
}

TEST(CurveClientConfigTest, LoadsBothKeysOrNeither) {
  TempFolder folder;
  const CurveKeyPair agent = GenerateCurveKeyPair().value();
  const CurveKeyPair server = GenerateCurveKeyPair().value();
  ASSERT_TRUE(WriteSecretKeyFile(folder / "agent-1.key", "agent-1", agent).ok());
  ASSERT_TRUE(
      WritePublicKeyFile(folder / "orchestrator.pub", "orchestrator", server.public_key).ok());

  absl::StatusOr<std::optional<CurveClientConfig>> none = LoadCurveClientConfig("", "");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());

  for (const std::string& server_key : {folder / "orchestrator.pub", server.public_key}) {
    absl::StatusOr<std::optional<CurveClientConfig>> loaded =
        LoadCurveClientConfig(folder / "agent-1.key", server_key);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_TRUE(loaded->has_value());
    EXPECT_EQ((*loaded)->keys.public_key, agent.public_key);
    EXPECT_EQ((*loaded)->keys.secret_key, agent.secret_key);
    EXPECT_EQ((*loaded)->key_name, "agent-1");
    EXPECT_EQ((*loaded)->server_public_key, server.public_key);
  }

  absl::StatusOr<std::optional<CurveClientConfig>> half =
      LoadCurveClientConfig(folder / "agent-1.key", "");
  EXPECT_EQ(half.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(half.status().message(), HasSubstr("--orchestrator-key"));
  half = LoadCurveClientConfig("", server.public_key);
  EXPECT_EQ(half.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(half.status().message(), HasSubstr("--key"));
}

TEST(CurveClientConfigTest, NamesWhatCannotBeLoaded) {
  TempFolder folder;
  const CurveKeyPair agent = GenerateCurveKeyPair().value();
  const std::string server_key = GenerateCurveKeyPair().value().public_key;
  ASSERT_TRUE(WriteSecretKeyFile(folder / "agent-1.key", "agent-1", agent).ok());

  absl::StatusOr<std::string> bad = ReadServerPublicKey("not a key");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("'not a key' is neither a key file nor"));
  // A file at the path wins over reading the path as a key.
  WriteText(folder / "garbled.pub", "curve\n    public-key = \"short\"\n", 0644);
  EXPECT_EQ(ReadServerPublicKey(folder / "garbled.pub").status().code(),
            absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(LoadCurveClientConfig(folder / "missing.key", server_key).status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_EQ(::chmod((folder / "agent-1.key").c_str(), 0644), 0);
  EXPECT_EQ(LoadCurveClientConfig(folder / "agent-1.key", server_key).status().code(),
            absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace cohort
