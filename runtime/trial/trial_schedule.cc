#include "runtime/trial/trial_schedule.h"

#include "absl/strings/str_cat.h"

namespace cohort {

uint64_t LengthInBatches(const Length& length, uint64_t global_batch_size,
                         uint64_t records_per_epoch) {
  auto batches_for = [&](uint64_t records) {
    return (records + global_batch_size - 1) / global_batch_size;
  };
  switch (length.unit) {
    case LengthUnit::kBatches:
      return length.value;
    case LengthUnit::kRecords:
      return batches_for(length.value);
    case LengthUnit::kEpochs:
      return batches_for(length.value * records_per_epoch);
  }
  return 0;
}

absl::StatusOr<TrialSchedule> MakeTrialSchedule(const ExperimentConfig& config,
                                                uint64_t training_records) {
  const uint64_t records_per_epoch = config.records_per_epoch.value_or(training_records);
  const uint64_t global = config.global_batch_size;
  TrialSchedule schedule;
  schedule.total_batches = LengthInBatches(config.searcher.max_length, global, records_per_epoch);
  if (schedule.total_batches == 0) {
    return absl::InvalidArgumentError(absl::StrCat("searcher.max_length: ",
                                                   DescribeLength(config.searcher.max_length),
                                                   " is less than one batch"));
  }
  if (config.min_validation_period) {
    schedule.validation_period =
        LengthInBatches(*config.min_validation_period, global, records_per_epoch);
  }
  if (config.min_checkpoint_period) {
    schedule.checkpoint_period =
        LengthInBatches(*config.min_checkpoint_period, global, records_per_epoch);
  }
  schedule.report_period = config.scheduling_unit;
  schedule.aggregation_frequency = config.optimizations.aggregation_frequency;
  schedule.initial_validation = config.perform_initial_validation;
  return schedule;
}

}  // namespace cohort
