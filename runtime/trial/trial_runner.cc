#include "runtime/trial/trial_runner.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/arena/block_staging.h"
#include "runtime/arena/divide_gradients.h"
#include "runtime/arena/dtype.h"
#include "runtime/arena/nonfinite_gradient.h"
#include "runtime/checkpoint/checkpoint_names.h"
#include "runtime/trial/bucket_trace.h"
#include "runtime/trial/permanent_failure.h"
#include "runtime/trial/rank_sync.h"
#include "runtime/trial/splitmix64.h"

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
    return absl::FailedPreconditionError(absl::StrCat(
        "plugin ", model.plugin().name(), " has no optimizer_step and no built-in optimizer was "
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
  return runner;
}

absl::Status TrialRunner::Restore(const std::string& checkpoint_id) {
  absl::StatusOr<cohort::Checkpoint> checkpoint = options_.storage->Read(checkpoint_id);
  if (!checkpoint.ok()) return checkpoint.status();
  return RestoreFrom(*checkpoint);
}

absl::StatusOr<std::vector<std::string>> TrialRunner::RestoreNewestWhole(
    const std::string& checkpoint_id) {
  std::vector<std::string> warnings;
  const auto pass_over = [&warnings](const std::string& id, const absl::Status& damage) {
    warnings.push_back(absl::StrCat("checkpoint ", id, " is damaged (", damage.message(),
                                    "): passed over"));
  };
  absl::StatusOr<cohort::Checkpoint> checkpoint = options_.storage->Read(checkpoint_id);
  if (checkpoint.ok()) {
    if (absl::Status restored = RestoreFrom(*checkpoint); !restored.ok()) return restored;
    return warnings;
  }
  if (!absl::IsDataLoss(checkpoint.status())) return checkpoint.status();
  pass_over(checkpoint_id, checkpoint.status());
  const std::optional<CheckpointIdParts> damaged = ParseCheckpointId(checkpoint_id);
  absl::StatusOr<std::vector<CheckpointInfo>> whole = options_.storage->List();
  if (!whole.ok()) return whole.status();
  // Newest first: List sorts by trial, batches, time and id.
  for (auto it = whole->rbegin(); it != whole->rend(); ++it) {
    if (it->trial_id != options_.trial_id || it->id == checkpoint_id) continue;
    if (damaged && it->batches_trained > damaged->batches) continue;
    absl::StatusOr<cohort::Checkpoint> older = options_.storage->Read(it->id);
    if (!older.ok()) {
      if (!absl::IsDataLoss(older.status())) return older.status();
      pass_over(it->id, older.status());
      continue;
    }
    if (absl::Status restored = RestoreFrom(*older); !restored.ok()) return restored;
    warnings.push_back(absl::StrCat("trial ", options_.trial_id, " resumes from ", it->id,
                                    ", the newest whole checkpoint before it"));
    ReportRestored(it->id);
    return warnings;
  }
  warnings.push_back(absl::StrCat("trial ", options_.trial_id,
                                  " has no whole checkpoint left: it trains from the beginning"));
  ReportRestored("");
  return warnings;
}

void TrialRunner::ReportRestored(const std::string& checkpoint_id) {
  if (!reporter()) return;
  CheckpointReport restored{options_.trial_id, checkpoint_id, progress_.batches_trained,
                            progress_.records_trained, 0};
  restored.restored = true;
  options_.events->OnCheckpoint(restored);
}

absl::Status TrialRunner::RestoreFrom(const cohort::Checkpoint& checkpoint) {
  const std::string& checkpoint_id = checkpoint.info.id;
  const CheckpointInfo& info = checkpoint.info;
  auto refuse = [&](absl::string_view why) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot resume from checkpoint ", checkpoint_id, ": ", why));
  };
  if (info.trial_id != options_.trial_id) {
    return refuse(absl::StrCat("it belongs to trial ", info.trial_id, ", not trial ",
                               options_.trial_id));
  }
  if (info.config_fingerprint != fingerprint_) {
    return refuse(absl::StrCat(
        "it was trained with other settings (fingerprint ", info.config_fingerprint, ", now ",
        fingerprint_, "); hyperparameters, seed, slots and optimizations must stay the same"));
  }
  absl::StatusOr<TrialProgress> progress =
      RestoreTrialState(checkpoint.files, *options_.model, options_.optimizer);
  if (!progress.ok()) return refuse(progress.status().message());
  if (absl::Status restored = RestoreExchangeState(checkpoint.files); !restored.ok()) {
    return refuse(restored.message());
  }
  if (progress->trial_seed != options_.trial_seed) {
    return refuse("it was trained with another trial seed");
  }
  progress_ = *progress;
  last_checkpoint_batches_ = progress_.batches_trained;
  last_validation_batches_ = progress_.batches_trained;  // validated before it was written
  rate_window_start_records_ = progress_.records_trained;
  report_window_start_records_ = progress_.records_trained;
  return absl::OkStatus();
}

