#include "runtime/checkpoint/shared_fs_storage.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/base/file_io.h"
#include "runtime/checkpoint/checkpoint_names.h"
#include "runtime/checkpoint/crc32c.h"
#include "runtime/checkpoint/internal/posix_io.h"
#include "runtime/checkpoint/internal/staging_folder.h"
#include "runtime/checkpoint/manifest.h"

namespace cohort {
namespace {

using checkpoint_internal::JoinPath;
using checkpoint_internal::PosixError;
using checkpoint_internal::StagingFolder;

absl::Status WithContext(absl::string_view context, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

int64_t NowUnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class SharedFsStorage final : public CheckpointStorage {
 public:
  explicit SharedFsStorage(std::string root) : root_(std::move(root)) {}

  absl::Status Write(const CheckpointInfo& info,
                     const std::map<std::string, std::string>& files) override;
  absl::StatusOr<Checkpoint> Read(absl::string_view id) const override;
  absl::StatusOr<std::vector<CheckpointInfo>> List() const override;
  absl::StatusOr<std::vector<DamagedCheckpoint>> ListDamaged() const override;
  absl::Status Delete(absl::string_view id) override;
  absl::Status CleanTemporary() override {
    return checkpoint_internal::RemoveAbandonedStagingFolders(root_);
  }
  std::string Describe() const override { return absl::StrCat("shared_fs:", root_); }

  // CopySharedFsCheckpoint's copy of checkpoint `id` of `from` into this store.
  absl::Status CopyFrom(const SharedFsStorage& from, absl::string_view id);

 private:
  std::string FolderOf(absl::string_view id) const { return JoinPath(root_, id); }

  // The verified manifest of checkpoint `id`: NOT_FOUND without a folder `id`, DATA_LOSS when
  // the manifest is missing, corrupt or names another checkpoint.
  absl::StatusOr<CheckpointInfo> ReadManifest(absl::string_view id) const;

  // ReadManifest, then DATA_LOSS unless every recorded file is present with its recorded size.
  absl::StatusOr<CheckpointInfo> ReadWholeManifest(absl::string_view id) const;

  // Writes the files and the manifest into the empty folder `folder`, fsynced.
  absl::Status FillFolder(const std::string& folder, CheckpointInfo manifest,
                          const std::map<std::string, std::string>& files) const;

  // ALREADY_EXISTS when something is in the way of checkpoint `id` (checked before a write so
  // that a doomed one does not copy gigabytes; the rename in Commit decides races).
  absl::Status RefuseExisting(absl::string_view id) const;
  // Renames the filled `staging` folder to checkpoint `id` and makes that durable.
  absl::Status Commit(checkpoint_internal::StagingFolder& staging, absl::string_view id);

  std::string root_;
};

absl::Status SharedFsStorage::Write(const CheckpointInfo& info,
                                    const std::map<std::string, std::string>& files) {
  if (absl::Status valid = ValidateCheckpointId(info.id); !valid.ok()) return valid;
  for (const auto& [name, bytes] : files) {
    if (absl::Status valid = ValidateCheckpointFileName(name); !valid.ok()) return valid;
  }
  if (absl::Status free = RefuseExisting(info.id); !free.ok()) return free;
  absl::StatusOr<std::unique_ptr<StagingFolder>> staging = StagingFolder::Claim(root_, info.id);
  if (!staging.ok()) return staging.status();
  if (absl::Status filled = FillFolder((*staging)->path(), info, files); !filled.ok()) {
    return filled;
  }
  return Commit(**staging, info.id);
}

absl::Status SharedFsStorage::RefuseExisting(absl::string_view id) const {
  absl::StatusOr<bool> exists = checkpoint_internal::PathExists(FolderOf(id));
  if (!exists.ok()) return exists.status();
  if (!*exists) return absl::OkStatus();
  absl::Status whole = ReadWholeManifest(id).status();
  if (whole.ok()) {
    return absl::AlreadyExistsError(
        absl::StrCat("checkpoint '", id, "' already exists in ", Describe()));
  }
  return absl::AlreadyExistsError(absl::StrCat("checkpoint '", id, "' in ", Describe(),
                                               " is in the way but not whole (", whole.message(),
                                               "); Delete removes it"));
}

absl::Status SharedFsStorage::Commit(StagingFolder& staging, absl::string_view id) {
  const std::string& folder = staging.path();
  const std::string destination = FolderOf(id);
  if (std::rename(folder.c_str(), destination.c_str()) != 0) {
    if (errno == EEXIST || errno == ENOTEMPTY) {
      return absl::AlreadyExistsError(
          absl::StrCat("checkpoint '", id, "' was written concurrently in ", Describe()));
    }
    return PosixError(absl::StrCat("rename ", folder, " to"), destination, errno);
  }
  if (absl::Status synced = checkpoint_internal::SyncFolder(root_); !synced.ok()) return synced;
  // The checkpoint is in place; a lock file that cannot be removed now goes with CleanTemporary.
  staging.Discard().IgnoreError();
  return absl::OkStatus();
}

absl::Status SharedFsStorage::CopyFrom(const SharedFsStorage& from, absl::string_view id) {
  if (absl::Status valid = ValidateCheckpointId(id); !valid.ok()) return valid;
  absl::StatusOr<CheckpointInfo> info = from.ReadManifest(id);
  if (!info.ok()) return info.status();
  if (absl::Status free = RefuseExisting(id); !free.ok()) return free;
  absl::StatusOr<std::unique_ptr<StagingFolder>> staging = StagingFolder::Claim(root_, id);
  if (!staging.ok()) return staging.status();
  const std::string& folder = (*staging)->path();
  if (::mkdir(folder.c_str(), 0755) != 0) return PosixError("create folder", folder, errno);
  for (const CheckpointFileInfo& file : info->files) {
    if (absl::Status valid = ValidateCheckpointFileName(file.name); !valid.ok()) return valid;
    const std::string context = absl::StrCat("checkpoint '", id, "' file '", file.name, "'");
    uint32_t crc = 0;
    absl::StatusOr<uint64_t> copied = checkpoint_internal::CopyFileDurably(
        JoinPath(from.FolderOf(id), file.name), JoinPath(folder, file.name),
        [&](absl::string_view piece) {
          crc = Crc32cExtend(crc, piece);
          return absl::OkStatus();
        });
    if (!copied.ok()) {
      return absl::DataLossError(absl::StrCat(context, ": ", copied.status().message()));
    }
    if (*copied != file.size) {
      return absl::DataLossError(
          absl::StrCat(context, " has ", *copied, " bytes; the manifest records ", file.size));
    }
    if (crc != file.crc32c) {
      return absl::DataLossError(absl::StrFormat(
          "%s fails its checksum (recorded %08x, computed %08x)", context, file.crc32c, crc));
    }
  }
  // The same manifest: the copy is the same checkpoint, whole in its new store.
  if (absl::Status written = checkpoint_internal::WriteFileDurably(
          JoinPath(folder, kManifestFileName), EncodeManifest(*info));
      !written.ok()) {
    return written;
  }
  if (absl::Status synced = checkpoint_internal::SyncFolder(folder); !synced.ok()) return synced;
  return Commit(**staging, id);
}

absl::Status SharedFsStorage::FillFolder(const std::string& folder, CheckpointInfo manifest,
                                         const std::map<std::string, std::string>& files) const {
  if (::mkdir(folder.c_str(), 0755) != 0) return PosixError("create folder", folder, errno);
  if (manifest.created_unix_ms == 0) manifest.created_unix_ms = NowUnixMillis();
  manifest.files.clear();
  for (const auto& [name, bytes] : files) {
    absl::Status written = checkpoint_internal::WriteFileDurably(JoinPath(folder, name), bytes);
    if (!written.ok()) return written;
    manifest.files.push_back({name, bytes.size(), Crc32c(bytes)});
  }
  absl::Status written = checkpoint_internal::WriteFileDurably(JoinPath(folder, kManifestFileName),
                                                               EncodeManifest(manifest));
  if (!written.ok()) return written;
  return checkpoint_internal::SyncFolder(folder);
}

absl::StatusOr<Checkpoint> SharedFsStorage::Read(absl::string_view id) const {
  if (absl::Status valid = ValidateCheckpointId(id); !valid.ok()) return valid;
  absl::StatusOr<CheckpointInfo> info = ReadManifest(id);
  if (!info.ok()) return info.status();
  Checkpoint checkpoint{*std::move(info), {}};
  for (const CheckpointFileInfo& file : checkpoint.info.files) {
    const std::string context = absl::StrCat("checkpoint '", id, "' file '", file.name, "'");
    absl::StatusOr<std::string> bytes = ReadWholeFile(JoinPath(FolderOf(id), file.name));
    if (!bytes.ok())
      return absl::DataLossError(absl::StrCat(context, ": ", bytes.status().message()));
    if (bytes->size() != file.size) {
      return absl::DataLossError(absl::StrCat(context, " has ", bytes->size(),
                                              " bytes; the manifest records ", file.size));
    }
    const uint32_t crc = Crc32c(*bytes);
    if (crc != file.crc32c) {
      return absl::DataLossError(absl::StrFormat(
          "%s fails its checksum (recorded %08x, computed %08x)", context, file.crc32c, crc));
    }
    checkpoint.files.emplace(file.name, *std::move(bytes));
  }
  return checkpoint;
}

absl::StatusOr<std::vector<CheckpointInfo>> SharedFsStorage::List() const {
  absl::StatusOr<std::vector<std::string>> names = checkpoint_internal::ListFolder(root_);
  if (!names.ok()) return names.status();
  std::vector<CheckpointInfo> whole;
  for (const std::string& name : *names) {
    if (!ValidateCheckpointId(name).ok()) continue;  // temporary entries and strangers
    absl::StatusOr<CheckpointInfo> info = ReadWholeManifest(name);
    if (info.ok()) whole.push_back(*std::move(info));
  }
  std::sort(whole.begin(), whole.end(), [](const CheckpointInfo& a, const CheckpointInfo& b) {
    return std::tie(a.trial_id, a.batches_trained, a.created_unix_ms, a.id) <
           std::tie(b.trial_id, b.batches_trained, b.created_unix_ms, b.id);
  });
  return whole;
}

absl::StatusOr<std::vector<DamagedCheckpoint>> SharedFsStorage::ListDamaged() const {
  absl::StatusOr<std::vector<std::string>> names = checkpoint_internal::ListFolder(root_);
  if (!names.ok()) return names.status();
  std::vector<DamagedCheckpoint> damaged;
  for (const std::string& name : *names) {
    std::error_code error;
    if (!ValidateCheckpointId(name).ok() || !std::filesystem::is_directory(FolderOf(name), error)) {
      continue;  // temporary entries and strangers
    }
    const absl::Status whole = ReadWholeManifest(name).status();
    if (whole.ok() || absl::IsNotFound(whole)) continue;  // whole, or deleted meanwhile
    absl::StatusOr<CheckpointInfo> manifest = ReadManifest(name);
    damaged.push_back(DamagedCheckpoint{
        name, manifest.ok() ? std::optional<CheckpointInfo>(*std::move(manifest)) : std::nullopt,
        std::string(whole.message())});
  }
  std::sort(damaged.begin(), damaged.end(),
            [](const DamagedCheckpoint& a, const DamagedCheckpoint& b) { return a.id < b.id; });
  return damaged;
}

absl::Status SharedFsStorage::Delete(absl::string_view id) {
  if (absl::Status valid = ValidateCheckpointId(id); !valid.ok()) return valid;
  absl::StatusOr<std::unique_ptr<StagingFolder>> staging = StagingFolder::Claim(root_, id);
  if (!staging.ok()) return staging.status();
  const std::string source = FolderOf(id);
  if (std::rename(source.c_str(), (*staging)->path().c_str()) != 0) {
    if (errno == ENOENT)
      return absl::NotFoundError(absl::StrCat("no checkpoint '", id, "' in ", Describe()));
    return PosixError(absl::StrCat("rename ", source, " to"), (*staging)->path(), errno);
  }
  if (absl::Status synced = checkpoint_internal::SyncFolder(root_); !synced.ok()) return synced;
  return (*staging)->Discard();
}

absl::StatusOr<CheckpointInfo> SharedFsStorage::ReadManifest(absl::string_view id) const {
  const std::string context = absl::StrCat("checkpoint '", id, "' in ", Describe());
  const std::string folder = FolderOf(id);
  absl::StatusOr<std::string> bytes = ReadWholeFile(JoinPath(folder, kManifestFileName));
  if (!bytes.ok()) {
    absl::StatusOr<bool> exists = checkpoint_internal::PathExists(folder);
    if (exists.ok() && !*exists) return absl::NotFoundError(absl::StrCat("no ", context));
    if (absl::IsNotFound(bytes.status())) {
      return absl::DataLossError(absl::StrCat(context, " has no manifest"));
    }
    return WithContext(context, bytes.status());
  }
  absl::StatusOr<CheckpointInfo> info = DecodeManifest(*bytes);
  if (!info.ok()) return WithContext(context, info.status());
  if (info->id != id) {
    return absl::DataLossError(absl::StrCat(context, " holds the manifest of '", info->id, "'"));
  }
  return info;
}

absl::StatusOr<CheckpointInfo> SharedFsStorage::ReadWholeManifest(absl::string_view id) const {
  absl::StatusOr<CheckpointInfo> info = ReadManifest(id);
  if (!info.ok()) return info;
  for (const CheckpointFileInfo& file : info->files) {
    absl::StatusOr<uint64_t> size =
        checkpoint_internal::RegularFileSize(JoinPath(FolderOf(id), file.name));
    if (!size.ok() || *size != file.size) {
      return absl::DataLossError(absl::StrCat("checkpoint '", id, "' file '", file.name,
                                              "' is missing or not of its recorded size"));
    }
  }
  return info;
}

// OpenSharedFsStorage's store, as its own type.
absl::StatusOr<std::unique_ptr<SharedFsStorage>> OpenStore(const std::string& root) {
  if (root.empty()) return absl::InvalidArgumentError("the shared_fs checkpoint root is empty");
  if (absl::Status made = checkpoint_internal::MakeFolders(root); !made.ok()) return made;
  auto storage = std::make_unique<SharedFsStorage>(root);
  if (absl::Status cleaned = storage->CleanTemporary(); !cleaned.ok()) return cleaned;
  return storage;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CheckpointStorage>> OpenSharedFsStorage(const std::string& root) {
  absl::StatusOr<std::unique_ptr<SharedFsStorage>> storage = OpenStore(root);
  if (!storage.ok()) return storage.status();
  return std::unique_ptr<CheckpointStorage>(*std::move(storage));
}

namespace {

// OpenSharedFsStorageToRead's store, as its own type: nothing made, nothing cleaned.
absl::StatusOr<std::unique_ptr<SharedFsStorage>> OpenStoreToRead(const std::string& root) {
  std::error_code error;
  if (root.empty() || !std::filesystem::is_directory(root, error)) {
    return absl::NotFoundError(absl::StrCat("no checkpoint folder ", root));
  }
  return std::make_unique<SharedFsStorage>(root);
}

}  // namespace

absl::StatusOr<std::unique_ptr<CheckpointStorage>> OpenSharedFsStorageToRead(
    const std::string& root) {
  absl::StatusOr<std::unique_ptr<SharedFsStorage>> storage = OpenStoreToRead(root);
  if (!storage.ok()) return storage.status();
  return std::unique_ptr<CheckpointStorage>(*std::move(storage));
}

absl::Status CopySharedFsCheckpoint(const std::string& from_root, absl::string_view id,
                                    const std::string& to_root) {
  // Only read: a client's export makes no folder of the storage where it does not reach it.
  absl::StatusOr<std::unique_ptr<SharedFsStorage>> from = OpenStoreToRead(from_root);
  if (!from.ok()) return from.status();
  absl::StatusOr<std::unique_ptr<SharedFsStorage>> to = OpenStore(to_root);
  if (!to.ok()) return to.status();
  return (*to)->CopyFrom(**from, id);
}

}  // namespace cohort
