#include "runtime/trial/trial_runner.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/arena/arena_shard.h"
#include "runtime/arena/block_staging.h"
#include "runtime/arena/divide_gradients.h"
#include "runtime/arena/dtype.h"
#include "runtime/arena/nonfinite_gradient.h"
#include "runtime/base/collective_failure.h"
#include "runtime/base/metric_order.h"
#include "runtime/base/permanent_failure.h"
#include "runtime/collective/recorded_collective.h"
#include "runtime/config/optimizer_hyperparameters.h"
#include "runtime/trial/bucket_trace.h"
#include "runtime/trial/rank_sync.h"
#include "runtime/trial/shard_parameters.h"
#include "runtime/trial/splitmix64.h"
#include "runtime/trial/unread_hyperparameters.h"

namespace cohort {

uint64_t TrialSeed(uint64_t experiment_seed, uint64_t trial_id) {
  return MixSeeds(experiment_seed, trial_id);
}

absl::StatusOr<std::unique_ptr<TrialRunner>> TrialRunner::Create(TrialRunnerOptions options) {
  std::unique_ptr<TrialRunner> runner(new TrialRunner(options));
  LoadedModel& model = *options.model;
  absl::StatusOr<uint64_t> training_records = model.DatasetSize(COHORT_SPLIT_TRAINING);
  if (!training_records.ok()) return training_records.status();
  absl::StatusOr<uint64_t> validation_records = model.DatasetSize(COHORT_SPLIT_VALIDATION);
  if (!validation_records.ok()) return validation_records.status();
  if (*training_records == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("plugin ", model.plugin().name(), " has no training records"));
  }
  if (options.optimizer == nullptr && !model.has_optimizer()) {
    return absl::FailedPreconditionError(
        absl::StrCat("plugin ", model.plugin().name(),
                     " has no optimizer_step and no built-in optimizer was "
                     "given"));
  }
  const ExperimentConfig& config = *options.config;
  const uint32_t slots = model.context().size;
  // One slot may still exchange its gradients (through a group of one); it has no peers for
  // the host collectives.
  if (slots > 1 ? options.collective == nullptr || options.exchange == nullptr
                : options.collective != nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "a trial of ", slots, " slots needs ",
        slots > 1 ? "a collective backend and a gradient exchange" : "no collective backend"));
  }
  if (config.global_batch_size < slots) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hyperparameters.global_batch_size: ", config.global_batch_size,
        " is smaller than resources.slots_per_trial (", slots, "); each slot needs a record"));
  }
  absl::StatusOr<TrialSchedule> schedule = MakeTrialSchedule(config, *training_records);
  if (!schedule.ok()) return schedule.status();
  runner->schedule_ = *schedule;
  runner->sampler_.emplace(*training_records, options.trial_seed, config.global_batch_size,
                           model.context().rank, slots);
  runner->validation_records_ = *validation_records;
  runner->fingerprint_ = TrainingFingerprint(config);
  runner->progress_.trial_seed = options.trial_seed;
  if (config.optimizations.auto_tune_tensor_fusion && options.exchange != nullptr) {
    runner->fusion_tuner_.emplace(FusionCandidates(
        model.arena(), uint64_t{config.optimizations.tensor_fusion_threshold} << 20));
  }
  if (runner->reporter()) {
    runner->writer_ = std::make_unique<CheckpointWriter>(options.storage, options.clock);
  }
  if (options.device_collective != nullptr && options.device != nullptr) {
    runner->device_shards_.group = options.device_collective;
    runner->device_shards_.after_compute = [device = options.device] {
      return device->CommunicationAfterCompute();
    };
  }
  if (options.checkpoint_collective != nullptr && options.optimizer != nullptr &&
      !options.optimizer->shard().whole() && config.checkpoint_storage.async) {
    runner->shard_gather_ = std::make_unique<ShardGather>(*options.checkpoint_collective);
  }
  runner->ReserveStagingMemory();
  return runner;
}