void TrialRunner::Enter(TrialPhase phase, uint64_t batch) {
  const double now = options_.clock->MonotonicSeconds();
  if (options_.trace != nullptr && TrialPhaseTimingKey(phase_timer_.current())[0] != '\0') {
    options_.trace->Complete(TraceWriter::kTrainingThread,
                             TrialPhaseName(phase_timer_.current()), phase_timer_.since(), now,
                             phase_batch_);
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
  return absl::Status(status.code(), message);
}

absl::StatusOr<TrialExit> TrialRunner::Run() {
  if (options_.trace != nullptr && options_.exchange != nullptr) {
    TraceWriter* trace = options_.trace;
    options_.exchange->set_bucket_observer(
        [trace](const GradientExchange::BucketTimeline& bucket) { TraceBucket(*trace, bucket); });
  }
  rate_window_start_time_ = options_.clock->MonotonicSeconds();
  // The first report's window starts here, but its timings also count forming the group: the
  // phase timer counts from the first phase entered, kStarting, which has no timing key.
  report_window_start_time_ = rate_window_start_time_;
  Enter(TrialPhase::kStarting, progress_.batches_trained);
  if (multi_rank()) {
    // Same model everywhere, starting from rank 0's parameters and state (its initialisation, or
    // the checkpoint every rank restored).
    LoadedModel& model = *options_.model;
    if (absl::Status status = CheckSameLayout(*options_.collective, model.arena(), model.state_arena());
        !status.ok()) {
      return status;
    }
    if (absl::Status status = BroadcastParameters(*options_.collective, model.arena()); !status.ok()) {
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
  }
  while (progress_.batches_trained < schedule_.total_batches) {
    if (absl::Status status = TrainBatch(); !status.ok()) return status;
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
    MaybeReportProgress(/*force=*/false);
    if (batches == schedule_.total_batches) break;
    absl::StatusOr<bool> stop = StopAgreed(report);
    if (!stop.ok()) return stop.status();
    if (*stop) {
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

absl::StatusOr<bool> TrialRunner::GradientsUsable() {
  const std::string& policy = options_.config->optimizations.nonfinite_gradients;
  if (policy == "ignore") return true;
  const TensorArena& arena = options_.model->arena();
  const uint64_t batch = progress_.batches_trained;
  // What this rank put in, read before the sum: it says which rank a NaN came from.
  if (options_.exchange != nullptr) {
    if (std::optional<NonFiniteGradient> own = options_.exchange->TakeLocalNonFinite()) {
      options_.events->OnNotice(absl::StrCat("batch ", batch, ": rank ",
                                             options_.model->context().rank,
                                             " computed a gradient that is not finite: ",
                                             DescribeNonFiniteGradient(arena, *own)));
    }
  }
  // The summed gradient is the same bits on every rank, so every rank decides alike.
  const absl::StatusOr<std::optional<NonFiniteGradient>> searched =
      FindNonFiniteGradient(arena, options_.device_gradients);
  if (!searched.ok()) return searched.status();
  const std::optional<NonFiniteGradient>& found = *searched;
  if (!found) return true;
  const std::string what =
      absl::StrCat("batch ", batch, ": the gradient is not finite (",
                   DescribeNonFiniteGradient(arena, *found), multi_rank() ? " after the sum" : "", ")");
  if (policy == "fail") {
    return absl::FailedPreconditionError(absl::StrCat(
        what, "; optimizations.nonfinite_gradients is fail (skip would drop such steps instead)"));
  }
  if (reporter()) {
    options_.events->OnNotice(absl::StrCat(
        what, "; optimizer step skipped (optimizations.nonfinite_gradients: skip)"));
  }
  return false;
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
  ++progress_.optimizer_steps;
  batches_since_step_ = 0;
  return arena.ZeroGradients();
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
    report.exchanged_bytes = exchange.bytes - reported_exchanged_bytes_;
    reported_exchanged_bytes_ = exchange.bytes;
  }
  if (now > report_window_start_time_) {
    report.records_per_second =
        static_cast<double>(progress_.records_trained - report_window_start_records_) /
        (now - report_window_start_time_);
  }
  report_window_start_time_ = now;
  report_window_start_records_ = progress_.records_trained;
  if (reporter()) options_.events->OnMetrics(report);
  return absl::OkStatus();
}

absl::Status TrialRunner::RequireSearcherMetric(const std::vector<ReducedMetric>& result) const {
  if (FindMetric(result, options_.config->searcher.metric) != nullptr) return absl::OkStatus();
  std::vector<std::string> names;
  for (const ReducedMetric& metric : result) names.push_back(metric.name);
  return PermanentFailure(absl::FailedPreconditionError(absl::StrCat(
      "searcher.metric: '", options_.config->searcher.metric,
      "' is not among the validation metrics plugin ", options_.model->plugin().name(),
      " reports (", absl::StrJoin(names, ", "), ")")));
}

absl::Status TrialRunner::CheckSearcherMetric() {
  if (sampler_->ValidationBatchCount(validation_records_) == 0) return absl::OkStatus();
  if (absl::Status status = SettleTrainingMetrics(); !status.ok()) return status;
  absl::StatusOr<BatchMetrics> metrics =
      options_.model->EvaluateBatch(sampler_->ValidationBatch(validation_records_, 0));
  if (!metrics.ok()) return metrics.status();
  std::vector<BatchMetrics> batches = {*std::move(metrics)};
  if (absl::Status status = options_.model->Settle(batches); !status.ok()) return status;
  MetricAccumulator batch;  // names as a validation reduces them ("validation_loss" is "loss")
  if (absl::Status status = batch.Add(batches[0]); !status.ok()) return status;
  return RequireSearcherMetric(batch.Result());
}

absl::Status TrialRunner::Validate() {
  if (last_validation_batches_ == progress_.batches_trained) return absl::OkStatus();
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
  MetricAccumulator total;
  for (const BatchMetrics& metrics : evaluated) {
    if (absl::Status status = total.Add(metrics); !status.ok()) return status;
  }
  if (multi_rank()) {
    if (absl::Status status = MergeMetricsAcrossRanks(*options_.collective, total); !status.ok()) {
      return InCollective(status, "merging validation metrics", progress_.batches_trained);
    }
  }
  const std::vector<ReducedMetric> result = total.Result();
  if (absl::Status status = RequireSearcherMetric(result); !status.ok()) return status;
  if (reporter()) options_.events->OnMetrics(Report(ReportKind::kValidation, result));
  last_validation_batches_ = progress_.batches_trained;

  // checkpoint_policy: after this validation, checkpoint always (all), when it is the best so
  // far (best), or never (none). Nothing is trained yet at an initial validation.
  const double value = FindMetric(result, options_.config->searcher.metric)->value;
  const bool smaller_is_better = options_.config->searcher.smaller_is_better;
  const std::optional<double>& so_far = progress_.best_metric;
  const bool best = !so_far || (smaller_is_better ? value < *so_far : value > *so_far);
  if (best) progress_.best_metric = value;
  const std::string& policy = options_.config->checkpoint_policy;
  checkpoint_after_validation_ = progress_.batches_trained > 0 &&
                                 (policy == "all" || (policy == "best" && best));
  return absl::OkStatus();
}

absl::StatusOr<std::string> TrialRunner::GatherCompressionState() {
  if (options_.exchange == nullptr) return std::string();
  absl::StatusOr<std::string> own = options_.exchange->SaveCompressionState();
  if (!own.ok() || own->empty() || !multi_rank()) return own;
  // Every rank's state has the same size: the same form over the same plan.
  std::string all(own->size() * options_.collective->size(), '\0');
  if (absl::Status status = options_.collective->Allgather(own->data(), own->size(), all.data());
      !status.ok()) {
    return InCollective(status, "gathering the compression state", progress_.batches_trained);
  }
  return all;
}

absl::Status TrialRunner::RestoreExchangeState(const std::map<std::string, std::string>& files) {
  if (options_.exchange == nullptr) return absl::OkStatus();
  if (auto order = files.find("ready_order"); order != files.end()) {
    absl::StatusOr<std::vector<uint32_t>> tensors = ParseReadyOrder(order->second);
    if (!tensors.ok()) return tensors.status();
    if (absl::Status adopted = options_.exchange->AdoptReadyOrder(*tensors); !adopted.ok()) {
      return absl::DataLossError(
          absl::StrCat("checkpoint file 'ready_order': ", adopted.message()));
    }
  }
  auto file = files.find("compression");
  if (file == files.end()) return options_.exchange->RestoreCompressionState("");
  const uint32_t ranks = multi_rank() ? options_.collective->size() : 1;
  const std::string& all = file->second;
  if (all.size() % ranks != 0) {
    return absl::DataLossError(absl::StrCat("checkpoint file 'compression' has ", all.size(),
                                            " bytes, not a share for each of ", ranks, " ranks"));
  }
  const size_t share = all.size() / ranks;
  return options_.exchange->RestoreCompressionState(
      absl::string_view(all).substr(options_.model->context().rank * share, share));
}

absl::Status TrialRunner::Checkpoint() {
  if (last_checkpoint_batches_ == progress_.batches_trained) return absl::OkStatus();
  Enter(TrialPhase::kCheckpointing, progress_.batches_trained);
  absl::StatusOr<std::string> compression = GatherCompressionState();
  if (!compression.ok()) return compression.status();
  if (!reporter()) {
    // Every rank holds the same parameters and state; rank 0 writes them.
    last_checkpoint_batches_ = progress_.batches_trained;
    checkpoint_after_validation_ = false;
    return absl::OkStatus();
  }
  absl::StatusOr<std::map<std::string, std::string>> files =
      CaptureTrialState(*options_.model, options_.optimizer, progress_);
  if (!files.ok()) return files.status();
  if (!compression->empty()) files->emplace("compression", *std::move(compression));
  if (options_.exchange != nullptr && options_.exchange->ready_order()) {
    files->emplace("ready_order", ReadyOrderText(*options_.exchange->ready_order()));
  }
  CheckpointInfo info;
  info.id = CheckpointId(options_.trial_id, progress_.batches_trained);
  info.trial_id = options_.trial_id;
  info.batches_trained = progress_.batches_trained;
  info.records_trained = progress_.records_trained;
  info.config_fingerprint = fingerprint_;
  info.abi_major = options_.model->plugin().abi_version().major;
  info.abi_minor = options_.model->plugin().abi_version().minor;
  info.created_unix_ms = static_cast<int64_t>(options_.clock->UnixSeconds() * 1000);
  absl::Status written = options_.storage->Write(info, *files);
  // The same trial after the same batches always writes the same checkpoint: one already whole
  // under this id (written just before a crash, say) is as good as a new one.
  if (!written.ok() && !absl::IsAlreadyExists(written)) return written;
  uint64_t bytes = 0;
  for (const auto& [name, contents] : *files) bytes += contents.size();
  options_.events->OnCheckpoint(CheckpointReport{options_.trial_id, info.id,
                                                 progress_.batches_trained,
                                                 progress_.records_trained, bytes});
  last_checkpoint_batches_ = progress_.batches_trained;
  checkpoint_after_validation_ = false;
  return absl::OkStatus();
}

void TrialRunner::MaybeReportProgress(bool force) {
  if (!reporter()) return;
  const double now = options_.clock->MonotonicSeconds();
  if (!force && now - last_progress_time_ < options_.progress_interval_seconds) return;
  const double elapsed = now - rate_window_start_time_;
  if (elapsed > 0.5) {
    records_per_second_ =
        static_cast<double>(progress_.records_trained - rate_window_start_records_) / elapsed;
    rate_window_start_time_ = now;
    rate_window_start_records_ = progress_.records_trained;
  }
  last_progress_time_ = now;
  options_.events->OnProgress(ProgressReport{options_.trial_id, progress_.batches_trained,
                                             schedule_.total_batches, progress_.records_trained,
                                             latest_loss_, records_per_second_});
}

}  // namespace cohort
