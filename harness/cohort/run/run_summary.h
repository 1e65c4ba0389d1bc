// The summary `cohort run` prints on stdout when its experiment has ended:
//
//   experiment mlp: COMPLETED after 18750 of 18750 batches
//     best validation (after 17500 batches): loss=0.176353 accuracy=0.9298
//     checkpoint trial-1-batch-17500 (best)
//     checkpoint trial-1-batch-18750 (latest)
//     run folder: runs/mlp-20261122-101500
//
// The best checkpoint is the kept one with the best searcher metric (ExperimentRecord::
// BestCheckpoint); the latest is the one a resume goes on from. An experiment of several trials
// gets a line naming its best trial and that trial's best checkpoint, then a line per trial, each
// with its hyperparameters, best validation, error and checkpoints indented beneath.
//
// Thread-safety: writes to `out`; one caller at a time per stream.
#ifndef COHORT_HARNESS_COHORT_RUN_RUN_SUMMARY_H_
#define COHORT_HARNESS_COHORT_RUN_RUN_SUMMARY_H_

#include <cstdio>
#include <string>

#include "runtime/record/experiment_record.h"

namespace cohort {

void PrintRunSummary(const ExperimentRecord& record, const std::string& run_folder, std::FILE* out);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_RUN_SUMMARY_H_
