// FusionTuner: optimizations.tensor_fusion_threshold `auto`. The exchange tries a few bucket sizes
// during a trial's first exchanged batches and keeps the fastest, as Horovod's autotune does for
// its fusion threshold.
//
// Each candidate is used for kWarmupBatches exchanged batches (not measured: the first batch after
// a new cut also learns the ready order and builds the reducer's buffers) and then for
// kMeasuredBatches, whose times (the training thread's, from Begin to the end of Finish, so
// backward's overlap with the exchange counts) give the candidate's median. Once every candidate
// has its median, the ranks agree: each rank's medians are gathered, every rank averages them in
// rank order (the same bits everywhere) and keeps the fastest, so every rank cuts its buckets
// alike.
//
//   FusionTuner tuner(FusionCandidates(arena, threshold_bytes));
//   each exchanged batch: exchange.SetBucketLimits(tuner.current()) if it differs; time it;
//     if (tuner.Record(seconds) == FusionTuner::Step::kAllMeasured) {
//       gather every rank's tuner.medians(); tuner.Decide(averaged); log tuner.Describe(...);
//     }
//
// Thread-safety: not thread-safe; used by the thread that drives the model.
#ifndef COHORT_RUNTIME_EXCHANGE_FUSION_TUNER_H_
#define COHORT_RUNTIME_EXCHANGE_FUSION_TUNER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/exchange/bucket_plan.h"

namespace cohort {

// The smallest bucket size compared: below the default's floor (kSmallestBucketBytes), where a
// fast transport may still gain from more overlap.
inline constexpr uint64_t kSmallestCandidateBytes = 256 << 10;

// The bucket limits worth comparing for the arena's gradient under a threshold of
// `threshold_bytes`: bucket sizes of kSmallestCandidateBytes times powers of 4 up to the
// threshold, and the one
// FitBucketLimits would pick alone; none larger than the first that holds the whole gradient in
// one bucket, each with FitBucketLimits' first bucket (at most the bucket). Limits that cut the
// arena (in reverse registration order) exactly as a smaller candidate does are left out, so a
// small model may have one candidate only. Ascending by bucket size.
std::vector<BucketLimits> FusionCandidates(const TensorArena& arena, uint64_t threshold_bytes);

class FusionTuner {
 public:
  static constexpr uint32_t kWarmupBatches = 1;
  static constexpr uint32_t kMeasuredBatches = 5;

  enum class Step {
    kSame,           // keep exchanging with current()
    kNextCandidate,  // current() is the next candidate: cut the buckets again
    kAllMeasured,    // every candidate has its median: agree and Decide
  };

  // `candidates` is not empty. With one candidate there is nothing to compare: the tuner is
  // decided from the start.
  explicit FusionTuner(std::vector<BucketLimits> candidates);

  // The limits to exchange the next batch with.
  const BucketLimits& current() const { return candidates_[current_]; }
  const std::vector<BucketLimits>& candidates() const { return candidates_; }
  // True until Decide or Adopt (or with one candidate): exchanged batches are to be Recorded.
  bool tuning() const { return !decided_; }

  // One exchanged batch under current() took `seconds`. Call only while tuning() and before
  // kAllMeasured was returned.
  Step Record(double seconds);
  // This rank's median seconds per exchanged batch for each candidate, after kAllMeasured.
  const std::vector<double>& medians() const { return medians_; }

  // Keeps the candidate of least `seconds` (one per candidate: the ranks' agreed figures; the
  // first of equal ones), and returns its index. Tuning is over.
  size_t Decide(absl::Span<const double> seconds);
  // Keeps `limits` without measuring (a checkpoint's choice, even a size this run would not try:
  // another model build), and tuning is over; unless its buckets are larger than
  // `threshold_bytes` (a threshold lowered since), which leaves the tuner as it was and returns
  // false.
  bool Adopt(const BucketLimits& limits, uint64_t threshold_bytes);

  // "256 KiB 12.31 ms, 1 MiB 10.02 ms (kept), 4 MiB 10.50 ms": each candidate's bucket size and
  // figure, the kept one marked.
  std::string Describe(absl::Span<const double> seconds) const;

 private:
  std::vector<BucketLimits> candidates_;
  size_t current_ = 0;
  uint32_t batches_on_current_ = 0;
  std::vector<double> samples_;  // the current candidate's measured seconds
  std::vector<double> medians_;  // one per candidate measured so far
  bool decided_ = false;
};

// "1 MiB", "256 KiB", "1.5 MiB": a bucket size as the log shows it.
std::string BucketBytesText(uint64_t bytes);

// The "bucket_limits" checkpoint file: "<bucket_bytes> <first_bucket_bytes>" in decimal on one
// line. ParseBucketLimits takes what BucketLimitsText writes and nothing else (DATA_LOSS naming
// the file).
std::string BucketLimitsText(const BucketLimits& limits);
absl::StatusOr<BucketLimits> ParseBucketLimits(absl::string_view text);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_FUSION_TUNER_H_
