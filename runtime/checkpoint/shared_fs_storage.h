// The shared_fs checkpoint store: one folder per checkpoint under a root folder that every host
// mounts (a local disk, NFS), as Determined's shared_fs checkpoint storage.
//
//   <root>/trial-7-batch-1200/manifest      CheckpointManifest (schemas/checkpoint.fbs)
//   <root>/trial-7-batch-1200/parameters    opaque files, each checksummed in the manifest
//   <root>/.partial-...                     writes and deletes in progress (or interrupted)
//
// Write assembles the folder under a temporary name in the same root, fsyncs every file and the
// folder, renames it to its id and fsyncs the root; Delete renames the folder away before
// removing it. A crash at any point leaves either the whole checkpoint or none of it, plus
// temporary entries that CleanTemporary() (and the next open) remove once their writer is gone.
//
//   absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage = OpenSharedFsStorage("/mnt/ckpt");
//
// Thread-safety: every method may run concurrently, in several threads, processes and hosts
// sharing the root (cleaning spares entries whose writer is alive: it holds a lock on them).
#ifndef COHORT_RUNTIME_CHECKPOINT_SHARED_FS_STORAGE_H_
#define COHORT_RUNTIME_CHECKPOINT_SHARED_FS_STORAGE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/checkpoint/checkpoint_storage.h"

namespace cohort {

// Creates `root` (and its parents) if missing, then removes abandoned temporary entries.
// Errors name the path and the system's reason.
absl::StatusOr<std::unique_ptr<CheckpointStorage>> OpenSharedFsStorage(const std::string& root);

// The store at `root` as it is, to read: nothing is created or removed (a query's view of a store
// others write). NOT_FOUND when `root` is not a folder.
absl::StatusOr<std::unique_ptr<CheckpointStorage>> OpenSharedFsStorageToRead(
    const std::string& root);

// Copies checkpoint `id` of the store at `from_root` into the store at `to_root` (both shared_fs;
// opened as OpenSharedFsStorageToRead does: nothing is made or cleaned there; `to_root` as
// OpenSharedFsStorage does), whole or not at all as Write: each file passes in pieces of
// a few MiB, checked on the way against the manifest's size and checksum (DATA_LOSS naming the
// file, and nothing is left in `to_root`), so the copy needs memory of a piece, not of the
// checkpoint. NOT_FOUND without that checkpoint; ALREADY_EXISTS as Write.
absl::Status CopySharedFsCheckpoint(const std::string& from_root, absl::string_view id,
                                    const std::string& to_root);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CHECKPOINT_SHARED_FS_STORAGE_H_
