// GradientExchange: sums every rank's gradients in the arena, in place, bucket by bucket, on a
// communication thread, while the plugin is still computing the rest of its backward pass.
//
// One exchanged batch (the last of an aggregation window):
//
//   exchange->Begin(1.0 / (size * k), step);    // train thread, before train_batch
//   ... plugin's gradients_ready -> exchange->OnGradientsReady(tensor, offset, count)
//   absl::Status done = exchange->Finish();     // after train_batch: the rest, then wait
//
// Each bucket is a slice of an arena block (no copy in or out): the BucketReducer for the trial's
// gradient compression (float32, fp16, bf16, top-k or PowerSGD; see bucket_reducer.h) scales it
// by `scale` (averaging divides before the sum, safe for 16-bit codecs), sums it over the ranks and
// leaves the result in the same slice. Gradients on a CUDA device are reduced by the CUDA
// exchange's reducers on its communication stream (device_exchange.h), in the same order. Buckets
// launch in the plan's fixed order on every rank (see ReadyTracker), so every rank issues the same
// collectives in the same order.
//
// Buckets first follow reverse registration order. After the first exchanged batch, the ranks
// take the order in which rank 0's plugin reported that batch's gradients ready and cut the
// buckets again along it (PlanBuckets), as DDP rebuilds its buckets after its first iteration: a
// model whose backward finishes its tensors in another order than the reverse of registration
// then overlaps its exchange with backward too. When the new cut differs, the compression state
// starts afresh with it. The order is part of a checkpoint (ready_order, AdoptReadyOrder), so a
// resumed trial exchanges exactly as an uninterrupted one.
//
// Before any bucket, an exchanged batch starts with a step check on the communication thread
// (while the plugin computes): the ranks gather each other's batch, optimizer step and count of
// buckets exchanged so far (24 bytes each) and compare them. Ranks that are out of step (one
// skipped or repeated a batch, or the plugin drove the host differently on one rank) would
// otherwise sum gradients of different batches without a word; instead every rank's Finish
// fails with an error naming each rank's position, and no bucket of that batch is exchanged.
// The check runs on the first exchanged batch and then every `step_check_every` (by default:
// every batch for a gradient of 1 MiB or more, where one more tiny collective is noise; for a
// smaller gradient every ceil(1 MiB / gradient bytes) batches, at most 64, so a model whose whole
// step takes a millisecond does not pay a round trip per step).
//
// The plan's last bucket is always exchanged by the caller of Finish, even when the plugin reports
// it ready earlier: backward is (nearly) over by then, so handing it to the communication thread
// would only add two thread hand-offs to the step (on a 2-core machine, the exposed exchange of a
// 7.45 MB MLP gradient fell from about 1.5x to 1.1x one raw allreduce).
//
// Thread-safety: Begin, OnGradientsReady and Finish are called from the one thread that drives
// the model. The backend is used by one thread at a time: the exchange's own thread while the
// plugin computes, then the caller of Finish for whatever is left.
#ifndef COHORT_RUNTIME_EXCHANGE_GRADIENT_EXCHANGE_H_
#define COHORT_RUNTIME_EXCHANGE_GRADIENT_EXCHANGE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/arena/nonfinite_gradient.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/collective/timed_collective.h"
#include "runtime/config/compression_options.h"
#include "runtime/exchange/bucket_plan.h"
#include "runtime/exchange/bucket_reducer.h"
#include "runtime/exchange/device_exchange.h"
#include "runtime/exchange/ready_tracker.h"

namespace cohort {

struct ExchangeOptions {
  uint64_t bucket_bytes = 64ull << 20;       // optimizations.tensor_fusion_threshold (MB)
  uint64_t first_bucket_bytes = 1ull << 20;  // a smaller first bucket starts the exchange early
  CompressionOptions compression;            // optimizations.gradient_compression
  // Required when the gradients live on a CUDA device (that device's exchange); unused otherwise.
  DeviceExchange* device = nullptr;
  // Look for NaN and infinity in each host bucket before it is summed (this rank's own
  // gradients), for TakeLocalNonFinite; off, nothing is read.
  bool find_nonfinite = false;
  // Exchanged batches from one step check to the next; 0 chooses by the gradient's size (above).
  uint32_t step_check_every = 0;
  // Cut the buckets again along the ready order of the first exchanged batch (above); off, they
  // keep reverse registration order.
  bool follow_ready_order = true;
  // ZeRO stage 2: each bucket's pieces are summed onto the rank whose shard (arena_shard.h, one
  // per rank of the backend) holds them, not on every rank (shard_reducer.h on the host,
  // DeviceExchange::CreateShardReducer on a device); the other gradients are left unspecified.
  // Without compression only.
  bool reduce_to_shards = false;
  // Told the new plan whenever the buckets are cut again (on the thread calling Finish,
  // AdoptReadyOrder or SetBucketLimits), and why ("along the order backward finished the
  // gradients in", "to buckets of at most 1 MiB"); empty: nobody.
  std::function<void(const std::vector<GradientBucket>&, const std::string& why)> plan_changed;
};

class GradientExchange {
 public:
  // Plans the buckets and starts the communication thread. The gradients are float32, either all
  // in host memory or all on one CUDA device whose DeviceExchange is options.device
  // (UNIMPLEMENTED or FAILED_PRECONDITION otherwise, naming what is wrong). The arena, the backend
  // and options.device must outlive the exchange.
  static absl::StatusOr<std::unique_ptr<GradientExchange>> Create(TensorArena& arena,
                                                                  CollectiveBackend& backend,
                                                                  const ExchangeOptions& options);
  ~GradientExchange();
  GradientExchange(const GradientExchange&) = delete;
  GradientExchange& operator=(const GradientExchange&) = delete;

