#include "runtime/control/envelope.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cohort {

std::string FinishWorkerEnvelope(flatbuffers::FlatBufferBuilder& builder, fbs::WorkerPayload type,
                                 flatbuffers::Offset<void> payload) {
  builder.Finish(fbs::CreateWorkerEnvelope(builder, kWorkerFormatVersion, type, payload),
                 fbs::WorkerEnvelopeIdentifier());
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

absl::StatusOr<const fbs::WorkerEnvelope*> OpenWorkerEnvelope(absl::string_view bytes,
                                                              std::vector<uint64_t>& storage) {
  // The Verifier asserts on buffers this large instead of rejecting them.
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return absl::InvalidArgumentError(
        absl::StrCat("message of ", bytes.size(), " bytes is too large"));
  }
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    storage.assign((bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
    std::memcpy(storage.data(), bytes.data(), bytes.size());
    data = reinterpret_cast<const uint8_t*>(storage.data());
  }
  flatbuffers::Verifier verifier(data, bytes.size());
  if (!fbs::VerifyWorkerEnvelopeBuffer(verifier)) {
    return absl::InvalidArgumentError(absl::StrCat("not a valid worker channel message (",
                                                   bytes.size(), " bytes failed verification)"));
  }
  const fbs::WorkerEnvelope* envelope = fbs::GetWorkerEnvelope(data);
  if (envelope->format_version() != kWorkerFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker channel format version ", envelope->format_version(), " is not supported (this ",
        "build speaks version ", kWorkerFormatVersion, ")"));
  }
  if (envelope->payload() == nullptr) {
    return absl::InvalidArgumentError("worker channel message has no payload");
  }
  return envelope;
}

flatbuffers::Offset<flatbuffers::Vector<uint8_t>> CreateBytes(
    flatbuffers::FlatBufferBuilder& builder, const std::string& bytes) {
  return builder.CreateVector(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

std::string BytesOf(const flatbuffers::Vector<uint8_t>* field) {
  if (field == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(field->data()), field->size());
}

}  // namespace cohort
