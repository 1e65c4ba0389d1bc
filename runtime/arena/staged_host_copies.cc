#include "runtime/arena/staged_host_copies.h"

#include <cstring>

namespace cohort {

StagedHostCopies::~StagedHostCopies() {
  for (const Region& region : regions_) {
    if (region.data != nullptr) region.memory->FreePinnedHost(region.data);
  }
}

void* StagedHostCopies::RegionFor(size_t index, DeviceMemory& memory, size_t bytes) {
  if (index < regions_.size()) {
    Region& region = regions_[index];
    if (region.data != nullptr && region.memory == &memory && region.bytes >= bytes) {
      return region.data;
    }
    if (region.data != nullptr) region.memory->FreePinnedHost(region.data);
    region = Region{&memory, nullptr, 0};
  } else {
    regions_.resize(index + 1, Region{&memory, nullptr, 0});
  }
  if (!pinning_error_.ok()) return nullptr;
  absl::StatusOr<void*> pinned = memory.AllocatePinnedHost(bytes);
  if (!pinned.ok()) {
    pinning_error_ = pinned.status();
    return nullptr;
  }
  if (*pinned != nullptr) regions_[index] = Region{&memory, *pinned, bytes};
  return *pinned;
}

absl::Status StagedHostCopies::Copy(DeviceMemory& memory, void* to, const void* from,
                                    size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  void* pinned = RegionFor(copies_++, memory, bytes);
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
  copies_ = 0;
}

size_t StagedHostCopies::pinned_bytes() const {
  size_t total = 0;
  for (const Region& region : regions_) total += region.bytes;
  return total;
}

}  // namespace cohort
