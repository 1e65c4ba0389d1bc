#include "runtime/collective/timed_collective.h"

#include <chrono>

#include "runtime/arena/dtype.h"

namespace cohort {

template <class Function>
absl::Status TimedCollective::Timed(const char* name, uint64_t bytes, Function call) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = call();
  const auto end = std::chrono::steady_clock::now();
  nanoseconds_ += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
  bytes_ += bytes;
  if (recorder_ != nullptr) {
    const auto seconds = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double>(t.time_since_epoch()).count();
    };
    recorder_->push_back({name, bytes, seconds(start), seconds(end)});
  }
  return status;
}

absl::Status TimedCollective::AllreduceSum(void* data, uint64_t count, cohort_dtype dtype) {
  const absl::StatusOr<size_t> element = DtypeSize(dtype);
  return Timed("allreduce", element.ok() ? count * *element : 0,
               [&] { return inner_.AllreduceSum(data, count, dtype); });
}

absl::Status TimedCollective::ReduceSum(void* data, uint64_t count, cohort_dtype dtype,
                                        uint32_t root) {
  const absl::StatusOr<size_t> element = DtypeSize(dtype);
  return Timed("reduce", element.ok() ? count * *element : 0,
               [&] { return inner_.ReduceSum(data, count, dtype, root); });
}

absl::Status TimedCollective::Broadcast(void* data, uint64_t bytes, uint32_t root) {
  return Timed("broadcast", bytes, [&] { return inner_.Broadcast(data, bytes, root); });
}

absl::Status TimedCollective::Allgather(const void* in, uint64_t bytes_per_rank, void* out) {
  return Timed("allgather", bytes_per_rank,
               [&] { return inner_.Allgather(in, bytes_per_rank, out); });
}

absl::Status TimedCollective::Gather(const void* in, uint64_t bytes_per_rank, void* out,
                                     uint32_t root) {
  return Timed("gather", bytes_per_rank,
               [&] { return inner_.Gather(in, bytes_per_rank, out, root); });
}

absl::Status TimedCollective::Barrier() {
  return Timed("barrier", 0, [&] { return inner_.Barrier(); });
}

}  // namespace cohort
