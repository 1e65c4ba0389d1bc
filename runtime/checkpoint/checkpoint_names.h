// The names a checkpoint store accepts: checkpoint ids become folder names and file names become
// file names, so both are restricted to a portable, path-free alphabet.
//
//   ValidateCheckpointId("trial-7-batch-1200");   // OK
//   ValidateCheckpointId("../etc");               // INVALID_ARGUMENT: checkpoint id '../etc' ...
//   ValidateCheckpointFileName("manifest");       // INVALID_ARGUMENT: reserved
//   CheckpointId(7, 1200);                        // "trial-7-batch-1200", a trial's own ids
//
// A valid name is 1 to kMaxCheckpointNameLength characters of [A-Za-z0-9._-] and does not start
// with '.' (names starting with '.' are the store's own temporary entries). Pure functions.
#ifndef COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_NAMES_H_
#define COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_NAMES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cohort {

// Leaves room within a file system's 255-byte name limit for the store's temporary names.
inline constexpr size_t kMaxCheckpointNameLength = 200;

// The file inside a checkpoint folder that holds the manifest.
inline constexpr absl::string_view kManifestFileName = "manifest";

absl::Status ValidateCheckpointId(absl::string_view id);

// Also refuses kManifestFileName.
absl::Status ValidateCheckpointFileName(absl::string_view name);

// "trial-1-batch-500": the id a trial gives its checkpoint after `batches` batches.
std::string CheckpointId(uint64_t trial_id, uint64_t batches);

// The trial and batches a CheckpointId names; nullopt for any other name.
struct CheckpointIdParts {
  uint64_t trial_id = 0;
  uint64_t batches = 0;
};
std::optional<CheckpointIdParts> ParseCheckpointId(absl::string_view id);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_NAMES_H_
