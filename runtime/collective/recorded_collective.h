// RecordedCollective: a CollectiveBackend that forwards every call to another and writes it to
// the rank's flight record (observe/flight_record.h) as it enters and leaves, so that after a
// hang `cohort trial diagnose` can tell which collective each rank last reached.
//
//   RecordedCollective recorded(std::move(gloo), recorder, kHostGroup);
//   {
//     CollectiveTagScope tag({.purpose = CollectivePurpose::kMetrics, .batch = 41});
//     recorded.AllreduceSum(...);   // recorded as "metrics, batch 42"
//   }
//
// CollectiveTagScope tags the collectives its thread makes while it lives (the innermost scope
// wins), so callers say what a collective is for without the backend interface knowing.
//
// Thread-safety: the calls as the wrapped backend allows; a tag belongs to its thread.
#ifndef COHORT_RUNTIME_COLLECTIVE_RECORDED_COLLECTIVE_H_
#define COHORT_RUNTIME_COLLECTIVE_RECORDED_COLLECTIVE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/collective/collective_backend.h"
#include "runtime/observe/flight_record.h"

namespace cohort {

class CollectiveTagScope {
 public:
  // `enqueued_ns`: when the collective's input was ready (Unix ns), 0 for when it starts.
  explicit CollectiveTagScope(const CollectiveTag& tag, int64_t enqueued_ns = 0);
  ~CollectiveTagScope();
  CollectiveTagScope(const CollectiveTagScope&) = delete;
  CollectiveTagScope& operator=(const CollectiveTagScope&) = delete;

  // The calling thread's innermost tag (untagged outside any scope) and its enqueue time.
  static CollectiveTag Current();
  static int64_t CurrentEnqueuedNs();

 private:
  const CollectiveTagScope* const outer_;
  const CollectiveTag tag_;
  const int64_t enqueued_ns_;
};

class RecordedCollective final : public CollectiveBackend {
 public:
  // Owns `inner`; `recorder` must outlive this object. `group` is one of flight_record.h's.
  RecordedCollective(std::unique_ptr<CollectiveBackend> inner, FlightRecorder& recorder,
                     uint8_t group)
      : inner_(std::move(inner)), recorder_(recorder), group_(group) {}

  uint32_t rank() const override { return inner_->rank(); }
  uint32_t size() const override { return inner_->size(); }
  std::string name() const override { return inner_->name(); }
  absl::Status AllreduceSum(void* data, uint64_t count, cohort_dtype dtype) override;
  absl::Status ReduceSum(void* data, uint64_t count, cohort_dtype dtype, uint32_t root) override;
  absl::Status Broadcast(void* data, uint64_t bytes, uint32_t root) override;
  absl::Status Allgather(const void* in, uint64_t bytes_per_rank, void* out) override;
  absl::Status Gather(const void* in, uint64_t bytes_per_rank, void* out, uint32_t root) override;
  absl::Status Barrier() override;

 private:
  template <class Function>
  absl::Status Recorded(CollectiveKind kind, const char* dtype, uint64_t bytes, Function call);

  const std::unique_ptr<CollectiveBackend> inner_;
  FlightRecorder& recorder_;
  const uint8_t group_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_COLLECTIVE_RECORDED_COLLECTIVE_H_
