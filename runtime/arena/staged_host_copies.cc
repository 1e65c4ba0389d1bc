#include "runtime/arena/staged_host_copies.h"

#include <cstring>

namespace cohort {
namespace {

// Each copy starts on a cache line of the page-locked memory.
constexpr size_t kCopyAlignment = 64;

size_t Aligned(size_t bytes) {
  return (bytes + kCopyAlignment - 1) / kCopyAlignment * kCopyAlignment;
}

}  // namespace

StagedHostCopies::~StagedHostCopies() {
  FinishReserve();
  for (const Region& region : regions_) region.memory->FreePinnedHost(region.data);
}

void StagedHostCopies::Reserve(DeviceMemory& memory, size_t bytes) {
  if (bytes == 0 || reserving_.joinable() || !regions_.empty()) return;
  reserved_ = Region{&memory, nullptr, bytes};
  reserving_ = std::thread([this] {
    absl::StatusOr<void*> pinned = reserved_.memory->AllocatePinnedHost(reserved_.bytes);
    if (pinned.ok()) {
      reserved_.data = static_cast<char*>(*pinned);
    } else {
      reserve_error_ = pinned.status();
    }
  });
}

size_t StagedHostCopies::BytesFor(size_t bytes, size_t copies) {
  return bytes + copies * (kCopyAlignment - 1);
}

void StagedHostCopies::FinishReserve() {
  if (!reserving_.joinable()) return;
  reserving_.join();
  if (reserved_.data != nullptr) regions_.insert(regions_.begin(), reserved_);
  if (!reserve_error_.ok() && pinning_error_.ok()) pinning_error_ = reserve_error_;
}

void* StagedHostCopies::Carve(DeviceMemory& memory, size_t bytes) {
  FinishReserve();
  for (; region_ < regions_.size(); ++region_, offset_ = 0) {
    const Region& region = regions_[region_];
    if (region.memory == &memory && region.bytes >= offset_ + bytes) {
      char* carved = region.data + offset_;
      offset_ += Aligned(bytes);
      return carved;
    }
  }
  if (!pinning_error_.ok()) return nullptr;
  absl::StatusOr<void*> pinned = memory.AllocatePinnedHost(bytes);
  if (!pinned.ok()) {
    pinning_error_ = pinned.status();
    return nullptr;
  }
  if (*pinned == nullptr) return nullptr;  // the device has none to offer
  regions_.push_back(Region{&memory, static_cast<char*>(*pinned), bytes});
  region_ = regions_.size() - 1;
  offset_ = Aligned(bytes);
  return *pinned;
}

absl::Status StagedHostCopies::Copy(DeviceMemory& memory, void* to, const void* from,
                                    size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  void* pinned = Carve(memory, bytes);
  if (pinned == nullptr) return memory.CopyToHost(to, from, bytes);
  if (absl::Status copied = memory.CopyToHost(pinned, from, bytes); !copied.ok()) return copied;
  pending_.push_back(Pending{to, pinned, bytes});
  return absl::OkStatus();
}

void StagedHostCopies::Land() {
  for (const Pending& copy : pending_) std::memcpy(copy.to, copy.from, copy.bytes);
  Discard();
}

void StagedHostCopies::Discard() {
  pending_.clear();
  region_ = 0;
  offset_ = 0;
}

absl::Status CopyToHostVia(StagedHostCopies* staged, DeviceMemory& memory, void* to,
                           const void* from, size_t bytes) {
  if (staged != nullptr) return staged->Copy(memory, to, from, bytes);
  return memory.CopyToHost(to, from, bytes);
}

size_t StagedHostCopies::pinned_bytes() {
  FinishReserve();
  size_t total = 0;
  for (const Region& region : regions_) total += region.bytes;
  return total;
}

const absl::Status& StagedHostCopies::pinning_error() {
  FinishReserve();
  return pinning_error_;
}

}  // namespace cohort
