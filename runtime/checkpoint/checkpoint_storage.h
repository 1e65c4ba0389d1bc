// CheckpointStorage: where a trial's checkpoints live, behind one interface so that tests and
// other backends (object stores) can replace the shared file system.
//
// A checkpoint is whole or absent: a reader never sees a half-written, half-deleted or corrupt
// checkpoint through List() or LatestCheckpoint(), and Read() verifies every byte.
//
//   std::unique_ptr<CheckpointStorage> storage = *OpenSharedFsStorage("/mnt/checkpoints");
//   CheckpointInfo info{.id = "trial-7-batch-1200", .trial_id = 7, .batches_trained = 1200};
//   absl::Status written = storage->Write(info, {{"parameters", bytes}});
//   absl::StatusOr<CheckpointInfo> latest = LatestCheckpoint(*storage, 7);
//   absl::StatusOr<Checkpoint> restored = storage->Read(latest->id);
//
// Thread-safety: implementations allow any method to be called concurrently, from several
// threads and from several processes sharing the same storage.
#ifndef COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_STORAGE_H_
#define COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_STORAGE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/checkpoint/checkpoint_info.h"
#include "runtime/checkpoint/checkpoint_names.h"

namespace cohort {

// A checkpoint that List() leaves out because it is not whole, and why.
struct DamagedCheckpoint {
  std::string id;
  std::optional<CheckpointInfo> info;  // its manifest, when that is readable and its own
  std::string problem;
};

// The trial and batch a damaged checkpoint holds: its manifest's, or without one its id's
// (ParseCheckpointId); nullopt when neither says.
std::optional<CheckpointIdParts> PartsOf(const DamagedCheckpoint& checkpoint);

class CheckpointStorage {
 public:
  virtual ~CheckpointStorage() = default;

  // Writes `files` as checkpoint info.id, whole or not at all, recording each file's size and
  // CRC-32C in the manifest (info.files is ignored; created_unix_ms 0 records the current time).
  // ALREADY_EXISTS if a whole checkpoint with that id exists; INVALID_ARGUMENT for an id or file
  // name that ValidateCheckpointId / ValidateCheckpointFileName refuse.
  virtual absl::Status Write(const CheckpointInfo& info,
                             const std::map<std::string, std::string>& files) = 0;

  // Reads checkpoint `id` and verifies its manifest and every file's size and checksum.
  // NOT_FOUND if there is no checkpoint `id`; DATA_LOSS naming the file when something it
  // records is missing, of the wrong size or fails its checksum.
  virtual absl::StatusOr<Checkpoint> Read(absl::string_view id) const = 0;

  // The manifests of every whole checkpoint (manifest verified, files present with their recorded
  // sizes; checksums are left to Read), sorted by (trial_id, batches_trained, created_unix_ms, id).
  virtual absl::StatusOr<std::vector<CheckpointInfo>> List() const = 0;

  // The checkpoints List() leaves out: a folder named as a checkpoint id whose manifest is missing,
  // corrupt or another checkpoint's, or whose recorded files are missing or of the wrong size;
  // sorted by id. Temporary entries of writes in progress are not among them.
  virtual absl::StatusOr<std::vector<DamagedCheckpoint>> ListDamaged() const = 0;

  // Removes checkpoint `id`, whole or not; NOT_FOUND if there is none. Readers see it either
  // complete or gone.
  virtual absl::Status Delete(absl::string_view id) = 0;

  // Removes what interrupted writes and deletes left behind, sparing those still in progress.
  virtual absl::Status CleanTemporary() = 0;

  // Where the checkpoints are, for logs: "shared_fs:/path/to/root".
  virtual std::string Describe() const = 0;
};

// The newest whole checkpoint of `trial_id`: most batches_trained, then latest created_unix_ms,
// then greatest id. NOT_FOUND if the trial has none.
absl::StatusOr<CheckpointInfo> LatestCheckpoint(const CheckpointStorage& storage,
                                                uint64_t trial_id);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_STORAGE_H_
