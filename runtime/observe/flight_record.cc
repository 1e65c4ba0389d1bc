#include "runtime/observe/flight_record.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace cohort {

constexpr char kFlightMagic[8] = {'C', 'O', 'H', 'O', 'R', 'T', 'F', 'R'};

struct FlightFileHeader {
  char magic[8];
  uint32_t version;
  uint32_t capacity;
  uint64_t trial_id;
  uint64_t task_id;
  uint32_t attempt;
  uint32_t rank;
  uint32_t size;
  uint32_t pid;
  int64_t started_ns;
  int64_t alive_ns;  // written through std::atomic_ref
  uint32_t ended;    // written through std::atomic_ref
  uint32_t reserved;
  uint64_t unused[7];
};
static_assert(sizeof(FlightFileHeader) == 128);

namespace {

size_t FileBytes(uint32_t capacity) {
  return sizeof(FlightFileHeader) + size_t{capacity} * sizeof(FlightEntry);
}

absl::Status PathError(const std::string& what, const std::string& path) {
  return absl::UnavailableError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

const char* FlightGroupName(uint8_t group) {
  switch (group) {
    case kHostGroup:
      return "host";
    case kGradientGroup:
      return "gradient";
    case kCheckpointGroup:
      return "checkpoint";
    default:
      return "unknown";
  }
}

const char* CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllreduce:
      return "allreduce";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllgather:
      return "allgather";
    case CollectiveKind::kBarrier:
      return "barrier";
    case CollectiveKind::kReduce:
      return "reduce";
    case CollectiveKind::kGather:
      return "gather";
  }
  return "unknown";
}

const char* CollectivePurposeName(CollectivePurpose purpose) {
  switch (purpose) {
    case CollectivePurpose::kUntagged:
      return "";
    case CollectivePurpose::kGradientBucket:
      return "gradient bucket";
    case CollectivePurpose::kStepCheck:
      return "step check";
    case CollectivePurpose::kReadyOrder:
      return "gradient ready order";
    case CollectivePurpose::kParameters:
      return "parameters from rank 0";
    case CollectivePurpose::kLayout:
      return "tensor layout check";
    case CollectivePurpose::kMetrics:
      return "metrics";
    case CollectivePurpose::kDecision:
      return "decision";
    case CollectivePurpose::kCheckpoint:
      return "checkpoint";
    case CollectivePurpose::kShard:
      return "shard";
    case CollectivePurpose::kFusionTuning:
      return "fusion tuning";
  }
  return "unknown";
}

int64_t FlightClockNs() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

absl::StatusOr<std::unique_ptr<FlightRecorder>> FlightRecorder::Create(const std::string& path,
                                                                       const Identity& identity,
                                                                       uint32_t capacity,
                                                                       double heartbeat_seconds) {
  capacity = std::max<uint32_t>(capacity, 1);
  const size_t bytes = FileBytes(capacity);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return PathError("cannot create the flight record", path);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const absl::Status error = PathError("cannot size the flight record", path);
    ::close(fd);
    return error;
  }
  void* mapping = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED) {
    const absl::Status error = PathError("cannot map the flight record", path);
    ::close(fd);
    return error;
  }
  ::close(fd);  // the mapping keeps the file
  auto* header = static_cast<FlightFileHeader*>(mapping);
  std::memcpy(header->magic, kFlightMagic, sizeof(kFlightMagic));
  header->version = kFlightVersion;
  header->capacity = capacity;
  header->trial_id = identity.trial_id;
  header->task_id = identity.task_id;
  header->attempt = identity.attempt;
  header->rank = identity.rank;
  header->size = identity.size;
  header->pid = static_cast<uint32_t>(::getpid());
  header->started_ns = header->alive_ns = FlightClockNs();
  return std::unique_ptr<FlightRecorder>(
      new FlightRecorder(path, mapping, bytes, capacity, heartbeat_seconds));
}

FlightRecorder::FlightRecorder(std::string path, void* mapping, size_t bytes, uint32_t capacity,
                               double heartbeat_seconds)
    : path_(std::move(path)),
      mapping_(mapping),
      bytes_(bytes),
      capacity_(capacity),
      heartbeat_seconds_(heartbeat_seconds),
      heartbeat_([this] { Beat(); }) {}

