// TrialState: what a trial writes into a checkpoint besides the manifest, and how it comes back.
//
// Files: "tensors" (the arena layout, one "name dtype elements" line per tensor, checked on
// restore), "parameters" (every arena block's values, in block order), "state" (the same for the
// state tensors of SDK 1.4, when the model registered any), "optimizer" (the built-in
// optimizer's state, when the runtime steps), "progress" (batches and records trained, the trial
// seed that drives the sampler, the plugin optimizer's step count, the best searcher metric so
// far) and "plugin_state" (the
// plugin's own bytes, when it keeps any). TrialRunner adds "compression" (every rank's
// gradient-compression state, rank after rank, when the exchange keeps any) and "ready_order"
// (the order the exchange's buckets follow, once it has one) and "bucket_limits" (the bucket size
// optimizations.tensor_fusion_threshold auto kept, once it has chosen). Together they let a trial
// continue bit for bit.
//
// Gradients are not saved: checkpoints are only taken right after an optimizer step, when every
// gradient is zero.
#ifndef COHORT_RUNTIME_TRIAL_TRIAL_STATE_H_
#define COHORT_RUNTIME_TRIAL_TRIAL_STATE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/arena/staged_host_copies.h"
#include "runtime/optim/optimizer.h"
#include "runtime/plugin/loaded_model.h"

namespace cohort {

struct TrialProgress {
  uint64_t batches_trained = 0;
  uint64_t records_trained = 0;
  uint64_t trial_seed = 0;
  uint64_t optimizer_steps = 0;  // steps taken (built-in or the plugin's)
  // The best searcher metric validated so far, which checkpoint_policy "best" compares with;
  // none before the first validation (and in checkpoints written before it was kept).
  std::optional<double> best_metric;
};

// The arena's tensors, one "name dtype elements device" line each, then the state arena's (when
// given), each line ending in " state": two models with the same text have the same layout.
std::string TensorLayout(const TensorArena& arena, const TensorArena* state = nullptr);

// `optimizer` is nullptr when the plugin steps itself. Blocks in device memory are read (and, by
// RestoreTrialState, written) through host copies, so a checkpoint holds the same bytes wherever
// the tensors live. The large files are written into `spare`'s buffers of the same names (an
// earlier capture's files) when given: a model captured again then touches no new memory, where
// fresh buffers cost a page fault per page. With `unsealed`, the optimizer file lacks its checksum
// until SealTrialState adds it (reading every byte of the optimizer state, the slowest part of a
// capture, is left to the thread that writes the checkpoint). A sharded optimizer (ZeRO) is saved
// whole through `move`, which brings each rank's pieces here while every other rank of the shard
// calls Optimizer::SaveWholeStateInto with no output (see OptimizerState::GatherWholeInto).
// With `staged` (and `unsealed`), the copies out of device memory of the parameters, the state
// and a whole optimizer's buffers go through it: the files are complete once it has landed them.
// Until then the map may be moved whole, but no file taken out of it (a short string's bytes
// would move with it).
absl::StatusOr<std::map<std::string, std::string>> CaptureTrialState(
    LoadedModel& model, const Optimizer* optimizer, const TrialProgress& progress,
    std::map<std::string, std::string> spare = {}, bool unsealed = false,
    const OptimizerState::PieceMover* move = nullptr, StagedHostCopies* staged = nullptr);

// Finishes what CaptureTrialState captured with `unsealed`.
void SealTrialState(std::map<std::string, std::string>& files);

// Restores parameters, optimizer and plugin state; returns the progress. FAILED_PRECONDITION when
// the checkpoint was written for a different tensor layout or optimizer (naming the difference),
// DATA_LOSS when a file is missing or malformed. Everything is checked before anything changes,
// except the plugin's own state: when the plugin refuses it, the optimizer state has already been
// replaced, and the caller should discard the model (a trial does: the error ends it).
absl::StatusOr<TrialProgress> RestoreTrialState(const std::map<std::string, std::string>& files,
                                                LoadedModel& model, Optimizer* optimizer);

// The "ready_order" file (GradientExchange::ready_order): the tensor indices, first completed
// first, in decimal, separated by spaces, on one line. ParseReadyOrder takes what ReadyOrderText
// writes and nothing else (DATA_LOSS naming the file).
std::string ReadyOrderText(const std::vector<uint32_t>& order);
absl::StatusOr<std::vector<uint32_t>> ParseReadyOrder(absl::string_view text);

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_TRIAL_STATE_H_
