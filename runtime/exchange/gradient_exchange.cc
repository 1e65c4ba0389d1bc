#include "runtime/exchange/gradient_exchange.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/arena/device_memory.h"
#include "runtime/arena/dtype.h"
#include "runtime/collective/recorded_collective.h"
#include "runtime/exchange/compression/powersgd/powersgd_reducer.h"
#include "runtime/exchange/fusion_tuner.h"
#include "runtime/exchange/shard_reducer.h"
#include "runtime/observe/flight_record.h"

namespace cohort {

namespace {

// `t` in seconds, as SystemClock().MonotonicSeconds() counts them.
double SteadySeconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// Whether the arena's gradients are on a CUDA device (else in host memory); an error for a mix,
// a dtype other than float32, or a CUDA device without its DeviceExchange.
absl::StatusOr<bool> GradientsOnDevice(const TensorArena& arena, const ExchangeOptions& options) {
  std::optional<cohort_device> where;
  for (const ArenaBlock& block : arena.blocks()) {
    if (block.dtype != COHORT_DTYPE_FLOAT32) {
      return absl::UnimplementedError(absl::StrCat(
          "exchanging ", DtypeName(block.dtype), " gradients on ", DeviceName(block.device),
          " is not supported; the exchange handles float32 tensors"));
    }
    if (where && (where->kind != block.device.kind || where->ordinal != block.device.ordinal)) {
      return absl::UnimplementedError(
          absl::StrCat("the model's gradients are on ", DeviceName(*where), " and on ",
                       DeviceName(block.device), "; the exchange handles one device per rank"));
    }
    where = block.device;
  }
  if (!where || where->kind == COHORT_DEVICE_CPU) return false;
  if (options.device == nullptr || options.device->device() != where->ordinal) {
    return absl::FailedPreconditionError(
        absl::StrCat("the model's gradients are on ", DeviceName(*where),
                     ", and exchanging them needs the CUDA exchange opened on that device"));
  }
  return true;
}

// Exchanged batches between step checks for a plan: every batch once the gradient is 1 MiB (the
// check's round trip is then small beside the batch's own exchange), less often below, at most
// every 64th.
uint32_t StepCheckEvery(const std::vector<GradientBucket>& plan) {
  constexpr uint64_t kEveryBatchFromBytes = uint64_t{1} << 20;
  constexpr uint64_t kMostBatchesApart = 64;
  uint64_t bytes = 0;
  for (const GradientBucket& bucket : plan) bytes += bucket.count * sizeof(float);
  if (bytes == 0) return kMostBatchesApart;
  return static_cast<uint32_t>(
      std::clamp<uint64_t>((kEveryBatchFromBytes + bytes - 1) / bytes, 1, kMostBatchesApart));
}

// The reducer of the trial's compression form over `plan`: the CUDA exchange's for gradients on a
// device, else the host's; with `reduce_to_shards`, ZeRO stage 2's (uncompressed), likewise.
absl::StatusOr<std::unique_ptr<BucketReducer>> CreateReducer(
    const CompressionOptions& compression, const std::vector<GradientBucket>& plan,
    TensorArena& arena, DeviceExchange* device, TimedCollective& backend, bool reduce_to_shards) {
  if (reduce_to_shards) {
    if (compression.kind != CompressionOptions::kNone) {
      return absl::UnimplementedError(
          "optimizations.zero_stage 2 reduces uncompressed gradients only (no "
          "gradient_compression; zero_stage 1 keeps any compression)");
    }
    if (device != nullptr) {
      return device->CreateShardReducer(plan, ShardPieces(plan, arena, backend.size()), backend);
    }
    return std::unique_ptr<BucketReducer>(new ShardReducer(plan, arena, backend));
  }
  if (device == nullptr) return CreateBucketReducer(compression, plan, arena, backend);
  if (absl::Status fits = CheckCompressionFits(compression, plan); !fits.ok()) return fits;
  std::vector<std::vector<PowerSgdTensor>> tensors;
  for (const GradientBucket& bucket : plan) tensors.push_back(PowerSgdTensorsOf(bucket, arena));
  return device->CreateReducer(compression, plan, tensors, backend);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GradientExchange>> GradientExchange::Create(
    TensorArena& arena, CollectiveBackend& backend, const ExchangeOptions& options) {
  absl::StatusOr<bool> on_device = GradientsOnDevice(arena, options);
  if (!on_device.ok()) return on_device.status();
  absl::StatusOr<std::vector<GradientBucket>> plan =
      PlanBuckets(arena, options.bucket_bytes, options.first_bucket_bytes);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<ReadyTracker> tracker = ReadyTracker::Create(*plan, arena);
  if (!tracker.ok()) return tracker.status();
  auto timed = std::make_unique<TimedCollective>(backend);
  DeviceExchange* device = *on_device ? options.device : nullptr;
  absl::StatusOr<std::unique_ptr<BucketReducer>> reducer =
      CreateReducer(options.compression, *plan, arena, device, *timed, options.reduce_to_shards);
  if (!reducer.ok()) return reducer.status();
  const uint32_t step_check_every =
      options.step_check_every != 0 ? options.step_check_every : StepCheckEvery(*plan);
  return std::unique_ptr<GradientExchange>(
      new GradientExchange(arena, std::move(timed), device, options, step_check_every,
                           *std::move(plan), *std::move(tracker), *std::move(reducer)));
}

GradientExchange::GradientExchange(TensorArena& arena, std::unique_ptr<TimedCollective> backend,
                                   DeviceExchange* device, const ExchangeOptions& options,
                                   uint32_t step_check_every, std::vector<GradientBucket> plan,
                                   ReadyTracker tracker, std::unique_ptr<BucketReducer> reducer)
    : arena_(arena),
      timed_backend_(std::move(backend)),
      backend_(*timed_backend_),
      device_(device),
      find_nonfinite_(options.find_nonfinite && device == nullptr),
      step_check_every_(step_check_every),
      options_(options),
      limits_{options.bucket_bytes, options.first_bucket_bytes},
      plan_(std::move(plan)),
      tracker_(std::move(tracker)),
      reducer_(std::move(reducer)),
      thread_([this] { CommunicationLoop(); }) {}

GradientExchange::~GradientExchange() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutting_down_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void GradientExchange::Begin(double scale, uint64_t step, uint64_t batch) {
  // A batch begun and never finished is finished first, so no bucket of it is still in flight.
  if (active_) (void)Finish();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.clear();
    // First, while the plugin computes. Every rank counts its batches alike, so every rank runs
    // the check on the same ones.
    if (batches_begun_ % step_check_every_ == 0) queue_.push_back(kStepCheck);
    scale_ = scale;
    step_ = step;
    batch_ = batch;
    error_ = absl::OkStatus();
  }
  ++batches_begun_;
  changed_.notify_all();
  // Reports count from here on (none came while inactive: the hook ignores them).
  std::lock_guard<std::mutex> ready(ready_mutex_);
  tracker_.Reset();
  hook_error_ = absl::OkStatus();
  active_ = true;
}

void GradientExchange::OnGradientsReady(uint32_t tensor, uint64_t offset, uint64_t count) {
  std::lock_guard<std::mutex> ready(ready_mutex_);
  if (!active_ || !hook_error_.ok()) return;
  absl::StatusOr<std::vector<size_t>> launch = tracker_.MarkReady(tensor, offset, count);
  if (!launch.ok()) {
    hook_error_ = launch.status();
    return;
  }
  Launch(*launch);
}

void GradientExchange::NoteReady(const std::vector<size_t>& buckets) {
  // For the flight record: when each bucket was ready to go (its collective's enqueue time).
  if (handed_ns_.size() != plan_.size()) handed_ns_.assign(plan_.size(), 0);
  const int64_t handed = FlightClockNs();
  for (size_t bucket : buckets) handed_ns_[bucket] = handed;
  if (!bucket_observer_) return;
  const double now = SteadySeconds(std::chrono::steady_clock::now());
  for (size_t bucket : buckets) ready_at_[bucket] = now;
}

void GradientExchange::Launch(const std::vector<size_t>& buckets) {
  NoteReady(buckets);
  for (size_t bucket : buckets) reducer_->BucketReady(bucket);
  size_t handed = buckets.size();
  // The plan's last bucket is left to the caller of Finish: by the time backward completes it
  // there is (almost) nothing left to overlap it with, and two thread hand-offs cost more.
  if (handed > 0 && buckets.back() == plan_.size() - 1) {
    last_bucket_deferred_ = true;
    --handed;
  }
  if (handed == 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.insert(queue_.end(), buckets.begin(),
                  buckets.begin() + static_cast<std::ptrdiff_t>(handed));
  }
  changed_.notify_all();
}

absl::Status GradientExchange::Finish() {
  if (!active_) return absl::OkStatus();
  std::vector<size_t> rest;
  std::vector<size_t> completed;
  absl::Status hook_error;
  {
    // Inactive from here: a report arriving now (a contract breach) is ignored, not half-counted.
    std::lock_guard<std::mutex> ready(ready_mutex_);
    rest = tracker_.MarkAllReady();
    if (options_.follow_ready_order && !ready_order_) completed = tracker_.completion_order();
    NoteReady(rest);
    for (size_t bucket : rest) reducer_->BucketReady(bucket);
    if (last_bucket_deferred_) rest.push_back(plan_.size() - 1);
    last_bucket_deferred_ = false;
    hook_error = hook_error_;
    active_ = false;
  }
  absl::Status status;
  {
    // The caller has nothing left to do but wait, so it exchanges what is left itself (saving two
    // thread hand-offs per batch), once the communication thread is done with its bucket. Buckets
    // still go out in plan order, and the backend is used by one thread at a time.
    std::unique_lock<std::mutex> lock(mutex_);
    caller_draining_ = true;
    changed_.wait(lock, [&] { return !communication_busy_; });
    queue_.insert(queue_.end(), rest.begin(), rest.end());
    while (!queue_.empty()) {
      const size_t bucket = queue_.front();
      queue_.pop_front();
      ExchangeLocked(lock, bucket);
    }
    caller_draining_ = false;
    status = error_;
  }
  // Every rank whose collectives succeeded agrees on the order, even one whose plugin misreported
  // a range (its own error comes after), so no rank is left waiting in the agreement.
  if (status.ok() && !completed.empty()) status = LearnReadyOrder(completed);
  if (!hook_error.ok()) return hook_error;
  return status;
}

absl::Status GradientExchange::LearnReadyOrder(const std::vector<size_t>& completed) {
  CollectiveTagScope tag(
      {.purpose = CollectivePurpose::kReadyOrder, .batch = static_cast<int64_t>(batch_)});
  std::vector<uint32_t> all(completed.size() * backend_.size());
  std::vector<uint32_t> mine(completed.begin(), completed.end());
  if (absl::Status gathered =
          AllgatherHostBytes(mine.data(), mine.size() * sizeof(uint32_t), all.data());
      !gathered.ok()) {
    return absl::Status(gathered.code(), absl::StrCat("agreeing on the gradients' ready order: ",
                                                      gathered.message()));
  }
  all.resize(completed.size());  // rank 0's
  return AdoptReadyOrder(all);
}

absl::Status GradientExchange::AdoptReadyOrder(const std::vector<uint32_t>& order) {
  if (absl::Status status = Replan(limits_, std::vector<size_t>(order.begin(), order.end()),
                                   "along the order backward finished the gradients in");
      !status.ok()) {
    return status;
  }
  ready_order_ = order;
  return absl::OkStatus();
}

absl::Status GradientExchange::SetBucketLimits(const BucketLimits& limits) {
  if (limits.bucket_bytes == 0 || limits.first_bucket_bytes == 0) {
    return absl::InvalidArgumentError("gradient exchange: a bucket limit of 0 bytes");
  }
  std::vector<size_t> order;
  if (ready_order_) order.assign(ready_order_->begin(), ready_order_->end());
  if (absl::Status status =
          Replan(limits, order,
                 absl::StrCat("to buckets of at most ", BucketBytesText(limits.bucket_bytes)));
      !status.ok()) {
    return status;
  }
  limits_ = limits;
  return absl::OkStatus();
}

absl::Status GradientExchange::Replan(const BucketLimits& limits, const std::vector<size_t>& order,
                                      const std::string& why) {
  absl::StatusOr<std::vector<GradientBucket>> plan =
      PlanBuckets(arena_, limits.bucket_bytes, limits.first_bucket_bytes, order);
  if (!plan.ok()) return plan.status();
  if (*plan == plan_) return absl::OkStatus();
  absl::StatusOr<ReadyTracker> tracker = ReadyTracker::Create(*plan, arena_);
  if (!tracker.ok()) return tracker.status();
  absl::StatusOr<std::unique_ptr<BucketReducer>> reducer = CreateReducer(
      options_.compression, *plan, arena_, device_, *timed_backend_, options_.reduce_to_shards);
  if (!reducer.ok()) return reducer.status();
  {
    std::lock_guard<std::mutex> ready(ready_mutex_);
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !communication_busy_ && queue_.empty(); });
    plan_ = *std::move(plan);
    tracker_ = *std::move(tracker);
    reducer_ = *std::move(reducer);
    if (bucket_observer_) ready_at_.assign(plan_.size(), 0);
  }
  if (options_.plan_changed) options_.plan_changed(plan_, why);
  return absl::OkStatus();
}

