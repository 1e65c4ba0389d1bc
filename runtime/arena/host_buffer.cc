#include "runtime/arena/host_buffer.h"

#include <sys/mman.h>

#include <cstdint>

namespace cohort {

void ReserveHostBuffer(std::string& buffer, size_t bytes) {
  if (buffer.capacity() >= bytes) return;
  buffer.reserve(bytes);
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(buffer.data());
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (begin + buffer.capacity()) & ~(kHugePage - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
}

}  // namespace cohort
