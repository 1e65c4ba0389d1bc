// TrialRunner: the trial loop of one worker. It walks a trial through its schedule:
//
//   (validate first when perform_initial_validation)
//   repeat until searcher.max_length batches:
//     train one batch of the sampler's records (the plugin adds gradients into the arena)
//     every aggregation_frequency batches: average the summed gradients, step the optimizer
//       (built-in, or the plugin's own optimizer_step), zero the gradients; then, when due,
//       report training metrics, validate, checkpoint (also after a validation, as
//       checkpoint_policy says); stop here if asked
//
// All periods are counted in batches; the end of training is always a report, a validation and a
// checkpoint. Checkpoints are taken only right after an optimizer step, so a restored trial
// continues bit for bit.
//
//   TrialRunnerOptions options{...};
//   auto runner = TrialRunner::Create(options);
//   if (resuming) (*runner)->Restore(checkpoint_id);
//   absl::StatusOr<TrialExit> exit = (*runner)->Run();
//
// Thread-safety: not thread-safe; one thread drives the model.
#ifndef COHORT_RUNTIME_TRIAL_TRIAL_RUNNER_H_
#define COHORT_RUNTIME_TRIAL_TRIAL_RUNNER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/arena/device_gradient_ops.h"
#include "runtime/arena/nonfinite_gradient.h"
#include "runtime/arena/staged_host_copies.h"
#include "runtime/base/clock.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/checkpoint/checkpoint_writer.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/config/experiment_config.h"
#include "runtime/config/trial_schedule.h"
#include "runtime/exchange/fusion_tuner.h"
#include "runtime/exchange/gradient_exchange.h"
#include "runtime/observe/trace_writer.h"
#include "runtime/optim/optimizer.h"
#include "runtime/plugin/loaded_model.h"
#include "runtime/plugin/metric_accumulator.h"
#include "runtime/trial/phase_timer.h"
#include "runtime/trial/rank_pace.h"
#include "runtime/trial/record_sampler.h"
#include "runtime/trial/shard_gather.h"
#include "runtime/trial/shard_parameters.h"
#include "runtime/trial/throughput_meter.h"
#include "runtime/trial/trial_events.h"
#include "runtime/trial/trial_phase.h"
#include "runtime/trial/trial_state.h"

namespace cohort {

// Every pointer must outlive the runner.
struct TrialRunnerOptions {
  const ExperimentConfig* config = nullptr;
  uint64_t trial_id = 1;
  uint64_t trial_seed = 0;  // drives the sampler; the plugin sees it in its trial context
  LoadedModel* model = nullptr;
  Optimizer* optimizer = nullptr;  // nullptr: the plugin steps with its own optimizer_step
  // For gradients on a GPU: averaging and the non-finite guard run there (DeviceExchange's
  // gradient_ops). nullptr: device blocks are worked on in host copies.
  DeviceGradientOps* device_gradients = nullptr;
  CheckpointStorage* storage = nullptr;
  TrialEvents* events = nullptr;
  // With more than one slot: the group of this trial's ranks, and the exchange that sums their
  // gradients. On one slot the group is nullptr, and so is the exchange unless one was asked for
  // (a group of one rank; see one_slot_exchange.h). Only rank 0 reports and writes checkpoints; a
  // stop request is agreed on at the next training report.
  CollectiveBackend* collective = nullptr;
  GradientExchange* exchange = nullptr;
  // GPU slots with several ranks: the group that moves device memory (NCCL, on `device`'s
  // communication stream) and that device exchange: ZeRO's stepped shards travel over it in place
  // on the device. nullptr: through host copies over `collective`.
  CollectiveBackend* device_collective = nullptr;
  DeviceExchange* device = nullptr;
  // ZeRO with checkpoint_storage.async: a group of the same ranks that nothing else uses, over
  // which a checkpoint's optimizer shards reach rank 0 off the training thread (shard_gather.h).
  // nullptr: they travel over `collective`, on the training thread.
  CollectiveBackend* checkpoint_collective = nullptr;
  Clock* clock = &SystemClock();
  double progress_interval_seconds = 0.25;
  // Where the runner is, for a watchdog on another thread; nullptr: not published.
  PhaseBoard* phases = nullptr;
  // With profiling on: where this rank's timeline goes (its phases, and the exchange's buckets).
  TraceWriter* trace = nullptr;
  // Validate once before training when the checkpoint restored is at the trial's end: the
  // orchestrator has no validation there (its reports were lost) and asks for one.
  bool validate_at_resume = false;
};

class TrialRunner {
 public:
  // Reads the dataset sizes from the plugin and builds the schedule and sampler.
  static absl::StatusOr<std::unique_ptr<TrialRunner>> Create(TrialRunnerOptions options);

  // Continues from checkpoint `id`: restores everything, after checking the checkpoint belongs to
  // this trial and was written with the same training fingerprint.
  absl::Status Restore(const std::string& checkpoint_id);

