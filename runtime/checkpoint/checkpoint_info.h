// CheckpointInfo: what a checkpoint's manifest records, and Checkpoint: a manifest with its files.
//
//   CheckpointInfo info;
//   info.id = "trial-7-batch-1200";
//   info.trial_id = 7;
//   info.batches_trained = 1200;
//   storage.Write(info, {{"parameters", bytes}, {"optimizer", state}});
//
// Plain values; no synchronization.
#ifndef COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_INFO_H_
#define COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_INFO_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cohort {

struct CheckpointFileInfo {
  std::string name;
  uint64_t size = 0;
  uint32_t crc32c = 0;

  friend bool operator==(const CheckpointFileInfo&, const CheckpointFileInfo&) = default;
};

struct CheckpointInfo {
  std::string id;  // the folder name: see ValidateCheckpointId
  uint64_t trial_id = 0;
  uint64_t batches_trained = 0;
  uint64_t records_trained = 0;
  std::string config_fingerprint;
  uint32_t abi_major = 0, abi_minor = 0;  // the plugin ABI the state was written with
  int64_t created_unix_ms = 0;            // 0 when writing: the time of the write
  std::vector<CheckpointFileInfo> files;  // filled by CheckpointStorage::Write, sorted by name
  uint32_t slots = 0;  // the trial's slots (ranks) when written; 0: not recorded (older ones)

  friend bool operator==(const CheckpointInfo&, const CheckpointInfo&) = default;
};

struct Checkpoint {
  CheckpointInfo info;
  std::map<std::string, std::string> files;  // name -> bytes
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_INFO_H_
