#include "runtime/config/trial_schedule.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cohort {

uint64_t LengthInBatches(const Length& length, uint64_t records_per_batch,
                         uint64_t records_per_epoch) {
  constexpr uint64_t kOverflow = std::numeric_limits<uint64_t>::max();
  auto batches_for = [&](uint64_t records) {
    return records / records_per_batch + (records % records_per_batch != 0 ? 1 : 0);
  };
  switch (length.unit) {
    case LengthUnit::kBatches:
      return length.value;
    case LengthUnit::kRecords:
      return batches_for(length.value);
    case LengthUnit::kEpochs: {
      uint64_t records = 0;
      if (__builtin_mul_overflow(length.value, records_per_epoch, &records)) return kOverflow;
      return batches_for(records);
    }
  }
  return 0;
}

absl::Status CheckTrialLength(const char* field, const Length& length, uint64_t batches) {
  if (batches == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", DescribeLength(length), " is less than one batch"));
  }
  if (batches > kMaxTrialBatches) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", DescribeLength(length),
                                                   " comes to more than ", kMaxTrialBatches,
                                                   " batches, the most a trial trains"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TrialSchedule> MakeTrialSchedule(const ExperimentConfig& config,
                                                uint64_t training_records) {
  const uint64_t records_per_epoch = config.records_per_epoch.value_or(training_records);
  const uint64_t records_per_batch =
      RecordsPerBatch(config.global_batch_size, config.slots_per_trial);
  TrialSchedule schedule;
  schedule.total_batches =
      LengthInBatches(config.searcher.max_length, records_per_batch, records_per_epoch);
  if (absl::Status s = CheckTrialLength(MaxLengthKey(config.searcher), config.searcher.max_length,
                                        schedule.total_batches);
      !s.ok()) {
    return s;
  }
  if (config.min_validation_period) {
    schedule.validation_period =
        LengthInBatches(*config.min_validation_period, records_per_batch, records_per_epoch);
  }
  if (config.min_checkpoint_period) {
    schedule.checkpoint_period =
        LengthInBatches(*config.min_checkpoint_period, records_per_batch, records_per_epoch);
  }
  schedule.report_period = config.scheduling_unit;
  schedule.aggregation_frequency = config.optimizations.aggregation_frequency;
  schedule.initial_validation = config.perform_initial_validation;
  return schedule;
}

std::vector<std::string> AggregationWindowNotes(const TrialSchedule& schedule,
                                                absl::string_view length_key) {
  const uint64_t window = schedule.aggregation_frequency;
  std::vector<std::string> notes;
  if (window <= 1) return notes;
  if (const uint64_t left = schedule.total_batches % window; left != 0) {
    notes.push_back(absl::StrCat(
        length_key, " comes to ", schedule.total_batches,
        " batches, not a multiple of optimizations.aggregation_frequency ", window,
        ": a trial's last optimizer step sums the ", left, left == 1 ? " batch" : " batches",
        " left, and a run resumed later "
        "to a longer length trains otherwise than one run to that length"));
  }
  const auto period_note = [&](const char* key, uint64_t period) {
    // A period that never falls due before the end moves nothing: the end is a step anyway.
    if (period == 0 || period % window == 0 || period >= schedule.total_batches) return;
    const uint64_t first = (period + window - 1) / window * window;
    notes.push_back(absl::StrCat(key, " comes to ", period,
                                 " batches, not a multiple of optimizations.aggregation_frequency ",
                                 window, ": each falls at the end of the window it falls due in "
                                 "(the first at batch ", first, ")"));
  };
  period_note("min_validation_period", schedule.validation_period);
  period_note("min_checkpoint_period", schedule.checkpoint_period);
  return notes;
}

std::optional<std::string> ShortEpochNote(const ExperimentConfig& config) {
  if (!config.records_per_epoch) return std::nullopt;
  const uint64_t per_batch = RecordsPerBatch(config.global_batch_size, config.slots_per_trial);
  if (*config.records_per_epoch >= per_batch) return std::nullopt;
  std::vector<std::string> in_epochs;
  const auto add = [&](const std::string& key, const std::optional<Length>& length) {
    if (length && length->unit == LengthUnit::kEpochs) in_epochs.push_back(key);
  };
  add(MaxLengthKey(config.searcher), config.searcher.max_length);
  add("min_validation_period", config.min_validation_period);
  add("min_checkpoint_period", config.min_checkpoint_period);
  if (in_epochs.empty()) return std::nullopt;
  return absl::StrCat("records_per_epoch ", *config.records_per_epoch,
                      " is fewer than one batch trains (", per_batch,
                      " records): lengths in epochs (", absl::StrJoin(in_epochs, ", "),
                      ") count epochs times ", *config.records_per_epoch,
                      " records, rounded up to whole batches of ", per_batch,
                      ", so 1 epoch trains ", per_batch, " records");
}

}  // namespace cohort
