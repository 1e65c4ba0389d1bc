// TimedCollective: a CollectiveBackend that forwards every call to another and counts the time
// spent inside them and the bytes they were given, so the gradient exchange can tell the time its
// engine took (the collectives) from the rest of a bucket's work (its codec).
//
//   TimedCollective timed(gloo);
//   reducer = CreateBucketReducer(..., timed);   // the reducer calls through `timed`
//   double seconds = timed.TakeSeconds();        // since the last Take
//
// With a recorder set (set_recorder), each call is also appended to it with its steady-clock
// interval: the gradient exchange's timeline nests them in their bucket.
//
// Thread-safety: the calls as the wrapped backend allows; the counters may be read from any
// thread; the recorder belongs to the one thread making the calls while it is set.
#ifndef COHORT_RUNTIME_COLLECTIVE_TIMED_COLLECTIVE_H_
#define COHORT_RUNTIME_COLLECTIVE_TIMED_COLLECTIVE_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

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
  absl::Status ReduceSum(void* data, uint64_t count, cohort_dtype dtype, uint32_t root) override;
  absl::Status Broadcast(void* data, uint64_t bytes, uint32_t root) override;
  absl::Status Allgather(const void* in, uint64_t bytes_per_rank, void* out) override;
  absl::Status Gather(const void* in, uint64_t bytes_per_rank, void* out, uint32_t root) override;
  absl::Status Barrier() override;

  // One call: which ("allreduce", "allgather", "gather", "broadcast", "barrier"), the bytes it was
  // given and when it began and ended (seconds of std::chrono::steady_clock).
  struct Call {
    const char* name;
    uint64_t bytes;
    double begin;
    double end;
  };
  // Appends every call from now on to `calls`; nullptr stops it. `calls` must outlive its use.
  void set_recorder(std::vector<Call>* calls) { recorder_ = calls; }

  // Seconds spent inside the calls since the last Take, then zero.
  double TakeSeconds() { return static_cast<double>(nanoseconds_.exchange(0)) * 1e-9; }
  // Bytes this rank handed to the calls over the object's life.
  uint64_t bytes() const { return bytes_.load(); }

 private:
  template <class Function>
  absl::Status Timed(const char* name, uint64_t bytes, Function call);

  CollectiveBackend& inner_;
  std::atomic<uint64_t> nanoseconds_{0};
  std::atomic<uint64_t> bytes_{0};
  std::vector<Call>* recorder_ = nullptr;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_COLLECTIVE_TIMED_COLLECTIVE_H_
