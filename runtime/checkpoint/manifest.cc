#include "runtime/checkpoint/manifest.h"

#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checkpoint_generated.h"
#include "runtime/checkpoint/checkpoint_names.h"
#include "runtime/checkpoint/crc32c.h"

namespace cohort {
namespace {

constexpr size_t kTrailerSize = 4;  // CRC-32C of the FlatBuffer, little-endian

void AppendLittleEndian(uint32_t value, std::string& out) {
  for (int shift = 0; shift < 32; shift += 8)
    out.push_back(static_cast<char>((value >> shift) & 0xFF));
}

uint32_t ReadLittleEndian(absl::string_view bytes) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("manifest ", what));
}

std::string ToString(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

}  // namespace

std::string EncodeManifest(const CheckpointInfo& info) {
  flatbuffers::FlatBufferBuilder builder(1024);
  std::vector<flatbuffers::Offset<fbs::CheckpointFile>> files;
  files.reserve(info.files.size());
  for (const CheckpointFileInfo& file : info.files) {
    files.push_back(fbs::CreateCheckpointFile(builder, builder.CreateString(file.name), file.size,
                                              file.crc32c));
  }
  const auto id = builder.CreateString(info.id);
  const auto fingerprint = builder.CreateString(info.config_fingerprint);
  const auto file_vector = builder.CreateVector(files);
  fbs::CheckpointManifestBuilder manifest(builder);
  manifest.add_format_version(kCheckpointFormatVersion);
  manifest.add_id(id);
  manifest.add_trial_id(info.trial_id);
  manifest.add_batches_trained(info.batches_trained);
  manifest.add_records_trained(info.records_trained);
  manifest.add_config_fingerprint(fingerprint);
  manifest.add_abi_major(info.abi_major);
  manifest.add_abi_minor(info.abi_minor);
  manifest.add_created_unix_ms(info.created_unix_ms);
  manifest.add_files(file_vector);
  manifest.add_slots(info.slots);
  fbs::FinishCheckpointManifestBuffer(builder, manifest.Finish());

  std::string bytes(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
  AppendLittleEndian(Crc32c(bytes), bytes);
  return bytes;
}

absl::StatusOr<CheckpointInfo> DecodeManifest(absl::string_view bytes) {
  if (bytes.size() <= kTrailerSize)
    return Corrupt(absl::StrCat("is too short (", bytes.size(), " bytes)"));
  // A heap copy keeps the FlatBuffer's scalars aligned whatever `bytes` points into.
  const std::string buffer(bytes.substr(0, bytes.size() - kTrailerSize));
  const uint32_t stored = ReadLittleEndian(bytes.substr(buffer.size()));
  const uint32_t actual = Crc32c(buffer);
  if (stored != actual) {
    return Corrupt(
        absl::StrFormat("checksum mismatch (recorded %08x, computed %08x)", stored, actual));
  }
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(buffer.data()), buffer.size());
  if (!fbs::VerifyCheckpointManifestBuffer(verifier))
    return Corrupt("is not a valid CKPT FlatBuffer");
  const fbs::CheckpointManifest& manifest = *fbs::GetCheckpointManifest(buffer.data());

  if (manifest.format_version() == 0) return Corrupt("has no format version");
  if (manifest.format_version() > kCheckpointFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("manifest format version ", manifest.format_version(),
                     " is newer than this reader's (", kCheckpointFormatVersion, ")"));
  }
  CheckpointInfo info;
  info.id = manifest.id()->str();
  if (absl::Status valid = ValidateCheckpointId(info.id); !valid.ok()) {
    return Corrupt(absl::StrCat("records ", valid.message()));
  }
  info.trial_id = manifest.trial_id();
  info.batches_trained = manifest.batches_trained();
  info.records_trained = manifest.records_trained();
  info.config_fingerprint = ToString(manifest.config_fingerprint());
  info.abi_major = manifest.abi_major();
  info.abi_minor = manifest.abi_minor();
  info.created_unix_ms = manifest.created_unix_ms();
  info.slots = manifest.slots();
  std::set<std::string> seen;
  if (manifest.files() != nullptr) {
    for (const fbs::CheckpointFile* file : *manifest.files()) {
      CheckpointFileInfo entry{file->name()->str(), file->size(), file->crc32c()};
      if (absl::Status valid = ValidateCheckpointFileName(entry.name); !valid.ok()) {
        return Corrupt(absl::StrCat("records ", valid.message()));
      }
      if (!seen.insert(entry.name).second)
        return Corrupt(absl::StrCat("lists '", entry.name, "' twice"));
      info.files.push_back(std::move(entry));
    }
  }
  return info;
}

}  // namespace cohort