absl::Status GradientExchange::AllgatherHostBytes(const void* in, uint64_t bytes, void* out) {
  return device_ != nullptr ? device_->AllgatherHostBytes(backend_, in, bytes, out)
                            : backend_.Allgather(in, bytes, out);
}

void GradientExchange::ExchangeLocked(std::unique_lock<std::mutex>& lock, size_t bucket) {
  const double scale = scale_;
  const uint64_t step = step_;
  const uint64_t batch = batch_;
  const uint64_t exchanged = buckets_exchanged_;
  const bool failed = !error_.ok();
  lock.unlock();
  // After a failure the group is unusable; the remaining buckets are skipped.
  absl::Status status;
  if (!failed) {
    const bool check = bucket == kStepCheck;
    CollectiveTagScope tag(
        {.purpose = check ? CollectivePurpose::kStepCheck : CollectivePurpose::kGradientBucket,
         .bucket = check ? -1 : static_cast<int32_t>(bucket),
         .batch = static_cast<int64_t>(batch)},
        check ? 0 : handed_ns_[bucket]);
    status = check ? CheckRanksInStep(batch, step, exchanged)
                   : ExchangeBucket(bucket, scale, step, batch);
  }
  if (!status.ok() && bucket != kStepCheck) {
    status = absl::Status(status.code(), absl::StrCat("bucket ", bucket + 1, " of ", plan_.size(),
                                                      ": ", status.message()));
  }
  lock.lock();
  if (!status.ok() && error_.ok()) error_ = status;
  if (bucket != kStepCheck) ++buckets_exchanged_;
}