FlightRecorder::~FlightRecorder() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  heartbeat_.join();
  std::atomic_ref<int64_t>(header().alive_ns).store(FlightClockNs(), std::memory_order_relaxed);
  std::atomic_ref<uint32_t>(header().ended).store(1, std::memory_order_release);
  ::munmap(mapping_, bytes_);
}

FlightFileHeader& FlightRecorder::header() const {
  return *static_cast<FlightFileHeader*>(mapping_);
}

FlightEntry& FlightRecorder::slot(uint64_t index) const {
  auto* entries =
      reinterpret_cast<FlightEntry*>(static_cast<char*>(mapping_) + sizeof(FlightFileHeader));
  return entries[(index - 1) % capacity_];
}

void FlightRecorder::Beat() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto period = std::chrono::duration<double>(heartbeat_seconds_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    std::atomic_ref<int64_t>(header().alive_ns).store(FlightClockNs(), std::memory_order_relaxed);
  }
}

uint64_t FlightRecorder::Enter(uint8_t group, CollectiveKind kind, const char* dtype,
                               uint64_t bytes, const CollectiveTag& tag, int64_t enqueued_ns) {
  const uint64_t index = next_index_.fetch_add(1) + 1;
  FlightEntry& entry = slot(index);
  std::atomic_ref<uint64_t> published(entry.index);
  published.store(0, std::memory_order_release);  // a reader skips it while it is rewritten
  const int64_t now = FlightClockNs();
  entry.seq = next_seq_[group < kFlightGroups ? group : kHostGroup].fetch_add(1) + 1;
  entry.bytes = bytes;
  entry.batch = tag.batch;
  entry.enqueued_ns = enqueued_ns != 0 ? enqueued_ns : now;
  entry.started_ns = now;
  entry.finished_ns = 0;
  entry.group = group;
  entry.kind = kind;
  entry.purpose = tag.purpose;
  entry.state = FlightState::kEntered;
  entry.bucket = tag.bucket;
  std::memset(entry.dtype, 0, sizeof(entry.dtype));
  std::strncpy(entry.dtype, dtype, sizeof(entry.dtype) - 1);
  published.store(index, std::memory_order_release);
  return index;
}

void FlightRecorder::Leave(uint64_t index, bool ok) {
  FlightEntry& entry = slot(index);
  // Gone round the ring already: nothing of it is left to finish.
  if (std::atomic_ref<uint64_t>(entry.index).load(std::memory_order_acquire) != index) return;
  entry.finished_ns = FlightClockNs();
  entry.state = ok ? FlightState::kFinished : FlightState::kFailed;
}

absl::StatusOr<FlightRecord> ReadFlightRecord(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return PathError("cannot read the flight record", path);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  FlightFileHeader header{};
  if (bytes.size() < sizeof(header)) {
    return absl::DataLossError(
        absl::StrCat("the flight record ", path, " is too short (", bytes.size(), " bytes)"));
  }
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (std::memcmp(header.magic, kFlightMagic, sizeof(kFlightMagic)) != 0) {
    return absl::DataLossError(absl::StrCat(path, " is not a flight record"));
  }
  if (header.version != kFlightVersion) {
    return absl::FailedPreconditionError(absl::StrCat("the flight record ", path, " is of version ",
                                                      header.version, "; this build reads version ",
                                                      kFlightVersion));
  }
  if (header.capacity == 0 || bytes.size() < FileBytes(header.capacity)) {
    return absl::DataLossError(absl::StrCat("the flight record ", path, " is cut short"));
  }
  FlightRecord record;
  record.path = path;
  record.identity = {.trial_id = header.trial_id,
                     .task_id = header.task_id,
                     .attempt = header.attempt,
                     .rank = header.rank,
                     .size = header.size};
  record.pid = header.pid;
  record.started_ns = header.started_ns;
  record.alive_ns = header.alive_ns;
  record.ended = header.ended != 0;
  for (uint32_t i = 0; i < header.capacity; ++i) {
    FlightEntry entry;
    std::memcpy(&entry, bytes.data() + sizeof(header) + size_t{i} * sizeof(entry), sizeof(entry));
    if (entry.index == 0 || (entry.index - 1) % header.capacity != i) continue;
    entry.dtype[sizeof(entry.dtype) - 1] = '\0';
    record.entries.push_back(entry);
  }
  std::sort(record.entries.begin(), record.entries.end(),
            [](const FlightEntry& a, const FlightEntry& b) { return a.index < b.index; });
  return record;
}

}  // namespace cohort
