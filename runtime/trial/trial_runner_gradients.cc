// TrialRunner around the gradient exchange: whether the summed gradients may be stepped
// (optimizations.nonfinite_gradients), the bucket sizes tried and kept under
// optimizations.tensor_fusion_threshold auto, and the gradients cleared after an evaluation.
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/arena/arena_shard.h"
#include "runtime/arena/nonfinite_gradient.h"
#include "runtime/collective/recorded_collective.h"
#include "runtime/trial/rank_sync.h"
#include "runtime/trial/trial_runner.h"

namespace cohort {

absl::StatusOr<bool> TrialRunner::GradientsUsable() {
  const NonfiniteGradients policy = options_.config->optimizations.nonfinite_gradients;
  if (policy == NonfiniteGradients::kIgnore) return true;
  const TensorArena& arena = options_.model->arena();
  const uint64_t batch = progress_.batches_trained;
  // What this rank put in, read before the sum: it says which rank a NaN came from.
  if (options_.exchange != nullptr) {
    if (std::optional<NonFiniteGradient> own = options_.exchange->TakeLocalNonFinite()) {
      options_.events->OnNotice(absl::StrCat(
          "batch ", batch, ": rank ", options_.model->context().rank,
          " computed a gradient that is not finite: ", DescribeNonFiniteGradient(arena, *own)));
    }
  }
  // The summed gradient is the same bits on every rank, so every rank decides alike. Under ZeRO
  // stage 2 each rank holds the sum of its shard only: it looks there, and the ranks agree.
  const bool shards = multi_rank() && options_.config->optimizations.zero_stage == 2;
  const absl::StatusOr<std::optional<NonFiniteGradient>> searched = FindNonFiniteGradient(
      arena, options_.device_gradients, shards ? options_.optimizer->shard() : ArenaShard{});
  if (!searched.ok()) return searched.status();
  const std::optional<NonFiniteGradient>& found = *searched;
  if (shards) {
    absl::StatusOr<bool> anywhere = AnyRank(*options_.collective, found.has_value());
    if (!anywhere.ok()) {
      return InCollective(anywhere.status(), "agreeing on a non-finite gradient", batch);
    }
    if (!*anywhere) return true;
  } else if (!found) {
    return true;
  }
  const std::string where =
      found ? DescribeNonFiniteGradient(arena, *found) : "in another rank's shard";
  const std::string what = absl::StrCat("batch ", batch, ": the gradient is not finite (", where,
                                        multi_rank() ? " after the sum" : "", ")");
  if (policy == NonfiniteGradients::kFail) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, "; optimizations.nonfinite_gradients is fail (skip would drop such steps instead)"));
  }
  ++skipped_steps_;
  if (reporter()) {
    options_.events->OnNotice(
        absl::StrCat(what, "; optimizer step skipped (optimizations.nonfinite_gradients: skip)"));
    // Each skip is in the trial's log; the 1st, 10th, 100th... are warnings, which reach whoever
    // follows the trial: a trial whose every step is skipped trains no more.
    uint64_t power = 1;
    while (power < skipped_steps_ && power <= UINT64_MAX / 10) power *= 10;
    if (power == skipped_steps_) {
      options_.events->OnNotice(absl::StrCat(
          "warning: ", skipped_steps_, skipped_steps_ == 1 ? " optimizer step" : " optimizer steps",
          " skipped for a gradient that is not finite since this attempt began (the latest at "
          "batch ",
          batch, "); the trial's log names each"));
    }
  }
  return false;
}

namespace {

constexpr uint64_t kTuningBatches = FusionTuner::kWarmupBatches + FusionTuner::kMeasuredBatches;

}  // namespace

std::string TrialRunner::TooFewToTune(size_t candidates) const {
  const uint64_t needed = candidates * kTuningBatches;
  const uint64_t left = schedule_.StepsAfter(progress_.batches_trained);
  if (left >= needed) return "";
  return absl::StrCat("; this trial has ", left, " exchanged batches left, fewer than the ", needed,
                      " that takes: it trains with the sizes in turn and keeps none (name a size, "
                      "or train longer)");
}

void TrialRunner::NoticeNothingToTune() {
  if (!options_.config->optimizations.auto_tune_tensor_fusion || options_.exchange != nullptr) {
    return;
  }
  options_.events->OnNotice(
      "optimizations.tensor_fusion_threshold auto: nothing to tune at 1 slot, where no gradient "
      "is exchanged");
}

