#include "runtime/collective/timed_collective.h"

#include <chrono>

#include "runtime/arena/dtype.h"

namespace cohort {

template <class Call>
absl::Status TimedCollective::Timed(uint64_t bytes, Call call) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = call();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  nanoseconds_ += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
  bytes_ += bytes;
  return status;
}

absl::Status TimedCollective::AllreduceSum(void* data, uint64_t count, cohort_dtype dtype) {
  const absl::StatusOr<size_t> element = DtypeSize(dtype);
  return Timed(element.ok() ? count * *element : 0,
               [&] { return inner_.AllreduceSum(data, count, dtype); });
}

absl::Status TimedCollective::Broadcast(void* data, uint64_t bytes, uint32_t root) {
  return Timed(bytes, [&] { return inner_.Broadcast(data, bytes, root); });
}

absl::Status TimedCollective::Allgather(const void* in, uint64_t bytes_per_rank, void* out) {
  return Timed(bytes_per_rank, [&] { return inner_.Allgather(in, bytes_per_rank, out); });
}

absl::Status TimedCollective::Barrier() {
  return Timed(0, [&] { return inner_.Barrier(); });
}

}  // namespace cohort