  // Restore, passing over damaged checkpoints: when checkpoint `id` is damaged (DATA_LOSS: a file
  // is missing, of the wrong size or fails its checksum), the newest whole checkpoint of this trial
  // from no later than it is restored instead; when none is left, the trial starts from the
  // beginning. Every rank reads the same storage, so every rank makes the same choice. Returns a
  // warning line for each checkpoint passed over and the one taken instead (empty when `id` was
  // whole); any other failure is Restore's. When it passed over `id`, rank 0 reports where it
  // resumed (a CheckpointReport marked restored), so the trial's record goes back there too.
  absl::StatusOr<std::vector<std::string>> RestoreNewestWhole(const std::string& checkpoint_id);

  // Trains to the end (kCompleted) or until events->StopRequested() (kStopped, after a
  // checkpoint). An error leaves the trial where it failed; its last checkpoint stays usable.
  // With checkpoint_storage.async, rank 0 writes each checkpoint on a thread of its own while
  // training goes on, and reports it (events->OnCheckpoint) at the first step boundary after it is
  // whole; whatever Run returns, a write it started has ended and been reported before.
  absl::StatusOr<TrialExit> Run();

  const TrialSchedule& schedule() const { return schedule_; }
  uint64_t batches_trained() const { return progress_.batches_trained; }

 private:
  explicit TrialRunner(TrialRunnerOptions options) : options_(options) {}

  bool multi_rank() const { return options_.collective != nullptr; }
  // The trial's slots: its ranks.
  uint32_t Slots() const { return multi_rank() ? options_.collective->size() : 1; }
  // Publishes `phase` of batch `batch` (from 1) to options_.phases.
  void Enter(TrialPhase phase, uint64_t batch);
  // A failed collective of `what`, said with the batch it belongs to; a timeout also says that a
  // rank stopped taking part.
  absl::Status InCollective(absl::Status status, absl::string_view what, uint64_t batch) const;
  bool reporter() const { return options_.model->context().rank == 0; }
  // Every rank's compression state (error feedback differs from rank to rank), gathered on every
  // rank in rank order, for rank 0 to write; empty when the exchange keeps none.
  absl::StatusOr<std::string> GatherCompressionState();
  // ZeRO: how a sharded optimizer's pieces reach rank 0 for a checkpoint (a gather onto rank 0
  // over the trial's group).
  OptimizerState::PieceMover OptimizerPieceMover();
  // Gives the exchange the bucket order of a checkpoint's "ready_order" file, then this rank's
  // part of its "compression" file.
  absl::Status RestoreExchangeState(const std::map<std::string, std::string>& files);
  // Restore of a checkpoint already read and verified.
  absl::Status RestoreFrom(const cohort::Checkpoint& checkpoint);
  // On rank 0: tells the events that this attempt resumed from `checkpoint_id` (empty: from the
  // beginning) at the current progress, in place of a newer damaged checkpoint.
  void ReportRestored(const std::string& checkpoint_id);
  absl::Status TrainBatch();
  // optimizations.tensor_fusion_threshold auto (fusion_tuner.h), around each exchanged batch:
  // before Begin, on the attempt's first, says what it does (rank 0) and cuts the buckets by the
  // tuner's candidate, then starts the batch's clock while tuning; after a successful Finish,
  // records the batch's time, cuts the buckets for the next candidate and, once every candidate is
  // measured, has the ranks agree on the fastest and says it with the figures (every rank).
  // No-ops without a tuner, and nothing but a test once it has chosen.
  absl::Status BeforeExchangedBatch();
  absl::Status AfterExchangedBatch();
  // As the attempt starts: that `auto` has nothing to tune without an exchange (1 slot).
  void NoticeNothingToTune();
  // The ranks' average of each candidate's median (every rank's medians gathered in rank order).
  absl::StatusOr<std::vector<double>> AgreedFusionSeconds();
  // What the first notice adds when the exchanged batches left cannot measure `candidates`
  // bucket sizes: how many are left and how many it takes ("" when enough).
  std::string TooFewToTune(size_t candidates) const;
  // One batch's training metrics into training_metrics_ (and its loss into the progress).
  absl::Status AddTrainingMetrics(const BatchMetrics& metrics);
  // Reads the training metrics still on the device (one wait) and adds them in batch order.
  absl::Status SettleTrainingMetrics();
  // Whether any rank was asked to stop (agreed at training reports when there are several).
  absl::StatusOr<bool> StopAgreed(bool at_report);
  // Rank 0, after the attempt's first batch: a notice naming the hyperparameters neither the
  // plugin nor Cohort read (unread_hyperparameters.h).
  void WarnOfUnreadHyperparameters();
  absl::Status StepOptimizer();
  // ZeRO (a sharded optimizer): every rank's stepped range of the parameters to every rank.
  absl::Status ShareShardParameters();
  // optimizations.nonfinite_gradients before a step: true to step; false when the step's
  // gradients are to be dropped ("skip"; a warning at the 1st, 10th, 100th... skip, for whoever
  // follows the trial); an error naming the batch and tensor for "fail".
  absl::StatusOr<bool> GradientsUsable();
  // A report of `metrics` after the batches trained so far.
  MetricsReport Report(ReportKind kind, const std::vector<ReducedMetric>& metrics);
  absl::Status ReportTraining();
  absl::Status Validate();
  // Before the first batch of an attempt: one validation batch, to learn that the plugin reports
  // searcher.metric before training for it (a permanent failure when it does not, or has no
  // validation records at all).
  absl::Status CheckSearcherMetric();
  // After evaluate_batch calls: zeroes the gradients. evaluate_batch must leave them alone; one
  // that wrote into them (a backward pass on validation data) would have that join the next step
  // (`cohort plugin check` names such a plugin).
  absl::Status ClearGradientsAfterEvaluation();
  // OK when `names` (a validation's metrics) hold searcher.metric; else a permanent failure
  // naming what they hold.
  absl::Status RequireSearcherMetric(const std::vector<std::string>& names) const;
  // Run's loop; Run then waits for the checkpoint being written.
  absl::StatusOr<TrialExit> Train();
  // Captures the state (rank 0) and has writer_ write it; waits for the write before it first,
  // and for this one too unless checkpoint_storage.async. A sharded optimizer's state is
  // gathered onto rank 0 on the training thread, or by shard_gather_ in the background.
  absl::Status Checkpoint();
  // The write in flight once it has ended (`wait`: waiting for it): its slice in the timeline, its
  // seconds in the next training report, and its report, or its error.
  absl::Status CollectCheckpointWrite(bool wait);
  // Once per trial: that page-locked memory for the capture could not be had (the copies go
  // straight to pageable memory instead).
  void NoticePinningError();
  // With checkpoint_storage.async and tensors in device memory: starts taking the page-locked
  // memory the checkpoints' copies will go through (rank 0's capture, another rank's shard of a
  // ZeRO optimizer), so that the first checkpoint does not stall for it.
  void ReserveStagingMemory();
  void MaybeReportProgress(bool force);