void TrialRunner::Enter(TrialPhase phase, uint64_t batch) {
  const double now = options_.clock->MonotonicSeconds();
  if (options_.trace != nullptr && TrialPhaseTimingKey(phase_timer_.current())[0] != '\0') {
    options_.trace->Complete(TraceWriter::kTrainingThread, TrialPhaseName(phase_timer_.current()),
                             phase_timer_.since(), now, phase_batch_);
  }
  phase_batch_ = batch;
  phase_timer_.Enter(phase, now);
  if (options_.phases != nullptr) options_.phases->Enter(phase, batch, now);
}

absl::Status TrialRunner::InCollective(absl::Status status, absl::string_view what,
                                       uint64_t batch) const {
  if (status.ok()) return status;
  std::string message = absl::StrCat("batch ", batch, ", ", what, ": ", status.message());
  if (absl::IsDeadlineExceeded(status)) {
    absl::StrAppend(&message, " (optimizations.collective_timeout is ",
                    options_.config->optimizations.collective_timeout,
                    " s): a rank stopped taking part; the trial log says where each rank was");
  }
  return CollectiveFailure(status, message);
}

absl::StatusOr<TrialExit> TrialRunner::Run() {
  absl::StatusOr<TrialExit> exit = Train();
  // A checkpoint being written is whole once written, whatever became of the training; the
  // other ranks' part in it ends too.
  absl::Status written = CollectCheckpointWrite(/*wait=*/true);
  if (shard_gather_ && written.ok()) written = shard_gather_->Wait();
  if (!exit.ok() || !written.ok()) return exit.ok() ? written : exit.status();
  return exit;
}

absl::StatusOr<TrialExit> TrialRunner::Train() {
  if (options_.trace != nullptr && options_.exchange != nullptr) {
    TraceWriter* trace = options_.trace;
    options_.exchange->set_bucket_observer(
        [trace](const GradientExchange::BucketTimeline& bucket) { TraceBucket(*trace, bucket); });
  }
  // The first report's window starts here, but its timings also count forming the group: the
  // phase timer counts from the first phase entered, kStarting, which has no timing key.
  throughput_.Start(options_.clock->MonotonicSeconds(), progress_.records_trained);
  paced_batches_ = progress_.batches_trained;
  Enter(TrialPhase::kStarting, progress_.batches_trained);
  NoticeNothingToTune();
  if (multi_rank()) {
    // Same model everywhere, starting from rank 0's parameters and state (its initialisation, or
    // the checkpoint every rank restored).
    LoadedModel& model = *options_.model;
    if (absl::Status status =
            CheckSameLayout(*options_.collective, model.arena(), model.state_arena());
        !status.ok()) {
      return CollectiveFailure(status, status.message());
    }
    if (absl::Status status = BroadcastParameters(*options_.collective, model.arena());
        !status.ok()) {
      return InCollective(status, "sharing rank 0's parameters", progress_.batches_trained);
    }
    if (model.state_arena() != nullptr) {
      if (absl::Status status = BroadcastParameters(*options_.collective, *model.state_arena());
          !status.ok()) {
        return InCollective(status, "sharing rank 0's state tensors", progress_.batches_trained);
      }
    }
  }
  if (progress_.batches_trained == 0 && schedule_.initial_validation) {
    if (absl::Status status = Validate(); !status.ok()) return status;
  } else if (progress_.batches_trained == 0) {
    // Only at the trial's start: an attempt that resumes from a checkpoint passed this already,
    // and the plugin's evaluate may touch state the checkpoint holds.
    if (absl::Status status = CheckSearcherMetric(); !status.ok()) return status;
  } else if (options_.validate_at_resume && progress_.batches_trained == schedule_.total_batches) {
    // The checkpoint was written after its batch's validation, which is why a restore counts that
    // validation as done; it is asked for again because its report was lost.
    last_validation_batches_ = UINT64_MAX;
    if (absl::Status status = Validate(); !status.ok()) return status;
    checkpoint_after_validation_ = false;  // the checkpoint restored is at this very batch
  }
  bool first_batch = true;
  while (progress_.batches_trained < schedule_.total_batches) {
    if (absl::Status status = TrainBatch(); !status.ok()) return status;
    if (std::exchange(first_batch, false)) WarnOfUnreadHyperparameters();
    const uint64_t batches = progress_.batches_trained;
    if (!schedule_.StepDue(batches)) continue;
    const uint64_t before = batches - batches_since_step_;
    if (absl::Status status = StepOptimizer(); !status.ok()) return status;
    const bool report = schedule_.ReportDue(before, batches);
    if (report) {
      if (absl::Status status = ReportTraining(); !status.ok()) return status;
    }
    if (schedule_.ValidationDue(before, batches)) {
      if (absl::Status status = Validate(); !status.ok()) return status;
    }
    if (schedule_.CheckpointDue(before, batches) || checkpoint_after_validation_) {
      if (absl::Status status = Checkpoint(); !status.ok()) return status;
    }
    if (absl::Status status = CollectCheckpointWrite(/*wait=*/false); !status.ok()) return status;
    MaybeReportProgress(/*force=*/false);
    if (batches == schedule_.total_batches) break;
    absl::StatusOr<bool> stop = StopAgreed(report);
    if (!stop.ok()) return stop.status();
    if (*stop) {
      // One rank stops after any batch: those since the last report would be in no report else.
      if (absl::Status status = report ? absl::OkStatus() : ReportTraining(); !status.ok()) {
        return status;
      }
      if (last_checkpoint_batches_ != batches) {
        if (absl::Status status = Checkpoint(); !status.ok()) return status;
      }
      MaybeReportProgress(/*force=*/true);
      return TrialExit::kStopped;
    }
  }
  MaybeReportProgress(/*force=*/true);
  Enter(TrialPhase::kDone, progress_.batches_trained);
  return TrialExit::kCompleted;
}