std::optional<NonFiniteGradient> GradientExchange::TakeLocalNonFinite() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(local_nonfinite_, std::nullopt);
}

absl::Status GradientExchange::CheckRanksInStep(uint64_t batch, uint64_t step,
                                                uint64_t buckets_exchanged) {
  using Position = std::array<uint64_t, 3>;  // batch, step, buckets exchanged
  const Position mine = {batch, step, buckets_exchanged};
  std::vector<Position> all(backend_.size());
  absl::Status gathered = AllgatherHostBytes(mine.data(), sizeof(Position), all.data());
  if (!gathered.ok()) {
    return absl::Status(gathered.code(), absl::StrCat("the step check: ", gathered.message()));
  }
  if (std::all_of(all.begin(), all.end(), [&](const Position& p) { return p == all[0]; })) {
    return absl::OkStatus();
  }
  std::string where;
  for (size_t rank = 0; rank < all.size(); ++rank) {
    absl::StrAppend(&where, rank == 0 ? "" : "; ", "rank ", rank, " at batch ", all[rank][0] + 1,
                    " (optimizer step ", all[rank][1] + 1, ", ", all[rank][2],
                    " buckets exchanged before it)");
  }
  return absl::InternalError(absl::StrCat(
      "the ranks are out of step at the gradient exchange, so their gradients cannot be summed: ",
      where,
      ". A rank skipped or repeated a batch, or the plugin drove the host differently on "
      "one rank"));
}

