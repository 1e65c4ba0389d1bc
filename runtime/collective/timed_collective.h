// TimedCollective: a CollectiveBackend that forwards every call to another and counts the time
// spent inside them and the bytes they were given, so the gradient exchange can tell the time its
// engine took (the collectives) from the rest of a bucket's work (its codec).
//
//   TimedCollective timed(gloo);
//   reducer = CreateBucketReducer(..., timed);   // the reducer calls through `timed`
//   double seconds = timed.TakeSeconds();        // since the last Take
//
// Thread-safety: the calls as the wrapped backend allows; the counters may be read from any
// thread.
#ifndef COHORT_RUNTIME_COLLECTIVE_TIMED_COLLECTIVE_H_
#define COHORT_RUNTIME_COLLECTIVE_TIMED_COLLECTIVE_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "runtime/collective/collective_backend.h"

namespace cohort {

class TimedCollective final : public CollectiveBackend {
 public:
  // `inner` must outlive this object.
  explicit TimedCollective(CollectiveBackend& inner) : inner_(inner) {}

  uint32_t rank() const override { return inner_.rank(); }
  uint32_t size() const override { return inner_.size(); }
  std::string name() const override { return inner_.name(); }
  absl::Status AllreduceSum(void* data, uint64_t count, cohort_dtype dtype) override;
  absl::Status Broadcast(void* data, uint64_t bytes, uint32_t root) override;
  absl::Status Allgather(const void* in, uint64_t bytes_per_rank, void* out) override;
  absl::Status Barrier() override;

  // Seconds spent inside the calls since the last Take, then zero.
  double TakeSeconds() { return static_cast<double>(nanoseconds_.exchange(0)) * 1e-9; }
  // Bytes this rank handed to the calls over the object's life.
  uint64_t bytes() const { return bytes_.load(); }

 private:
  template <class Call>
  absl::Status Timed(uint64_t bytes, Call call);

  CollectiveBackend& inner_;
  std::atomic<uint64_t> nanoseconds_{0};
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_COLLECTIVE_TIMED_COLLECTIVE_H_
