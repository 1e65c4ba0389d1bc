// The manifest file of a checkpoint folder: CheckpointInfo as a checksummed FlatBuffer
// (schemas/checkpoint.fbs holds the layout and the trailer's definition).
//
//   std::string bytes = EncodeManifest(info);
//   absl::StatusOr<CheckpointInfo> back = DecodeManifest(bytes);   // back == info
//
// Pure functions: safe to call from any thread.
#ifndef COHORT_RUNTIME_CHECKPOINT_MANIFEST_H_
#define COHORT_RUNTIME_CHECKPOINT_MANIFEST_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/checkpoint/checkpoint_info.h"

namespace cohort {

// What EncodeManifest writes; DecodeManifest refuses newer versions.
inline constexpr uint32_t kCheckpointFormatVersion = 1;

// The manifest bytes for `info`, files included. The caller validates names first.
std::string EncodeManifest(const CheckpointInfo& info);

// Checks, in order: the trailing CRC-32C, the FlatBuffers Verifier with the "CKPT" identifier,
// the format version, the id and the file names (valid, no duplicates). DATA_LOSS saying what is
// wrong; FAILED_PRECONDITION for a format version newer than kCheckpointFormatVersion.
absl::StatusOr<CheckpointInfo> DecodeManifest(absl::string_view bytes);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CHECKPOINT_MANIFEST_H_
