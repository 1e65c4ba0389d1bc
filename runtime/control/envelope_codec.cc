#include "runtime/control/envelope_codec.h"

#include <cstring>

namespace cohort {
namespace {

// An envelope's version fields alone, which keep their place in every major version of every
// protocol this file serves: verifying a buffer as this type checks only the root table and
// those two fields.
struct EnvelopeVersionProbe : private flatbuffers::Table {
  bool Verify(flatbuffers::Verifier& verifier) const {
    return VerifyTableStart(verifier) &&
           VerifyField<uint16_t>(verifier, kEnvelopeMajorField, sizeof(uint16_t)) &&
           VerifyField<uint16_t>(verifier, kEnvelopeMinorField, sizeof(uint16_t)) &&
           verifier.EndTable();
  }
  ProtocolVersion version() const {
    return {GetField<uint16_t>(kEnvelopeMajorField, 0), GetField<uint16_t>(kEnvelopeMinorField, 0)};
  }
};

// `bytes`, or a copy of them in `storage` when they are not 8-byte aligned.
const uint8_t* AlignedBytes(absl::string_view bytes, std::vector<uint64_t>& storage) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) == 0) return data;
  storage.assign((bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
  std::memcpy(storage.data(), bytes.data(), bytes.size());
  return reinterpret_cast<const uint8_t*>(storage.data());
}

}  // namespace

std::string VersionText(ProtocolVersion version) {
  return absl::StrCat(version.major, ".", version.minor);
}

absl::Status MalformedMessage(const EnvelopeProtocol& protocol, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed ", protocol.name, " message: ", what));
}

absl::StatusOr<VerifiedEnvelope> VerifyEnvelope(const EnvelopeProtocol& protocol,
                                                absl::string_view bytes,
                                                std::vector<uint64_t>& storage) {
  // The Verifier asserts on buffers this large instead of rejecting them.
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return MalformedMessage(protocol, absl::StrCat(bytes.size(), " bytes is too large"));
  }
  const uint8_t* data = AlignedBytes(bytes, storage);
  flatbuffers::Verifier probe(data, bytes.size());
  if (!probe.VerifyBuffer<EnvelopeVersionProbe>(protocol.file_identifier())) {
    return MalformedMessage(
        protocol, absl::StrCat("not a ", protocol.name, " envelope (", bytes.size(), " bytes)"));
  }
  const ProtocolVersion sender = flatbuffers::GetRoot<EnvelopeVersionProbe>(data)->version();
  if (sender.major != protocol.version.major) {
    return absl::InvalidArgumentError(absl::StrCat(
        protocol.name, " protocol ", VersionText(sender), " is not supported: this build speaks ",
        VersionText(protocol.version), " and the major versions must match"));
  }
  flatbuffers::Verifier verifier(data, bytes.size());
  if (!protocol.verify_envelope(verifier)) {
    return MalformedMessage(protocol,
                            absl::StrCat(bytes.size(), " bytes of protocol ", VersionText(sender),
                                         " failed verification (bad offsets or a "
                                         "required field missing)"));
  }
  return VerifiedEnvelope{data, sender};
}

absl::Status NoteNewerSender(const EnvelopeProtocol& protocol, ProtocolVersion sender,
                             const absl::Status& failure) {
  if (sender.minor <= protocol.version.minor) return failure;
  return absl::InvalidArgumentError(absl::StrCat(failure.message(), " (the sender speaks protocol ",
                                                 VersionText(sender), ", this build ",
                                                 VersionText(protocol.version), ")"));
}

void EnvelopeTableReader::Fail(absl::string_view why) {
  if (status_.ok()) status_ = MalformedMessage(protocol_, absl::StrCat(message_name_, ": ", why));
}

}  // namespace cohort
