#include "runtime/collective/recorded_collective.h"

#include "runtime/arena/dtype.h"

namespace cohort {
namespace {

thread_local const CollectiveTagScope* innermost_tag = nullptr;

}  // namespace

CollectiveTagScope::CollectiveTagScope(const CollectiveTag& tag, int64_t enqueued_ns)
    : outer_(innermost_tag), tag_(tag), enqueued_ns_(enqueued_ns) {
  innermost_tag = this;
}

CollectiveTagScope::~CollectiveTagScope() { innermost_tag = outer_; }

CollectiveTag CollectiveTagScope::Current() {
  return innermost_tag != nullptr ? innermost_tag->tag_ : CollectiveTag{};
}

int64_t CollectiveTagScope::CurrentEnqueuedNs() {
  return innermost_tag != nullptr ? innermost_tag->enqueued_ns_ : 0;
}

template <class Function>
absl::Status RecordedCollective::Recorded(CollectiveKind kind, const char* dtype, uint64_t bytes,
                                          Function call) {
  const uint64_t entry = recorder_.Enter(group_, kind, dtype, bytes, CollectiveTagScope::Current(),
                                         CollectiveTagScope::CurrentEnqueuedNs());
  absl::Status status = call();
  recorder_.Leave(entry, status.ok());
  return status;
}

absl::Status RecordedCollective::AllreduceSum(void* data, uint64_t count, cohort_dtype dtype) {
  const absl::StatusOr<size_t> element = DtypeSize(dtype);
  return Recorded(CollectiveKind::kAllreduce, DtypeName(dtype).c_str(),
                  element.ok() ? count * *element : 0,
                  [&] { return inner_->AllreduceSum(data, count, dtype); });
}

absl::Status RecordedCollective::ReduceSum(void* data, uint64_t count, cohort_dtype dtype,
                                           uint32_t root) {
  const absl::StatusOr<size_t> element = DtypeSize(dtype);
  return Recorded(CollectiveKind::kReduce, DtypeName(dtype).c_str(),
                  element.ok() ? count * *element : 0,
                  [&] { return inner_->ReduceSum(data, count, dtype, root); });
}

absl::Status RecordedCollective::Broadcast(void* data, uint64_t bytes, uint32_t root) {
  return Recorded(CollectiveKind::kBroadcast, "bytes", bytes,
                  [&] { return inner_->Broadcast(data, bytes, root); });
}

absl::Status RecordedCollective::Allgather(const void* in, uint64_t bytes_per_rank, void* out) {
  return Recorded(CollectiveKind::kAllgather, "bytes", bytes_per_rank,
                  [&] { return inner_->Allgather(in, bytes_per_rank, out); });
}

absl::Status RecordedCollective::Gather(const void* in, uint64_t bytes_per_rank, void* out,
                                        uint32_t root) {
  return Recorded(CollectiveKind::kGather, "bytes", bytes_per_rank,
                  [&] { return inner_->Gather(in, bytes_per_rank, out, root); });
}

absl::Status RecordedCollective::Barrier() {
  return Recorded(CollectiveKind::kBarrier, "bytes", 0, [&] { return inner_->Barrier(); });
}

}  // namespace cohort