  // Starts an exchanged batch: gradients will be multiplied by `scale` before the sum. `step` is
  // the number of optimizer steps the trial has taken before this one (PowerSGD exchanges
  // uncompressed while step < start_iter); `batch` the number of batches trained before this one
  // (both are compared across ranks by the step check). A batch begun and not finished is
  // finished first. After a failed exchange the group and the gradients of the failed buckets
  // are unspecified; the trial ends.
  void Begin(double scale, uint64_t step, uint64_t batch = 0);
  // The plugin's gradients_ready hook. Outside Begin/Finish (a batch whose gradients are only
  // accumulated locally) it does nothing. A bad range is remembered and returned by Finish. Safe
  // to call from any thread between Begin and Finish (the plugin's helper threads, autograd's),
  // and from several at once: calls are serialized; each must return before Finish is called.
  void OnGradientsReady(uint32_t tensor, uint64_t offset, uint64_t count);
  // Launches every bucket not launched yet and waits until all are summed; the first error.
  absl::Status Finish();

  // With options.find_nonfinite: the first non-finite element this rank contributed since the
  // last call (read before the sum), or nullopt. Call after Finish.
  std::optional<NonFiniteGradient> TakeLocalNonFinite();

  // Forgets the compression state kept between steps (error-feedback residuals, PowerSGD's
  // warm start), e.g. after a step whose gradients were dropped. Call outside Begin/Finish, on
  // every rank alike.
  absl::Status ResetCompression() { return reducer_->Reset(); }

  // This rank's compression state, for a checkpoint, and back (BucketReducer::SaveState and
  // RestoreState; empty for the forms that keep none). Call outside Begin/Finish.
  absl::StatusOr<std::string> SaveCompressionState() const { return reducer_->SaveState(); }
  absl::Status RestoreCompressionState(absl::string_view state) {
    return reducer_->RestoreState(state);
  }

  // The ready order the buckets follow (tensor indices, first completed first), once learned from
  // the first exchanged batch or adopted; nullopt before. Every rank holds the same one.
  const std::optional<std::vector<uint32_t>>& ready_order() const { return ready_order_; }
  // Cuts the buckets along `order` (a checkpoint's ready_order) now, instead of learning an order
  // from the next exchanged batch. Call outside Begin/Finish, on every rank alike, before
  // RestoreCompressionState: when the cut changes, the compression state starts afresh.
  // INVALID_ARGUMENT, changing nothing, unless `order` names every tensor once.
  absl::Status AdoptReadyOrder(const std::vector<uint32_t>& order);

  // The limits the buckets are cut by (ExchangeOptions' at first).
  BucketLimits bucket_limits() const { return limits_; }
  // Cuts the buckets again by `limits`, along the ready order when there is one (else reverse
  // registration order), as AdoptReadyOrder does: call outside Begin/Finish, on every rank alike;
  // when the cut changes, the compression state starts afresh. INVALID_ARGUMENT, changing
  // nothing, for a zero limit. (optimizations.tensor_fusion_threshold auto; fusion_tuner.h.)
  absl::Status SetBucketLimits(const BucketLimits& limits);

  // Where the exchange's time went since the last call (then from zero): seconds inside the
  // collectives (`exchange`) and the rest of the buckets' work (`codec`: scaling, encoding,
  // selecting, decoding), both on whichever thread exchanged, so they overlap the plugin's
  // compute; and the bytes this rank handed to the collectives over the exchange's life.
  struct Times {
    double exchange_seconds = 0;
    double codec_seconds = 0;
    uint64_t bytes = 0;
  };
  Times TakeTimes();

  // One bucket's exchange, for a timeline. Times are steady-clock seconds, as
  // SystemClock().MonotonicSeconds().
  struct BucketTimeline {
    size_t bucket = 0;
    uint64_t batch = 0;  // batches trained before the one it belongs to
    double ready = 0;    // its gradients were all ready (on the training thread)
    double begin = 0;    // its exchange, on whichever thread exchanged it
    double end = 0;
    // The collective calls inside [begin, end], in order; the rest of the time is the codec's.
    std::vector<TimedCollective::Call> collectives;
  };
  // Called on the exchanging thread after each bucket. Set before the first Begin; empty: none.
  using BucketObserver = std::function<void(const BucketTimeline&)>;
  void set_bucket_observer(BucketObserver observer) {
    bucket_observer_ = std::move(observer);
    ready_at_.assign(plan_.size(), 0);
  }