void GradientExchange::CommunicationLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return shutting_down_ || (!queue_.empty() && !caller_draining_); });
    if (shutting_down_) return;
    const size_t bucket = queue_.front();
    queue_.pop_front();
    communication_busy_ = true;
    ExchangeLocked(lock, bucket);
    communication_busy_ = false;
    changed_.notify_all();
  }
}

GradientExchange::Times GradientExchange::TakeTimes() {
  Times times;
  const double buckets = static_cast<double>(bucket_nanoseconds_.exchange(0)) * 1e-9;
  times.exchange_seconds = timed_backend_->TakeSeconds();
  // The step check's gather is all collective; the buckets' time beyond theirs is the codec's.
  times.codec_seconds = std::max(0.0, buckets - times.exchange_seconds);
  times.bytes = timed_backend_->bytes();
  return times;
}

absl::Status GradientExchange::ExchangeBucket(size_t index, double scale, uint64_t step,
                                              uint64_t batch) {
  BucketTimeline timeline;
  if (bucket_observer_) timed_backend_->set_recorder(&timeline.collectives);
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = ReduceBucket(index, scale, step);
  const auto end = std::chrono::steady_clock::now();
  bucket_nanoseconds_ += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
  if (bucket_observer_) {
    timed_backend_->set_recorder(nullptr);
    timeline.bucket = index;
    timeline.batch = batch;
    timeline.ready = ready_at_[index];
    timeline.begin = SteadySeconds(start);
    timeline.end = SteadySeconds(end);
    bucket_observer_(timeline);
  }
  return status;
}

absl::Status GradientExchange::ReduceBucket(size_t index, double scale, uint64_t step) {
  const GradientBucket& bucket = plan_[index];
  const ArenaBlock& block = arena_.blocks()[bucket.block];
  float* grad = static_cast<float*>(block.grad) + bucket.offset;  // host or device memory
  if (find_nonfinite_) {
    std::optional<NonFiniteGradient> found =
        FindNonFiniteGradient(arena_, bucket.block, bucket.offset, bucket.count);
    std::lock_guard<std::mutex> lock(mutex_);
    if (found && !local_nonfinite_) local_nonfinite_ = found;
  }
  return reducer_->Reduce(index, grad, bucket.count, static_cast<float>(scale), step);
}

}  // namespace cohort