  TrialRunnerOptions options_;
  std::string fingerprint_;
  TrialSchedule schedule_;
  std::optional<RecordSampler> sampler_;
  uint64_t validation_records_ = 0;
  TrialProgress progress_;

  MetricAccumulator training_metrics_;  // since the last training report
  // Batches since then whose metrics are (or follow one that is) still on the device, in order;
  // at most kMaxUnsettledBatches.
  static constexpr size_t kMaxUnsettledBatches = 1024;
  std::vector<BatchMetrics> unsettled_training_;
  uint64_t batches_since_step_ = 0;
  uint64_t skipped_steps_ = 0;  // dropped for non-finite gradients, this attempt
  // ZeRO on a GPU: the device group the stepped shards of a device block travel over, or without
  // one the host copy they travel through.
  DeviceShardGroup device_shards_;
  std::vector<char> shard_staging_;
  uint64_t shard_broadcasts_ = 0;  // steps whose shards were broadcast since the last report
  // With tensor_fusion_threshold auto and an exchange; the exchanged batch's start on the clock.
  std::optional<FusionTuner> fusion_tuner_;
  double exchanged_batch_began_ = 0;
  bool fusion_started_ = false;
  uint64_t last_checkpoint_batches_ = UINT64_MAX;
  uint64_t last_validation_batches_ = UINT64_MAX;
  bool checkpoint_after_validation_ = false;
  double latest_loss_ = 0;
  double last_progress_time_ = 0;
  ThroughputMeter throughput_;
  // Since the previous training report: the time per phase.
  PhaseTimer phase_timer_;
  uint64_t phase_batch_ = 0;  // the batch of the phase entered last
  // Several ranks: every rank's pace at each training report (straggler scores), and the batches
  // trained when the previous report's interval ended.
  RankPaceTracker paces_;
  uint64_t paced_batches_ = 0;
  // Rank 0's, with checkpoint_storage.async: the capture's copies out of device memory, into
  // page-locked memory at the step boundary, then into the files on the writer's thread. Before
  // writer_, whose destructor may still be landing them.
  StagedHostCopies staged_copies_;
  bool told_of_pinning_error_ = false;
  bool told_uneven_validation_ = false;  // a validation batch reported other metrics than the first
  // ZeRO with a checkpoint group: every rank's part in gathering the optimizer's shards. Before
  // writer_, whose thread may still be assembling the shards with it as writer_ is destroyed.
  std::unique_ptr<ShardGather> shard_gather_;
  // Rank 0's; the seconds its writes took since the previous training report; and the last
  // write's files, whose memory the next capture reuses (one copy of the state in host memory
  // between checkpoints).
  std::unique_ptr<CheckpointWriter> writer_;
  double checkpoint_write_seconds_ = 0;
  std::map<std::string, std::string> spare_files_;
};

// The seed of trial `trial_id` of an experiment seeded with `experiment_seed`.
uint64_t TrialSeed(uint64_t experiment_seed, uint64_t trial_id);

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_TRIAL_RUNNER_H_
