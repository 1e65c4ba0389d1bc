// StagedHostCopies: a checkpoint's copies out of device memory, in two halves. Copy moves the
// bytes into page-locked host memory at once, the device's fastest copy, while training waits;
// Land moves them on into their destinations later, on the checkpoint writer's thread, while
// training goes on. A device that offers no page-locked memory (the CPU), or whose page-locked
// memory could not be had, is copied straight into the destination.
//
//   StagedHostCopies staged;
//   staged.Copy(*block.memory, bytes.data() + at, block.data, n);   // training thread
//   ... hand `bytes` to the writer ...
//   staged.Land();                                                  // writer thread
//
// The page-locked memory is kept from one capture to the next: the k-th copy of a capture reuses
// the k-th copy's memory of the capture before when it is large enough, so a trial, whose
// captures copy the same sizes in the same order, allocates only at its first. It costs host
// memory of the copies' size besides their destinations, and is freed with the object.
//
// Thread-safety: none; one thread at a time (the capture's, then the writer's: CheckpointWriter's
// Start and Wait order them).
#ifndef COHORT_RUNTIME_ARENA_STAGED_HOST_COPIES_H_
#define COHORT_RUNTIME_ARENA_STAGED_HOST_COPIES_H_

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "runtime/arena/device_memory.h"

namespace cohort {

class StagedHostCopies {
 public:
  StagedHostCopies() = default;
  ~StagedHostCopies();
  StagedHostCopies(const StagedHostCopies&) = delete;
  StagedHostCopies& operator=(const StagedHostCopies&) = delete;

  // Copies `bytes` bytes at `from` in `memory` toward host memory `to`. When staged, `to` gets
  // them at Land, and must stay valid until then (or until Discard); else they are there on
  // return. The error is CopyToHost's.
  absl::Status Copy(DeviceMemory& memory, void* to, const void* from, size_t bytes);

  // Puts every staged copy since the last Land or Discard into its destination.
  void Land();
  // Forgets the staged copies not landed (a capture that failed half way: their destinations may
  // be gone).
  void Discard();

  // Page-locked bytes held now. The memories that gave them must outlive this object.
  size_t pinned_bytes() const;
  // Copies waiting for Land.
  size_t staged() const { return pending_.size(); }
  // The first error of AllocatePinnedHost, OK while none came; after one, every copy is straight.
  const absl::Status& pinning_error() const { return pinning_error_; }

 private:
  struct Region {
    DeviceMemory* memory;
    void* data;
    size_t bytes;
  };
  struct Pending {
    void* to;
    const void* from;
    size_t bytes;
  };

  // The page-locked memory of this capture's `index`-th copy: the region of that index when it
  // fits, else a new one in its place; nullptr to copy straight.
  void* RegionFor(size_t index, DeviceMemory& memory, size_t bytes);

  std::vector<Region> regions_;
  std::vector<Pending> pending_;
  size_t copies_ = 0;  // this capture's, staged or straight
  absl::Status pinning_error_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_STAGED_HOST_COPIES_H_
