// TrialSchedule: an experiment config's lengths and periods, converted to training batches.
//
// records -> ceil(records / records per batch); epochs -> ceil(epochs * records_per_epoch /
// records per batch), where records_per_epoch is the config's or, when it gives none, the
// plugin's training dataset size, and a batch holds the records its slots train (RecordsPerBatch:
// global_batch_size less the remainder the slots drop), so an epoch trains every record of one. A
// period of 0 means "only at the end".
//
//   auto schedule = MakeTrialSchedule(config, /*training_records=*/60000);
//   if (schedule->ValidationDue(batches_before_step, batches)) ...
#ifndef COHORT_RUNTIME_CONFIG_TRIAL_SCHEDULE_H_
#define COHORT_RUNTIME_CONFIG_TRIAL_SCHEDULE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/config/experiment_config.h"

namespace cohort {

struct TrialSchedule {
  uint64_t total_batches = 0;      // searcher.max_length
  uint64_t validation_period = 0;  // min_validation_period
  uint64_t checkpoint_period = 0;  // min_checkpoint_period
  uint64_t report_period = 0;      // scheduling_unit: training metrics are reported this often
  uint32_t aggregation_frequency = 1;
  bool initial_validation = false;

  // Whether something falls due when training goes from `before` to `after` batches (one
  // optimizer step's worth): a multiple of its period lies in (before, after], or the training
  // ends at `after`. With aggregation_frequency k, an event whose period is not a multiple of k
  // happens at the first step after it falls due.
  bool ValidationDue(uint64_t before, uint64_t after) const {
    return Due(before, after, validation_period);
  }
  bool CheckpointDue(uint64_t before, uint64_t after) const {
    return Due(before, after, checkpoint_period);
  }
  bool ReportDue(uint64_t before, uint64_t after) const {
    return Due(before, after, report_period);
  }
  // Whether the optimizer steps after `batches` batches.
  bool StepDue(uint64_t batches) const {
    return batches == total_batches || batches % aggregation_frequency == 0;
  }
  // How many optimizer steps (exchanged batches, at several slots) come after `batches` batches,
  // to the end of training.
  uint64_t StepsAfter(uint64_t batches) const {
    if (batches >= total_batches) return 0;
    return total_batches / aggregation_frequency - batches / aggregation_frequency +
           (total_batches % aggregation_frequency != 0 ? 1 : 0);
  }

 private:
  bool Due(uint64_t before, uint64_t after, uint64_t period) const {
    return after == total_batches || (period != 0 && after / period > before / period);
  }
};

// INVALID_ARGUMENT when a length comes to zero batches (naming the config field).
absl::StatusOr<TrialSchedule> MakeTrialSchedule(const ExperimentConfig& config,
                                                uint64_t training_records);

// What `schedule`'s aggregation window does to its lengths, to be said at submission: a length
// that is no multiple of aggregation_frequency ends on a step over the batches left (and a run
// resumed later to a longer length trains otherwise than one run to it), and a period that is no
// multiple falls at the end of the window it falls in. Empty at aggregation_frequency 1.
// `length_key` names the length (MaxLengthKey).
std::vector<std::string> AggregationWindowNotes(const TrialSchedule& schedule,
                                                absl::string_view length_key);

// With records_per_epoch given and below the records of one batch, and a length or period in
// epochs: a line saying that an epoch rounds up to a whole batch, training more records than it
// holds ("records_per_epoch 10 is fewer than one batch trains (32 records): lengths in epochs
// (searcher.max_length) count epochs times 10 records, rounded up to whole batches of 32, so 1
// epoch trains 32 records"); nullopt otherwise.
std::optional<std::string> ShortEpochNote(const ExperimentConfig& config);

// The most batches a trial trains: about nine years at a microsecond per batch.
inline constexpr uint64_t kMaxTrialBatches = uint64_t{1} << 48;

// The records one batch trains: each of the `slots` trains global_batch_size / slots, the rest
// of the global batch dropped (33 at 2 slots: 32). The same at every slot count a trial may go on
// at (CheckSlotChange keeps it), so a length in records comes to the same batches at each.
inline uint64_t RecordsPerBatch(uint64_t global_batch_size, uint32_t slots) {
  return slots <= 1 || global_batch_size < slots ? global_batch_size
                                                 : global_batch_size / slots * slots;
}

// A length in batches of `records_per_batch` (RecordsPerBatch), as above; a length whose records
// or batches do not fit 64 bits comes to UINT64_MAX (more than kMaxTrialBatches), never wrapping
// to a small number.
uint64_t LengthInBatches(const Length& length, uint64_t records_per_batch,
                         uint64_t records_per_epoch);

// INVALID_ARGUMENT naming `field` when `batches` (the length's) is 0 or over kMaxTrialBatches.
absl::Status CheckTrialLength(const char* field, const Length& length, uint64_t batches);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONFIG_TRIAL_SCHEDULE_H_