void TrialRunner::WarnOfUnreadHyperparameters() {
  if (!reporter()) return;
  std::vector<std::string> read_by_cohort = {"global_batch_size"};
  if (options_.optimizer != nullptr) {
    for (std::string& name : OptimizerHyperparameterNames(options_.optimizer->options().kind)) {
      read_by_cohort.push_back(std::move(name));
    }
  }
  const std::set<std::string> read_by_plugin = options_.model->HyperparametersRead();
  const std::vector<std::string> unread =
      UnreadHyperparameters(options_.config->hyperparameters, read_by_plugin, read_by_cohort);
  if (unread.empty()) return;
  options_.events->OnNotice(UnreadHyperparametersNotice(
      unread, AskedButNotSet(options_.config->hyperparameters, read_by_plugin, read_by_cohort)));
}

absl::StatusOr<bool> TrialRunner::StopAgreed(bool at_report) {
  const bool asked = options_.events->StopRequested();
  if (!multi_rank()) return asked;
  // Ranks must stop after the same batch: they agree at training reports (one tiny collective
  // every scheduling_unit batches, not one per batch).
  if (!at_report) return false;
  absl::StatusOr<bool> any = AnyRank(*options_.collective, asked);
  if (!any.ok()) {
    return InCollective(any.status(), "agreeing on a stop", progress_.batches_trained);
  }
  return any;
}

absl::Status TrialRunner::TrainBatch() {
  Enter(TrialPhase::kPreparing, progress_.batches_trained + 1);
  const BatchSpec batch = sampler_->TrainingBatch(progress_.batches_trained);
  // The last batch of an aggregation window sums the gradients across ranks while backward
  // runs; averaging (over ranks, and over the window unless told otherwise) happens first.
  GradientExchange* exchange = options_.exchange;
  const bool exchange_now = exchange != nullptr && schedule_.StepDue(progress_.batches_trained + 1);
  if (exchange_now) {
    const uint64_t window = batches_since_step_ + 1;
    double scale = 1.0 / options_.model->context().size;
    if (options_.config->optimizations.average_aggregated_gradients) scale /= window;
    if (absl::Status tuned = BeforeExchangedBatch(); !tuned.ok()) return tuned;
    exchange->Begin(scale, progress_.optimizer_steps, progress_.batches_trained);
  }
  const uint64_t number = progress_.batches_trained + 1;
  Enter(TrialPhase::kTraining, number);
  absl::StatusOr<BatchMetrics> metrics = options_.model->TrainBatch(batch);
  if (exchange_now) {
    // Finish even when train_batch failed, so every rank still runs the same collectives.
    Enter(TrialPhase::kExchanging, number);
    absl::Status exchanged = exchange->Finish();
    if (metrics.ok() && !exchanged.ok()) {
      return InCollective(exchanged, "gradient exchange", number);
    }
    if (absl::Status tuned = metrics.ok() ? AfterExchangedBatch() : absl::OkStatus(); !tuned.ok()) {
      return tuned;
    }
  }
  if (!metrics.ok()) return metrics.status();
  // A value still on the device is read at the next report, not now (no wait per batch), or once
  // kMaxUnsettledBatches wait, whichever comes first (a long scheduling_unit keeps memory bounded).
  if (metrics->unsettled() || !unsettled_training_.empty()) {
    unsettled_training_.push_back(*std::move(metrics));
    if (unsettled_training_.size() >= kMaxUnsettledBatches) {
      if (absl::Status status = SettleTrainingMetrics(); !status.ok()) return status;
    }
  } else {
    if (absl::Status status = AddTrainingMetrics(*metrics); !status.ok()) return status;
  }
  ++progress_.batches_trained;
  progress_.records_trained += sampler_->effective_global_batch_size();
  ++batches_since_step_;
  return absl::OkStatus();
}