  const std::vector<GradientBucket>& plan() const { return plan_; }
  bool active() const { return active_; }

 private:
  // A queue entry that is the batch's step check rather than a bucket.
  static constexpr size_t kStepCheck = static_cast<size_t>(-1);

  GradientExchange(TensorArena& arena, std::unique_ptr<TimedCollective> backend,
                   DeviceExchange* device, const ExchangeOptions& options,
                   uint32_t step_check_every, std::vector<GradientBucket> plan,
                   ReadyTracker tracker, std::unique_ptr<BucketReducer> reducer);
  void Launch(const std::vector<size_t>& buckets);
  // With an observer, notes that `buckets` are ready now (train thread).
  void NoteReady(const std::vector<size_t>& buckets);
  void CommunicationLoop();
  // Exchanges `bucket` (or runs the step check) with the lock released, then records the result
  // (called with the lock).
  void ExchangeLocked(std::unique_lock<std::mutex>& lock, size_t bucket);
  // Cuts the buckets by `limits` along `order` (empty: reverse registration order) and, when the
  // cut changes, swaps in the new plan, tracker and reducer once the communication thread is idle.
  absl::Status Replan(const BucketLimits& limits, const std::vector<size_t>& order,
                      const std::string& why);
  // After the first exchanged batch: agrees on rank 0's ready order and adopts it.
  absl::Status LearnReadyOrder(const std::vector<size_t>& completed);
  // Every rank's `bytes` bytes at `in`, rank after rank, into `out` (host memory).
  absl::Status AllgatherHostBytes(const void* in, uint64_t bytes, void* out);
  // Gathers every rank's (batch, step, buckets exchanged) and fails unless they all agree.
  absl::Status CheckRanksInStep(uint64_t batch, uint64_t step, uint64_t buckets_exchanged);
  // ReduceBucket, timed.
  absl::Status ExchangeBucket(size_t bucket, double scale, uint64_t step, uint64_t batch);
  absl::Status ReduceBucket(size_t bucket, double scale, uint64_t step);

  TensorArena& arena_;
  // The caller's backend, timed; the reducer calls through it too.
  const std::unique_ptr<TimedCollective> timed_backend_;
  CollectiveBackend& backend_;
  DeviceExchange* const device_;  // nullptr for host-memory gradients
  const bool find_nonfinite_;
  const uint32_t step_check_every_;
  // What Create was given: the compression and callback a new cut of the buckets uses.
  const ExchangeOptions options_;
  BucketLimits limits_;         // the buckets' limits now (train thread)
  uint64_t batches_begun_ = 0;  // train thread only
  // Replaced only outside Begin/Finish (AdoptReadyOrder), while the communication thread is idle.
  std::vector<GradientBucket> plan_;
  std::optional<std::vector<uint32_t>> ready_order_;
  // What the gradients_ready hook touches, which may run on any thread: guarded by ready_mutex_,
  // which is never held while taking mutex_ the other way round (Launch takes mutex_ inside it).
  std::mutex ready_mutex_;
  ReadyTracker tracker_;
  bool active_ = false;                // written by the train thread only
  bool last_bucket_deferred_ = false;  // launched, left for Finish
  absl::Status hook_error_;
  std::unique_ptr<BucketReducer> reducer_;  // whichever thread exchanges (never both at once)

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<size_t> queue_;        // buckets launched, not yet taken
  uint64_t buckets_exchanged_ = 0;  // over the exchange's life, on this rank
  double scale_ = 1;
  uint64_t step_ = 0;   // optimizer steps before this batch's
  uint64_t batch_ = 0;  // batches trained before this one
  absl::Status error_;  // first communication error this batch
  std::optional<NonFiniteGradient> local_nonfinite_;
  bool shutting_down_ = false;
  bool communication_busy_ = false;              // the communication thread is exchanging a bucket
  bool caller_draining_ = false;                 // Finish exchanges the rest; the thread keeps off
  std::atomic<uint64_t> bucket_nanoseconds_{0};  // inside ExchangeBucket, since TakeTimes
  BucketObserver bucket_observer_;
  // With an observer: when each bucket's gradients were all ready, written by the train thread
  // before it queues the bucket (or exchanges it itself), read by the thread that exchanges it.
  std::vector<double> ready_at_;
  // The same moments in Unix nanoseconds, always: each bucket collective's enqueue time in the
  // flight record. Resized only while no bucket is in flight (a new plan).
  std::vector<int64_t> handed_ns_;
  std::thread thread_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_GRADIENT_EXCHANGE_H_
