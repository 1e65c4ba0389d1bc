#include "runtime/trial/shard_gather.h"

#include <memory>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/base/collective_failure.h"
#include "runtime/collective/recorded_collective.h"

namespace cohort {

ShardGather::~ShardGather() { Wait().IgnoreError(); }

absl::Status ShardGather::Capture(const Optimizer& optimizer, uint64_t batches_trained,
                                  std::string* whole) {
  if (absl::Status before = Wait(); !before.ok()) return before;
  batches_trained_ = batches_trained;
  staged_.Discard();  // a capture that failed half way may have left some
  if (whole == nullptr) return optimizer.CopyShardStateInto(copy_, &staged_);
  optimizer_ = &optimizer;
  return optimizer.LayOutWholeStateInto(*whole, &staged_);
}

absl::Status ShardGather::Gather(
    const std::function<absl::Status(const OptimizerState::PieceMover&)>& part) {
  // The collectives belong to the checkpoint after the batch trained last.
  CollectiveTagScope tag({.purpose = CollectivePurpose::kCheckpoint,
                          .batch = static_cast<int64_t>(batches_trained_) - 1});
  const OptimizerState::PieceMover move = [this](const void* piece, uint64_t bytes, void* slots) {
    return group_.Gather(piece, bytes, slots, /*root=*/0);
  };
  absl::Status gathered = part(move);
  if (gathered.ok()) return gathered;
  return absl::Status(gathered.code(),
                      absl::StrCat("batch ", batches_trained_,
                                   ", gathering the optimizer's shards for a checkpoint in the "
                                   "background: ",
                                   gathered.message()));
}

absl::Status ShardGather::AssembleInto(std::string& whole, bool sealed) {
  if (optimizer_ == nullptr) return absl::FailedPreconditionError("no checkpoint laid out");
  staged_.Land();  // this rank's pieces, before the others' arrive around them
  return Gather([&](const OptimizerState::PieceMover& move) {
    return optimizer_->ReceiveWholeStateInto(move, whole, sealed);
  });
}

void ShardGather::Start() {
  auto job = std::make_shared<std::packaged_task<absl::Status()>>([this] {
    return Gather([this](const OptimizerState::PieceMover& move) {
      if (!copy_) return absl::FailedPreconditionError("no shard of the optimizer state copied");
      staged_.Land();
      return copy_->SendPieces(move);
    });
  });
  in_flight_ = job->get_future();
  try {
    thread_ = std::thread([job] { (*job)(); });
  } catch (const std::system_error&) {
    (*job)();  // no thread to be had: the pieces travel here and now instead
  }
}

absl::Status ShardGather::Wait() {
  if (!in_flight_.valid()) return absl::OkStatus();
  absl::Status gathered = in_flight_.get();
  if (thread_.joinable()) thread_.join();
  // The gather waits on every rank: a peer gone is often another's failure.
  return gathered.ok() ? gathered : CollectiveFailure(gathered, gathered.message());
}

}  // namespace cohort
