// WorkerEnvelope framing shared by the message and command codecs (schemas/worker.fbs), and
// the conversions of byte fields both codecs use.
//
// Writers finish every buffer through FinishWorkerEnvelope, which stamps the format version and
// the file identifier; readers open every received buffer through OpenWorkerEnvelope, which runs
// the FlatBuffers Verifier and checks the version before anything is read:
//
//   std::vector<uint64_t> storage;
//   absl::StatusOr<const fbs::WorkerEnvelope*> envelope = OpenWorkerEnvelope(bytes, storage);
//   if (envelope.ok()) { ... (*envelope)->payload_type() ... }
//
// Thread-safety: free functions without shared state.
#ifndef COHORT_RUNTIME_CONTROL_ENVELOPE_H_
#define COHORT_RUNTIME_CONTROL_ENVELOPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "worker_generated.h"

namespace cohort {

// The only format_version this build reads and writes.
inline constexpr uint32_t kWorkerFormatVersion = 1;

// Wraps `payload` (a table of type `type` already in `builder`) in an envelope and returns the
// finished bytes.
std::string FinishWorkerEnvelope(flatbuffers::FlatBufferBuilder& builder, fbs::WorkerPayload type,
                                 flatbuffers::Offset<void> payload);

// A verified envelope of the current format version with a payload present. It points into
// `bytes`, or into `storage` when `bytes` is not 8-byte aligned (it is copied there first), so it
// is valid while both live unchanged. INVALID_ARGUMENT for anything else.
absl::StatusOr<const fbs::WorkerEnvelope*> OpenWorkerEnvelope(absl::string_view bytes,
                                                              std::vector<uint64_t>& storage);

// A [ubyte] field holding `bytes` (any bytes, NULs included).
flatbuffers::Offset<flatbuffers::Vector<uint8_t>> CreateBytes(
    flatbuffers::FlatBufferBuilder& builder, const std::string& bytes);

// The contents of a [ubyte] field; empty when the field is absent.
std::string BytesOf(const flatbuffers::Vector<uint8_t>* field);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_ENVELOPE_H_