absl::Status TrialRunner::BeforeExchangedBatch() {
  if (!fusion_tuner_) return absl::OkStatus();
  GradientExchange& exchange = *options_.exchange;
  if (!fusion_started_ && reporter()) {
    const std::vector<BucketLimits>& candidates = fusion_tuner_->candidates();
    const std::string sizes =
        absl::StrJoin(candidates, ", ", [](std::string* out, const BucketLimits& limits) {
          absl::StrAppend(out, BucketBytesText(limits.bucket_bytes));
        });
    options_.events->OnNotice(
        candidates.size() == 1
            ? absl::StrCat("optimizations.tensor_fusion_threshold auto: one bucket size (",
                           BucketBytesText(candidates[0].bucket_bytes),
                           ") cuts this model's gradient; nothing to compare")
        : fusion_tuner_->tuning()
            ? absl::StrCat("optimizations.tensor_fusion_threshold auto: comparing ",
                           candidates.size(), " bucket sizes (", sizes, ") over ", kTuningBatches,
                           " exchanged batches each", TooFewToTune(candidates.size()))
            : absl::StrCat("optimizations.tensor_fusion_threshold auto: ",
                           BucketBytesText(fusion_tuner_->current().bucket_bytes),
                           " buckets, as the checkpoint kept"));
  }
  // The attempt's first exchanged batch cuts by the tuner's candidate (or kept size); later ones
  // change it only in AfterExchangedBatch, and once tuning is over nothing is timed.
  if (!fusion_started_ && exchange.bucket_limits() != fusion_tuner_->current()) {
    if (absl::Status cut = exchange.SetBucketLimits(fusion_tuner_->current()); !cut.ok()) {
      return cut;
    }
  }
  fusion_started_ = true;
  if (fusion_tuner_->tuning()) exchanged_batch_began_ = options_.clock->MonotonicSeconds();
  return absl::OkStatus();
}

absl::Status TrialRunner::AfterExchangedBatch() {
  if (!fusion_tuner_ || !fusion_tuner_->tuning()) return absl::OkStatus();
  const double seconds = options_.clock->MonotonicSeconds() - exchanged_batch_began_;
  const FusionTuner::Step step = fusion_tuner_->Record(seconds);
  if (step == FusionTuner::Step::kSame) return absl::OkStatus();
  if (step == FusionTuner::Step::kNextCandidate) {
    return options_.exchange->SetBucketLimits(fusion_tuner_->current());
  }
  absl::StatusOr<std::vector<double>> agreed = AgreedFusionSeconds();
  if (!agreed.ok()) return agreed.status();
  fusion_tuner_->Decide(*agreed);
  // Every rank says what it keeps: the lines agree, or the ranks' buckets would not.
  options_.events->OnNotice(
      absl::StrCat("optimizations.tensor_fusion_threshold auto: keeps ",
                   BucketBytesText(fusion_tuner_->current().bucket_bytes),
                   " buckets; median time of an exchanged batch",
                   Slots() == 1 ? "" : absl::StrCat(", averaged over ", Slots(), " ranks"), ": ",
                   fusion_tuner_->Describe(*agreed)));
  return options_.exchange->SetBucketLimits(fusion_tuner_->current());
}

absl::StatusOr<std::vector<double>> TrialRunner::AgreedFusionSeconds() {
  const std::vector<double>& mine = fusion_tuner_->medians();
  if (!multi_rank()) return mine;
  const uint32_t ranks = Slots();
  std::vector<double> all(mine.size() * ranks);
  CollectiveTagScope tag({.purpose = CollectivePurpose::kFusionTuning,
                          .batch = static_cast<int64_t>(progress_.batches_trained)});
  if (absl::Status status =
          options_.collective->Allgather(mine.data(), mine.size() * sizeof(double), all.data());
      !status.ok()) {
    return InCollective(status, "agreeing on a bucket size", progress_.batches_trained + 1);
  }
  std::vector<double> average(mine.size(), 0);
  for (uint32_t rank = 0; rank < ranks; ++rank) {
    for (size_t i = 0; i < mine.size(); ++i) average[i] += all[rank * mine.size() + i];
  }
  for (double& seconds : average) seconds /= ranks;
  return average;
}

absl::Status TrialRunner::ClearGradientsAfterEvaluation() {
  // Evaluation comes between windows, where the gradients are zero, so this changes nothing for
  // a plugin that keeps the rule.
  if (batches_since_step_ != 0) return absl::OkStatus();
  return options_.model->arena().ZeroGradients();
}

}  // namespace cohort
