// The flight record: the last collectives one rank of a trial took part in, kept in a small file
// the rank maps into memory and writes as each collective is entered and left. The file is read
// by others while the rank runs, hangs, is stopped (SIGSTOP) or after it died: the kernel holds
// the pages, so a rank that can no longer answer still tells which collective it last reached.
//
//   FlightRecorder::Identity who{.trial_id = 7, .task_id = 12, .rank = 1, .size = 2};
//   absl::StatusOr<std::unique_ptr<FlightRecorder>> recorder = FlightRecorder::Create(path, who);
//   const uint64_t entry = (*recorder)->Enter(kHostGroup, CollectiveKind::kAllreduce, "float32",
//                                             bytes, tag, /*enqueued_ns=*/0);
//   ... the collective ...
//   (*recorder)->Leave(entry, status.ok());
//
//   absl::StatusOr<FlightRecord> record = ReadFlightRecord(path);   // any process, any time
//
// Every collective of a group (the host's Gloo group, the gradients', ZeRO checkpoints') gets the
// next sequence number of that group; every rank calls a group's collectives in the same order, so
// a sequence number names the same collective on every rank. The recorder also stamps the file
// every heartbeat (a thread of its own), so a reader tells a stopped process from a busy one.
// Times are Unix nanoseconds (CLOCK_REALTIME), comparable across the machines of a trial.
//
// The layout is this machine's (little-endian, 8-byte aligned) and versioned by kFlightVersion;
// ReadFlightRecord refuses any other version, naming both.
//
// Thread-safety: Enter and Leave from any threads (one collective per group at a time, as the
// backends allow); ReadFlightRecord from anywhere, an entry being written at that instant skipped.
#ifndef COHORT_RUNTIME_OBSERVE_FLIGHT_RECORD_H_
#define COHORT_RUNTIME_OBSERVE_FLIGHT_RECORD_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace cohort {

struct FlightFileHeader;  // the file's first 128 bytes (flight_record.cc)

inline constexpr uint32_t kFlightVersion = 1;
inline constexpr uint32_t kDefaultFlightCapacity = 2048;

// The groups a rank's collectives go through.
inline constexpr uint8_t kHostGroup = 0;      // Gloo: the host's work, CPU gradients
inline constexpr uint8_t kGradientGroup = 1;  // NCCL on a GPU, or the exchange's own group
// ZeRO: the optimizer shards of a checkpoint on their way to rank 0, off the training thread.
inline constexpr uint8_t kCheckpointGroup = 2;
inline constexpr uint8_t kFlightGroups = 3;
const char* FlightGroupName(uint8_t group);

enum class CollectiveKind : uint8_t {
  kAllreduce = 1,
  kBroadcast,
  kAllgather,
  kBarrier,
  kReduce,
  kGather,
};
const char* CollectiveKindName(CollectiveKind kind);

// What a collective was for, as its caller tagged it (CollectiveTagScope in the collective
// component); kUntagged where nobody did.
enum class CollectivePurpose : uint8_t {
  kUntagged = 0,
  kGradientBucket,  // a bucket of the batch's gradients
  kStepCheck,       // the exchange's check that every rank is at the same batch
  kReadyOrder,      // agreeing on the order backward finished the gradients in
  kParameters,      // rank 0's parameters or state to every rank
  kLayout,          // checking every rank registered the same tensors
  kMetrics,         // merging the ranks' metrics
  kDecision,        // agreeing on a yes/no (a stop, a checkpoint)
  kCheckpoint,      // gathering the ranks' parts of a checkpoint
  kShard,           // ZeRO: a rank's shard of the stepped parameters, or of the summed gradients
  kFusionTuning,    // agreeing on the bucket size kept (tensor_fusion_threshold auto)
};
const char* CollectivePurposeName(CollectivePurpose purpose);

struct CollectiveTag {
  CollectivePurpose purpose = CollectivePurpose::kUntagged;
  int32_t bucket = -1;  // the gradient bucket, from 0; -1 for none
  int64_t batch = -1;   // the batch it belongs to, from 0; -1 for none
};

enum class FlightState : uint8_t { kEntered = 0, kFinished = 1, kFailed = 2 };

// One collective as the file holds it (80 bytes).
struct FlightEntry {
  uint64_t index = 0;  // 1 + the rank's count of collectives before it; 0: slot unused
  uint64_t seq = 0;    // its number within its group, from 1
  uint64_t bytes = 0;  // the bytes this rank handed to it
  int64_t batch = -1;
  int64_t enqueued_ns = 0;  // when its caller had it ready (its bucket's gradients), else started
  int64_t started_ns = 0;
  int64_t finished_ns = 0;  // 0 while it runs
  uint8_t group = kHostGroup;
  CollectiveKind kind = CollectiveKind::kAllreduce;
  CollectivePurpose purpose = CollectivePurpose::kUntagged;
  FlightState state = FlightState::kEntered;
  int32_t bucket = -1;
  char dtype[16] = {};  // "float32"; "bytes" for untyped copies
};
static_assert(sizeof(FlightEntry) == 80);

class FlightRecorder {
 public:
  struct Identity {
    uint64_t trial_id = 0;
    uint64_t task_id = 0;
    uint32_t attempt = 0;
    uint32_t rank = 0;
    uint32_t size = 1;
  };

  // Creates (or replaces) `path` holding `capacity` entries, maps it and starts the heartbeat
  // (every `heartbeat_seconds`). Errors name the path.
  static absl::StatusOr<std::unique_ptr<FlightRecorder>> Create(
      const std::string& path, const Identity& identity, uint32_t capacity = kDefaultFlightCapacity,
      double heartbeat_seconds = 0.1);
  // Marks the record ended (the rank left on its own) and unmaps it; the file stays.
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // Records that this rank enters a collective of `group` now; returns what Leave takes.
  // `enqueued_ns` 0 means now. `dtype` is cut to 15 characters.
  uint64_t Enter(uint8_t group, CollectiveKind kind, const char* dtype, uint64_t bytes,
                 const CollectiveTag& tag, int64_t enqueued_ns);
  // Records that the collective `entry` returned, successfully or not.
  void Leave(uint64_t entry, bool ok);

  const std::string& path() const { return path_; }

 private:
  FlightRecorder(std::string path, void* mapping, size_t bytes, uint32_t capacity,
                 double heartbeat_seconds);
  FlightFileHeader& header() const;
  FlightEntry& slot(uint64_t index) const;
  void Beat();

  const std::string path_;
  void* const mapping_;
  const size_t bytes_;
  const uint32_t capacity_;
  const double heartbeat_seconds_;
  std::atomic<uint64_t> next_index_{0};
  std::atomic<uint64_t> next_seq_[kFlightGroups] = {0, 0, 0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread heartbeat_;
};

// A record as read back.
struct FlightRecord {
  std::string path;
  FlightRecorder::Identity identity;
  uint32_t pid = 0;
  int64_t started_ns = 0;
  int64_t alive_ns = 0;              // the last heartbeat
  bool ended = false;                // the rank left on its own (its recorder was destroyed)
  std::vector<FlightEntry> entries;  // oldest first
};

// Reads the record at `path`. Errors name the path (missing, too short, another version).
absl::StatusOr<FlightRecord> ReadFlightRecord(const std::string& path);

// Unix nanoseconds now (CLOCK_REALTIME).
int64_t FlightClockNs();

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_FLIGHT_RECORD_H_
