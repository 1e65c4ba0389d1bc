// ReserveHostBuffer: room in a byte string for a large copy of tensors (a checkpoint's capture),
// made cheap to fill the first time.
//
//   std::string values;
//   ReserveHostBuffer(values, arena_bytes);   // no page touched yet
//   values.resize(arena_bytes);               // faults once per 2 MiB, not once per 4 KiB
//
// Filling fresh memory costs a page fault per page: for the 2 GB of a 1 GB model's parameters
// and momentum, half a million faults, 9 s on a 2-core VM. Where the kernel backs memory with
// transparent huge pages on request (madvise mode, Debian's default), the buffer asks for them.
#ifndef COHORT_RUNTIME_ARENA_HOST_BUFFER_H_
#define COHORT_RUNTIME_ARENA_HOST_BUFFER_H_

#include <cstddef>
#include <string>

namespace cohort {

// Makes `buffer`'s capacity at least `bytes`, keeping its contents; memory newly reserved for 2 MiB
// or more is advised to use huge pages (advice only: where the kernel declines, nothing changes).
void ReserveHostBuffer(std::string& buffer, size_t bytes);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_HOST_BUFFER_H_
