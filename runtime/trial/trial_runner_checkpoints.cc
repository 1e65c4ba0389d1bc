// TrialRunner's checkpoints: writing one whole (rank 0 writes what every rank holds, with every
// rank's compression state gathered; in the background with checkpoint_storage.async), and
// restoring one after checking it belongs to this trial and its settings, or the newest whole one
// before a damaged one.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/arena/block_staging.h"
#include "runtime/checkpoint/checkpoint_names.h"
#include "runtime/collective/recorded_collective.h"
#include "runtime/trial/trial_runner.h"

namespace cohort {

absl::Status TrialRunner::Restore(const std::string& checkpoint_id) {
  absl::StatusOr<cohort::Checkpoint> checkpoint = options_.storage->Read(checkpoint_id);
  if (!checkpoint.ok()) return checkpoint.status();
  return RestoreFrom(*checkpoint);
}

absl::StatusOr<std::vector<std::string>> TrialRunner::RestoreNewestWhole(
    const std::string& checkpoint_id) {
  std::vector<std::string> warnings;
  const auto pass_over = [&warnings](const std::string& id, const absl::Status& damage) {
    warnings.push_back(
        absl::StrCat("checkpoint ", id, " is damaged (", damage.message(), "): passed over"));
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
    return refuse(
        absl::StrCat("it belongs to trial ", info.trial_id, ", not trial ", options_.trial_id));
  }
  if (info.config_fingerprint != fingerprint_) {
    // The same settings at another slot count go on when CheckSlotChange allows it: the data
    // order does not depend on the slots, and every slot holds the whole state.
    ExperimentConfig then = *options_.config;
    then.slots_per_trial = info.slots;
    const bool only_slots = info.slots != 0 && info.slots != Slots() &&
                            TrainingFingerprint(then) == info.config_fingerprint;
    if (!only_slots) {
      return refuse(absl::StrCat(
          "it was trained with other settings (fingerprint ", info.config_fingerprint, ", now ",
          fingerprint_, "); hyperparameters, seed, slots and optimizations must stay the same"));
    }
    // It refuses the compressions that keep per-slot state (a "compression" file).
    if (absl::Status slots = CheckSlotChange(then, *options_.config); !slots.ok()) {
      return refuse(slots.message());
    }
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
  return absl::OkStatus();
}

absl::StatusOr<std::string> TrialRunner::GatherCompressionState() {
  if (options_.exchange == nullptr) return std::string();
  absl::StatusOr<std::string> own = options_.exchange->SaveCompressionState();
  if (!own.ok() || own->empty() || !multi_rank()) return own;
  // Every rank's state has the same size: the same form over the same plan.
  std::string all(own->size() * options_.collective->size(), '\0');
  CollectiveTagScope tag({.purpose = CollectivePurpose::kCheckpoint,
                          .batch = static_cast<int64_t>(progress_.batches_trained) - 1});
  if (absl::Status status = options_.collective->Allgather(own->data(), own->size(), all.data());
      !status.ok()) {
    return InCollective(status, "gathering the compression state", progress_.batches_trained);
  }
  return all;
}

OptimizerState::PieceMover TrialRunner::OptimizerPieceMover() {
  return [this](const void* piece, uint64_t bytes, void* slots) -> absl::Status {
    CollectiveTagScope tag({.purpose = CollectivePurpose::kCheckpoint,
                            .batch = static_cast<int64_t>(progress_.batches_trained) - 1});
    if (absl::Status status = options_.collective->Gather(piece, bytes, slots, /*root=*/0);
        !status.ok()) {
      return InCollective(status, "gathering the optimizer's shards", progress_.batches_trained);
    }
    return absl::OkStatus();
  };
}

absl::Status TrialRunner::RestoreExchangeState(const std::map<std::string, std::string>& files) {
  if (options_.exchange == nullptr) return absl::OkStatus();
  // The bucket size tensor_fusion_threshold auto kept, before the cut along the order (the
  // compression state below is the cut's).
  if (auto limits = files.find("bucket_limits"); limits != files.end() && fusion_tuner_) {
    absl::StatusOr<BucketLimits> kept = ParseBucketLimits(limits->second);
    if (!kept.ok()) return kept.status();
    // Cut as the checkpoint was, for its compression state; but a size above the threshold now in
    // force (lowered since) is compared again from the first candidate.
    if (absl::Status cut = options_.exchange->SetBucketLimits(*kept); !cut.ok()) return cut;
    const uint32_t threshold = options_.config->optimizations.tensor_fusion_threshold;
    if (!fusion_tuner_->Adopt(*kept, uint64_t{threshold} << 20) && reporter()) {
      options_.events->OnNotice(
          absl::StrCat("optimizations.tensor_fusion_threshold auto: the checkpoint kept ",
                       BucketBytesText(kept->bucket_bytes), " buckets, above the threshold of ",
                       threshold, " MB now; comparing again"));
    }
  }
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
  const uint32_t ranks = Slots();
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
  const bool sharded = options_.optimizer != nullptr && !options_.optimizer->shard().whole();
  const OptimizerState::PieceMover move = OptimizerPieceMover();
  // At most one write in flight: this checkpoint waits for the one before it (the other ranks'
  // part in it, a gather of shards, is waited for by ShardGather::Capture).
  if (absl::Status status = CollectCheckpointWrite(/*wait=*/true); !status.ok()) return status;
  if (!reporter()) {
    // Every rank holds the same parameters and state, but for a sharded optimizer's, whose pieces
    // go to rank 0 (in the background, or gathered here while rank 0 captures); rank 0 writes.
    if (shard_gather_) {
      if (absl::Status captured =
              shard_gather_->Capture(*options_.optimizer, progress_.batches_trained, nullptr);
          !captured.ok()) {
        return captured;
      }
      shard_gather_->Start();
    } else if (sharded) {
      if (absl::Status moved = options_.optimizer->SaveWholeStateInto(move, nullptr, false);
          !moved.ok()) {
        return moved;
      }
    }
    last_checkpoint_batches_ = progress_.batches_trained;
    checkpoint_after_validation_ = false;
    return absl::OkStatus();
  }
  // The copy in host memory that the writer owns from here (training may change the arena), in
  // the buffers of the checkpoint before. A sharded optimizer's file is assembled there, or, with
  // shard_gather_, by the writer's thread before it writes.
  std::map<std::string, std::string> spare = std::exchange(spare_files_, {});
  // Written in the background, a device's tensors go through page-locked memory: the copy that
  // training waits for is the device's fastest, and the rest is the writer's.
  StagedHostCopies* staged = options_.config->checkpoint_storage.async ? &staged_copies_ : nullptr;
  staged_copies_.Discard();  // a capture that failed half way may have left some
  std::string gathered_optimizer;
  if (shard_gather_) {
    if (auto old = spare.find("optimizer"); old != spare.end()) {
      gathered_optimizer = std::move(old->second);
    }
    if (absl::Status captured = shard_gather_->Capture(
            *options_.optimizer, progress_.batches_trained, &gathered_optimizer);
        !captured.ok()) {
      return captured;
    }
  }
  absl::StatusOr<std::map<std::string, std::string>> files = CaptureTrialState(
      *options_.model, shard_gather_ ? nullptr : options_.optimizer, progress_, std::move(spare),
      /*unsealed=*/true, &move, staged);
  if (!files.ok()) return files.status();
  NoticePinningError();
  if (shard_gather_) {
    // Its memory, where staged copies land, moves with it (never a short string: a header first).
    files->emplace("optimizer", std::move(gathered_optimizer));
  }
  // On the writer's thread: the staged copies land, then the optimizer's file is finished.
  CheckpointWriter::Prepare finish =
      [staged, gather = shard_gather_.get()](std::map<std::string, std::string>& files) {
        if (staged != nullptr) staged->Land();
        if (gather != nullptr) return gather->AssembleInto(files.at("optimizer"), /*sealed=*/true);
        SealTrialState(files);
        return absl::OkStatus();
      };
  if (!compression->empty()) files->emplace("compression", *std::move(compression));
  if (options_.exchange != nullptr && options_.exchange->ready_order()) {
    files->emplace("ready_order", ReadyOrderText(*options_.exchange->ready_order()));
  }
  if (fusion_tuner_ && !fusion_tuner_->tuning()) {
    files->emplace("bucket_limits", BucketLimitsText(fusion_tuner_->current()));
  }
  CheckpointInfo info;
  info.id = CheckpointId(options_.trial_id, progress_.batches_trained);
  info.trial_id = options_.trial_id;
  info.batches_trained = progress_.batches_trained;
  info.records_trained = progress_.records_trained;
  info.config_fingerprint = fingerprint_;
  info.slots = Slots();
  info.abi_major = options_.model->plugin().abi_version().major;
  info.abi_minor = options_.model->plugin().abi_version().minor;
  info.created_unix_ms = static_cast<int64_t>(options_.clock->UnixSeconds() * 1000);
  writer_->Start(std::move(info), *std::move(files), std::move(finish));
  last_checkpoint_batches_ = progress_.batches_trained;
  checkpoint_after_validation_ = false;
  if (options_.config->checkpoint_storage.async) return absl::OkStatus();
  return CollectCheckpointWrite(/*wait=*/true);
}

void TrialRunner::ReserveStagingMemory() {
  if (!options_.config->checkpoint_storage.async) return;
  DeviceMemory* device = nullptr;
  size_t bytes = 0;
  size_t copies = 0;
  const auto add = [&](const TensorArena& arena) {
    for (const ArenaBlock& block : arena.blocks()) {
      if (OnHost(block)) continue;
      device = block.memory;
      bytes += BlockBytes(block);
      ++copies;
    }
  };
  add(options_.model->arena());
  if (options_.model->state_arena() != nullptr) add(*options_.model->state_arena());
  if (device == nullptr) return;  // nothing is staged
  size_t state_bytes = 0;
  size_t state_copies = 0;
  if (options_.optimizer != nullptr) {
    state_bytes = options_.optimizer->state_bytes();
    state_copies = 2 * options_.model->arena().blocks().size();  // at most Adam's two per block
  }
  // A sharded optimizer's pieces go through the gather's own.
  if (shard_gather_) {
    shard_gather_->Reserve(*device, StagedHostCopies::BytesFor(state_bytes, state_copies));
  } else {
    bytes += state_bytes;
    copies += state_copies;
  }
  if (reporter()) staged_copies_.Reserve(*device, StagedHostCopies::BytesFor(bytes, copies));
}

void TrialRunner::NoticePinningError() {
  if (staged_copies_.pinning_error().ok() || std::exchange(told_of_pinning_error_, true)) return;
  options_.events->OnNotice(absl::StrCat(
      "warning: checkpoints copy the device's tensors through pageable host memory, slower: ",
      staged_copies_.pinning_error().message()));
}

absl::Status TrialRunner::CollectCheckpointWrite(bool wait) {
  if (writer_ == nullptr) return absl::OkStatus();
  std::optional<WrittenCheckpoint> written = wait ? writer_->Wait() : writer_->TakeIfDone();
  if (!written) return absl::OkStatus();
  const CheckpointInfo& info = written->info;
  if (options_.trace != nullptr) {
    options_.trace->Complete(TraceWriter::kCheckpointThread, absl::StrCat("writing ", info.id),
                             written->begin, written->end, info.batches_trained);
  }
  checkpoint_write_seconds_ += written->end - written->begin;
  spare_files_ = std::move(written->files);
  if (!written->status.ok()) return written->status;
  options_.events->OnCheckpoint(CheckpointReport{options_.trial_id, info.id, info.batches_trained,
                                                 info.records_trained, written->bytes});
  return absl::OkStatus();
}

}  // namespace cohort
