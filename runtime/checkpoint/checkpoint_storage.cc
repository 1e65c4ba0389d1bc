#include "runtime/checkpoint/checkpoint_storage.h"

#include <tuple>

#include "absl/strings/str_cat.h"

namespace cohort {

std::optional<CheckpointIdParts> PartsOf(const DamagedCheckpoint& checkpoint) {
  if (checkpoint.info) {
    return CheckpointIdParts{checkpoint.info->trial_id, checkpoint.info->batches_trained};
  }
  return ParseCheckpointId(checkpoint.id);
}

absl::StatusOr<CheckpointInfo> LatestCheckpoint(const CheckpointStorage& storage,
                                                uint64_t trial_id) {
  absl::StatusOr<std::vector<CheckpointInfo>> all = storage.List();
  if (!all.ok()) return all.status();
  const auto newness = [](const CheckpointInfo& c) {
    return std::tie(c.batches_trained, c.created_unix_ms, c.id);
  };
  const CheckpointInfo* latest = nullptr;
  for (const CheckpointInfo& checkpoint : *all) {
    if (checkpoint.trial_id != trial_id) continue;
    if (latest == nullptr || newness(*latest) < newness(checkpoint)) latest = &checkpoint;
  }
  if (latest == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("trial ", trial_id, " has no checkpoint in ", storage.Describe()));
  }
  return *latest;
}

}  // namespace cohort
