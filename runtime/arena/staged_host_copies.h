// StagedHostCopies: a checkpoint's copies out of device memory, in two halves. Copy moves the
// bytes into page-locked host memory at once, the device's fastest copy, while training waits;
// Land moves them on into their destinations later, on the checkpoint writer's thread, while
// training goes on. A device that offers no page-locked memory (the CPU), or whose page-locked
// memory could not be had, is copied straight into the destination.
//
//   StagedHostCopies staged;
//   staged.Reserve(*block.memory, StagedHostCopies::BytesFor(state_bytes, buffers));  // at start
//   staged.Copy(*block.memory, bytes.data() + at, block.data, n);   // training thread
//   ... hand `bytes` to the writer ...
//   staged.Land();                                                  // writer thread
//
// The page-locked memory is kept from one capture to the next: each capture carves its copies
// out of it in order, from its start, so a trial, whose captures copy the same sizes in the same
// order, takes new memory at its first capture at most. Reserve takes it before, on a thread of
// its own: pinning memory is slow (it touches every page), and the first checkpoint would
// otherwise stall for it. It costs host memory of the copies' size besides their destinations,
// and is freed with the object.
//
// Thread-safety: none; one thread at a time (the capture's, then the writer's: CheckpointWriter's
// Start and Wait order them). Reserve's thread is joined before anything else uses the memory.
#ifndef COHORT_RUNTIME_ARENA_STAGED_HOST_COPIES_H_
#define COHORT_RUNTIME_ARENA_STAGED_HOST_COPIES_H_

#include <cstddef>
#include <thread>
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

  // Starts taking `bytes` of page-locked memory of `memory` for the captures to come, on a thread
  // of its own, and returns; the first Copy waits for it. Only before any Copy; a second call, or
  // one for 0 bytes, does nothing. `memory` must outlive this object.
  void Reserve(DeviceMemory& memory, size_t bytes);
  // Enough for `copies` copies of `bytes` bytes in all (each is carved at an aligned offset).
  static size_t BytesFor(size_t bytes, size_t copies);

  // Copies `bytes` bytes at `from` in `memory` toward host memory `to`. When staged, `to` gets
  // them at Land, and must stay valid until then (or until Discard); else they are there on
  // return. The error is CopyToHost's.
  absl::Status Copy(DeviceMemory& memory, void* to, const void* from, size_t bytes);

  // Puts every staged copy since the last Land or Discard into its destination.
  void Land();
  // Forgets the staged copies not landed (a capture that failed half way: their destinations may
  // be gone).
  void Discard();

  // Page-locked bytes held now (a Reserve's once it is done). The memories that gave them must
  // outlive this object.
  size_t pinned_bytes();
  // Copies waiting for Land.
  size_t staged() const { return pending_.size(); }
  // The first error of AllocatePinnedHost, OK while none came; after one, every copy is straight.
  const absl::Status& pinning_error();

 private:
  struct Region {
    DeviceMemory* memory;
    char* data;
    size_t bytes;
  };
  struct Pending {
    void* to;
    const void* from;
    size_t bytes;
  };

  // Joins Reserve's thread, keeping what it took.
  void FinishReserve();
  // `bytes` of page-locked memory of `memory` for this capture's next copy: carved after the
  // copies before it, or a new region; nullptr to copy straight.
  void* Carve(DeviceMemory& memory, size_t bytes);

  std::vector<Region> regions_;
  size_t region_ = 0;  // where this capture carves next: the region, and the offset in it
  size_t offset_ = 0;
  std::vector<Pending> pending_;
  absl::Status pinning_error_;
  std::thread reserving_;  // Reserve's, writing reserved_ and reserve_error_
  Region reserved_{};
  absl::Status reserve_error_;
};

// A copy out of `memory` toward host memory `to`: through `staged` when given (landing at its
// Land), else straight (done on return).
absl::Status CopyToHostVia(StagedHostCopies* staged, DeviceMemory& memory, void* to,
                           const void* from, size_t bytes);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_STAGED_HOST_COPIES_H_