absl::Status TrialRunner::AddTrainingMetrics(const BatchMetrics& metrics) {
  if (absl::Status status = training_metrics_.Add(metrics); !status.ok()) return status;
  if (const Metric* loss = metrics.Find("loss")) latest_loss_ = loss->value;
  return absl::OkStatus();
}

absl::Status TrialRunner::SettleTrainingMetrics() {
  if (unsettled_training_.empty()) return absl::OkStatus();
  std::vector<BatchMetrics> batches = std::exchange(unsettled_training_, {});
  if (absl::Status status = options_.model->Settle(batches); !status.ok()) return status;
  for (const BatchMetrics& batch : batches) {
    if (absl::Status status = AddTrainingMetrics(batch); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status TrialRunner::StepOptimizer() {
  Enter(TrialPhase::kStepping, progress_.batches_trained);
  TensorArena& arena = options_.model->arena();
  absl::StatusOr<bool> usable = GradientsUsable();
  if (!usable.ok()) return usable.status();
  if (!*usable) {
    // The window's gradients are dropped, and so is what compression kept from them.
    batches_since_step_ = 0;
    if (options_.exchange != nullptr) {
      if (absl::Status status = options_.exchange->ResetCompression(); !status.ok()) return status;
    }
    return arena.ZeroGradients();
  }
  if (options_.exchange == nullptr && batches_since_step_ > 1 &&
      options_.config->optimizations.average_aggregated_gradients) {
    if (absl::Status status =
            DivideGradients(arena, batches_since_step_, options_.device_gradients);
        !status.ok()) {
      return status;
    }
  }
  absl::Status stepped =
      options_.optimizer != nullptr
          ? options_.optimizer->Step()
          : options_.model->OptimizerStep(progress_.optimizer_steps, progress_.batches_trained);
  if (!stepped.ok()) return stepped;
  if (absl::Status shared = ShareShardParameters(); !shared.ok()) return shared;
  ++progress_.optimizer_steps;
  batches_since_step_ = 0;
  return arena.ZeroGradients();
}

absl::Status TrialRunner::ShareShardParameters() {
  if (options_.optimizer == nullptr || options_.optimizer->shard().whole()) return absl::OkStatus();
  CollectiveTagScope tag({.purpose = CollectivePurpose::kShard,
                          .batch = static_cast<int64_t>(progress_.batches_trained) - 1});
  if (absl::Status status = BroadcastShardParameters(options_.model->arena(), *options_.collective,
                                                     options_.optimizer->shard().size,
                                                     shard_staging_, device_shards_);
      !status.ok()) {
    return InCollective(status, "sharing the shards' parameters", progress_.batches_trained);
  }
  ++shard_broadcasts_;
  return absl::OkStatus();
}

MetricsReport TrialRunner::Report(ReportKind kind, const std::vector<ReducedMetric>& metrics) {
  MetricsReport report;
  report.trial_id = options_.trial_id;
  report.kind = kind;
  report.batches = progress_.batches_trained;
  report.records = progress_.records_trained;
  report.unix_time = options_.clock->UnixSeconds();
  for (const ReducedMetric& metric : metrics) report.metrics.push_back({metric.name, metric.value});
  return report;
}

absl::Status TrialRunner::ReportTraining() {
  if (absl::Status status = SettleTrainingMetrics(); !status.ok()) return status;
  // average_training_metrics: every rank's batches count (MEAN metrics weighted by records, the
  // same on every rank); otherwise rank 0 reports its own.
  if (multi_rank() && options_.config->optimizations.average_training_metrics) {
    Enter(TrialPhase::kReporting, progress_.batches_trained);
    if (absl::Status status = MergeMetricsAcrossRanks(*options_.collective, training_metrics_);
        !status.ok()) {
      return InCollective(status, "merging training metrics", progress_.batches_trained);
    }
  }
  const std::vector<ReducedMetric> metrics = training_metrics_.Result();
  training_metrics_.Reset();
  MetricsReport report = Report(ReportKind::kTraining, metrics);
  // Where this rank's time went since the previous training report, and the throughput then.
  const double now = options_.clock->MonotonicSeconds();
  report.timings = phase_timer_.Take(now);
  if (options_.exchange != nullptr) {
    // The exchange's own time, on its thread: it overlaps compute; what did not overlap shows
    // as exchange_wait.
    const GradientExchange::Times exchange = options_.exchange->TakeTimes();
    report.timings.push_back({"exchange", exchange.exchange_seconds});
    report.timings.push_back({"codec", exchange.codec_seconds});
    // Each step's shard broadcasts move every block whole, a range from each owner: this rank
    // hands the collectives each block's bytes, as the exchange counts what it hands them.
    uint64_t block_bytes = 0;
    for (const ArenaBlock& block : options_.model->arena().blocks()) {
      block_bytes += block.element_count * block.element_size;
    }
    report.exchanged_bytes = throughput_.TakeExchangedBytes(exchange.bytes) +
                             std::exchange(shard_broadcasts_, 0) * block_bytes;
  }
  // The checkpoint writer's time, on its own thread with checkpoint_storage.async.
  if (checkpoint_write_seconds_ > 0) {
    report.timings.push_back({"checkpoint_write", std::exchange(checkpoint_write_seconds_, 0)});
  }
  report.records_per_second = throughput_.TakeReportRate(now, progress_.records_trained);
  if (multi_rank()) {
    const uint64_t batches = progress_.batches_trained - paced_batches_;
    paced_batches_ = progress_.batches_trained;
    absl::StatusOr<std::vector<RankPace>> paces =
        paces_.Gather(*options_.collective, report.timings, batches);
    if (!paces.ok()) {
      return InCollective(paces.status(), "gathering the ranks' pace", progress_.batches_trained);
    }
    report.ranks = *std::move(paces);
  }
  if (reporter()) options_.events->OnMetrics(report);
  return absl::OkStatus();
}

absl::Status TrialRunner::RequireSearcherMetric(const std::vector<std::string>& names) const {
  if (NamesMetric(names, options_.config->searcher.metric)) return absl::OkStatus();
  if (validation_records_ == 0) {
    return PermanentFailure(absl::FailedPreconditionError(
        absl::StrCat("searcher.metric: '", options_.config->searcher.metric,
                     "' cannot be validated: plugin ", options_.model->plugin().name(),
                     " has no validation records (dataset_size of its validation split is 0)")));
  }
  return PermanentFailure(absl::FailedPreconditionError(
      absl::StrCat("searcher.metric: '", options_.config->searcher.metric,
                   "' is not among the validation metrics plugin ", options_.model->plugin().name(),
                   " reports (", absl::StrJoin(names, ", "), ")")));
}

absl::Status TrialRunner::CheckSearcherMetric() {
  // A plugin without validation records could never validate: said before it trains.
  if (validation_records_ == 0) return RequireSearcherMetric({});
  if (sampler_->ValidationBatchCount(validation_records_) == 0) return absl::OkStatus();
  if (absl::Status status = SettleTrainingMetrics(); !status.ok()) return status;
  const BatchSpec first = sampler_->ValidationBatch(validation_records_, 0);
  absl::StatusOr<BatchMetrics> metrics = options_.model->EvaluateBatch(first);
  if (!metrics.ok()) return metrics.status();
  std::vector<BatchMetrics> batches = {*std::move(metrics)};
  if (absl::Status status = options_.model->Settle(batches); !status.ok()) return status;
  if (absl::Status status = ClearGradientsAfterEvaluation(); !status.ok()) return status;
  MetricAccumulator batch;  // names as a validation reduces them ("validation_loss" is "loss")
  if (absl::Status status = batch.Add(batches[0]); !status.ok()) return status;
  // A rank whose share of the batch is empty and says nothing leaves the check to the others.
  if (first.record_indices.empty() && batch.Names().empty()) return absl::OkStatus();
  return RequireSearcherMetric(batch.Names());
}

absl::Status TrialRunner::Validate() {
  if (last_validation_batches_ == progress_.batches_trained) return absl::OkStatus();
  const double started = options_.clock->MonotonicSeconds();
  Enter(TrialPhase::kValidating, progress_.batches_trained);
  // The device's values are taken all at once: the training ones first.
  if (absl::Status status = SettleTrainingMetrics(); !status.ok()) return status;
  const uint64_t batches = sampler_->ValidationBatchCount(validation_records_);
  std::vector<BatchMetrics> evaluated;  // values still on the device are read once, at the end
  for (uint64_t k = 0; k < batches; ++k) {
    absl::StatusOr<BatchMetrics> metrics =
        options_.model->EvaluateBatch(sampler_->ValidationBatch(validation_records_, k));
    if (!metrics.ok()) return metrics.status();
    evaluated.push_back(*std::move(metrics));
    options_.events->StillWorking();
  }
  if (absl::Status status = options_.model->Settle(evaluated); !status.ok()) return status;
  if (absl::Status status = ClearGradientsAfterEvaluation(); !status.ok()) return status;
  std::optional<std::string> uneven;  // told once a trial: it is the plugin's, every time
  absl::StatusOr<MetricAccumulator> total = AccumulateValidation(evaluated, &uneven);
  if (!total.ok()) return total.status();
  if (uneven && reporter() && !std::exchange(told_uneven_validation_, true)) {
    options_.events->OnNotice(absl::StrCat("warning: ", *uneven));
  }
  if (multi_rank()) {
    if (absl::Status status = MergeMetricsAcrossRanks(*options_.collective, *total); !status.ok()) {
      return InCollective(status, "merging validation metrics", progress_.batches_trained);
    }
  }
  const std::vector<ReducedMetric> result = total->Result();
  if (absl::Status status = RequireSearcherMetric(MetricNames(result)); !status.ok()) return status;
  if (reporter()) options_.events->OnMetrics(Report(ReportKind::kValidation, result));
  last_validation_batches_ = progress_.batches_trained;
  throughput_.Exclude(options_.clock->MonotonicSeconds() - started);

  // checkpoint_policy: after this validation, checkpoint always (all), when it is the best so
  // far (best), or never (none). Nothing is trained yet at an initial validation.
  const double value = FindMetric(result, options_.config->searcher.metric)->value;
  const bool smaller_is_better = options_.config->searcher.smaller_is_better;
  const std::optional<double>& so_far = progress_.best_metric;
  const bool best = IsBetterMetric(value, so_far, smaller_is_better);
  if (best) progress_.best_metric = value;
  const CheckpointPolicy policy = options_.config->checkpoint_policy;
  checkpoint_after_validation_ =
      progress_.batches_trained > 0 &&
      (policy == CheckpointPolicy::kAll || (policy == CheckpointPolicy::kBest && best));
  return absl::OkStatus();
}

void TrialRunner::MaybeReportProgress(bool force) {
  if (!reporter()) return;
  const double now = options_.clock->MonotonicSeconds();
  if (!force && now - last_progress_time_ < options_.progress_interval_seconds) return;
  last_progress_time_ = now;
  options_.events->OnProgress(
      ProgressReport{options_.trial_id, progress_.batches_trained, schedule_.total_batches,
                     progress_.records_trained, latest_loss_,
                     throughput_.ProgressRate(now, progress_.records_trained)});
}

}  // namespace cohort
