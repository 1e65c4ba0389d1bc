// The manifest codec: round trip, and every kind of damage refused with DATA_LOSS.
#include "runtime/checkpoint/manifest.h"

#include <string>

#include "checkpoint_generated.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/crc32c.h"

namespace cohort {
namespace {

CheckpointInfo Example() {
  CheckpointInfo info;
  info.id = "trial-7-batch-1200";
  info.trial_id = 7;
  info.batches_trained = 1200;
  info.records_trained = 76800;
  info.config_fingerprint = std::string("sha256:ab\0cd", 12);
  info.abi_major = 1;
  info.abi_minor = 3;
  info.created_unix_ms = -5;  // before 1970 still round-trips
  info.files = {{"optimizer", 0, 0}, {"parameters", 1ull << 40, 0xE3069283}};
  return info;
}

// A manifest with a valid trailer around whatever `build` puts in the FlatBuffer.
template <class Build>
std::string CustomManifest(Build build, const char* identifier = "CKPT") {
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(build(builder), identifier);
  std::string bytes(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
  const uint32_t crc = Crc32c(bytes);
  for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<char>(crc >> shift));
  return bytes;
}

TEST(ManifestTest, RoundTripsEveryField) {
  const CheckpointInfo info = Example();
  absl::StatusOr<CheckpointInfo> back = DecodeManifest(EncodeManifest(info));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, info);
}

TEST(ManifestTest, IsAFlatBufferWithTheCkptIdentifier) {
  const std::string bytes = EncodeManifest(Example());
  ASSERT_TRUE(fbs::CheckpointManifestBufferHasIdentifier(bytes.data()));
  const fbs::CheckpointManifest* manifest = fbs::GetCheckpointManifest(bytes.data());
  EXPECT_EQ(manifest->format_version(), kCheckpointFormatVersion);
  EXPECT_EQ(manifest->files()->Get(1)->name()->str(), "parameters");
}

TEST(ManifestTest, EveryFlippedBitIsDetected) {
  const std::string good = EncodeManifest(Example());
  for (size_t offset = 0; offset < good.size(); ++offset) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[offset] = static_cast<char>(bad[offset] ^ (1 << bit));
      ASSERT_EQ(DecodeManifest(bad).status().code(), absl::StatusCode::kDataLoss)
          << "byte " << offset << " bit " << bit;
    }
  }
}

TEST(ManifestTest, TruncationIsDetected) {
  const std::string good = EncodeManifest(Example());
  for (size_t length = 0; length < good.size(); ++length) {
    ASSERT_EQ(DecodeManifest(good.substr(0, length)).status().code(), absl::StatusCode::kDataLoss)
        << length;
  }
  EXPECT_EQ(DecodeManifest("").status().message(), "manifest is too short (0 bytes)");
}

TEST(ManifestTest, ChecksummedGarbageFailsTheVerifier) {
  std::string garbage(64, '\x7F');
  const uint32_t crc = Crc32c(garbage);
  for (int shift = 0; shift < 32; shift += 8) garbage.push_back(static_cast<char>(crc >> shift));
  EXPECT_EQ(DecodeManifest(garbage).status().message(), "manifest is not a valid CKPT FlatBuffer");
}

TEST(ManifestTest, OtherIdentifierIsRefused) {
  const std::string bytes = CustomManifest(
      [](flatbuffers::FlatBufferBuilder& b) {
        return fbs::CreateCheckpointManifest(b, 1, b.CreateString("x"));
      },
      "WRKR");
  EXPECT_EQ(DecodeManifest(bytes).status().code(), absl::StatusCode::kDataLoss);
}

TEST(ManifestTest, MissingRequiredIdFailsTheVerifier) {
  // Built field by field: the generated builder itself refuses to finish without the id.
  const std::string bytes = CustomManifest([](flatbuffers::FlatBufferBuilder& b) {
    const flatbuffers::uoffset_t start = b.StartTable();
    b.AddElement<uint32_t>(fbs::CheckpointManifest::VT_FORMAT_VERSION, 1, 0);
    return flatbuffers::Offset<fbs::CheckpointManifest>(b.EndTable(start));
  });
  EXPECT_EQ(DecodeManifest(bytes).status().message(), "manifest is not a valid CKPT FlatBuffer");
}

TEST(ManifestTest, NewerFormatIsAPreconditionNotDamage) {
  const std::string bytes = CustomManifest([](flatbuffers::FlatBufferBuilder& b) {
    return fbs::CreateCheckpointManifest(b, kCheckpointFormatVersion + 1, b.CreateString("x"));
  });
  const absl::Status status = DecodeManifest(bytes).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "manifest format version 2 is newer than this reader's (1)");
}

TEST(ManifestTest, MissingFormatVersionIsDamage) {
  const std::string bytes = CustomManifest([](flatbuffers::FlatBufferBuilder& b) {
    return fbs::CreateCheckpointManifest(b, 0, b.CreateString("x"));
  });
  EXPECT_EQ(DecodeManifest(bytes).status().message(), "manifest has no format version");
}

TEST(ManifestTest, UnsafeOrDuplicateNamesAreDamage) {
  const std::string bad_id = CustomManifest([](flatbuffers::FlatBufferBuilder& b) {
    return fbs::CreateCheckpointManifest(b, 1, b.CreateString("../escape"));
  });
  EXPECT_EQ(DecodeManifest(bad_id).status().code(), absl::StatusCode::kDataLoss);

  CheckpointInfo twice = Example();
  twice.files = {{"parameters", 1, 2}, {"parameters", 1, 2}};
  EXPECT_EQ(DecodeManifest(EncodeManifest(twice)).status().message(),
            "manifest lists 'parameters' twice");

  CheckpointInfo reserved = Example();
  reserved.files = {{"manifest", 1, 2}};
  EXPECT_EQ(DecodeManifest(EncodeManifest(reserved)).status().message(),
            "manifest records checkpoint file name 'manifest' is reserved for the manifest");
}

}  // namespace
}  // namespace cohort
