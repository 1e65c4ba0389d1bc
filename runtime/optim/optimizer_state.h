// OptimizerState: what a built-in optimizer keeps between steps (its kind, the steps taken, and
// a fixed number of buffers per arena block: SGD's momentum, Adam's two moments), and the
// serialised form of all of it.
//
//   OptimizerState state(OptimizerOptions::Kind::kAdam, arena, /*buffers_per_block=*/2);
//   float* exp_avg = state.buffer<float>(/*block=*/0, /*index=*/0);
//   std::string bytes = state.Encode();
//   absl::Status s = other.Decode(bytes);   // same kind, buffer count and arena layout
//
// Each buffer has its block's dtype and element count, so it lines up element for element with
// the block's parameters. A sharded state (ZeRO, arena_shard.h) keeps each buffer for its
// shard's range of the block only (padded with zeros to ShardChunk elements); its saved form is
// still the whole state's, which GatherWholeInto assembles on one rank piece by piece as the ranks
// move their pieces to it, and Decode of a whole state keeps the shard's range: a checkpoint moves
// between sharded and whole optimizers and between slot counts.
//
// Serialised form, every integer and value little-endian:
//   8 bytes  magic "COHOPTST"
//   u32      format version (1)
//   u32      kind (0 sgd, 1 adam, 2 adamw)
//   u64      steps taken
//   u32      block count B
//   u32      buffers per block K
//   B times  { u32 dtype (COHORT_DTYPE_*), u64 element count N }
//   B times  K times  N values of the block's dtype (IEEE 754)
//   u64      FNV-1a 64 of every byte before it
//
// Thread-safety: const methods may be called concurrently; the rest need exclusive use.
#ifndef COHORT_RUNTIME_OPTIM_OPTIMIZER_STATE_H_
#define COHORT_RUNTIME_OPTIM_OPTIMIZER_STATE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/arena/arena_shard.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/optim/optimizer_options.h"

namespace cohort {

class OptimizerState {
 public:
  // Zeroed buffers mirroring the arena's blocks (the shard's range of each), which must all be
  // float32 or float64.
  OptimizerState(OptimizerOptions::Kind kind, const TensorArena& arena, size_t buffers_per_block,
                 ArenaShard shard = {});

  const ArenaShard& shard() const { return shard_; }
  // Bytes of the buffers this state keeps (its shard's ranges when sharded).
  uint64_t held_bytes() const;
  // The elements of block `block` this state keeps (all of them when whole).
  ElementRange range(size_t block) const { return ShardRange(block_sizes_[block], shard_); }

  uint64_t steps() const { return steps_; }
  void CountStep() { ++steps_; }
  void set_steps(uint64_t steps) { steps_ = steps; }

  // Buffer `index` (< buffers_per_block) of block `block`, from the first element of its range;
  // T must be the block's element type.
  template <class T>
  T* buffer(size_t block, size_t index) {
    return std::get<std::vector<T>>(buffers_[block * buffers_per_block_ + index]).data();
  }

  // The whole state's serialised form; empty for a sharded state, which holds only a part (Decode
  // refuses empty bytes).
  std::string Encode() const;
  // Encode into `out`, whose memory is reused where it is large enough (a checkpoint taken again
  // touches no new pages); without the trailing checksum when `sealed` is false (SealOptimizerState
  // adds it: it reads every byte, the slowest part).
  void EncodeInto(std::string& out, bool sealed = true) const;
  // Encode's bytes into `out` (its memory reused) for a whole state of `kind`, after `steps` steps,
  // over `arena`'s layout, whose buffers live elsewhere (in device memory): `fill(block, index,
  // dest)` writes buffer `index` of block `block`, the block's element count of its dtype in this
  // host's byte order, at `dest`, straight into the bytes, with no copy of the state in between.
  // On a little-endian host `fill` may leave the values to come later (a staged copy): `out`'s
  // memory does not move once filling starts. The first error of `fill`, `out` then unspecified.
  using BufferFill = std::function<absl::Status(size_t block, size_t index, char* dest)>;
  static absl::Status EncodeFilledInto(std::string& out, OptimizerOptions::Kind kind,
                                       uint64_t steps, const TensorArena& arena,
                                       size_t buffers_per_block, const BufferFill& fill,
                                       bool sealed = true);
  // A sharded state's part in assembling the whole one on the shard's rank 0; every rank of the
  // shard calls it at the same point. For each block and buffer, in order, every rank calls
  // `move(piece, bytes, slots)` once, a gather onto rank 0 (CollectiveBackend::Gather): `piece`
  // is this rank's piece of that buffer (ShardChunk elements, zero-padded; `bytes`, the same on
  // every rank), and `slots`, on rank 0 alone (nullptr on the others), is the buffer's place in
  // `whole`, where rank r's piece is to land at r * bytes; rank 0's `piece` is its own slot there,
  // already in place. Into `whole`, given on rank 0 only (the others pass nullptr;
  // INVALID_ARGUMENT elsewhere), the whole state's serialised form, as Encode's, is assembled in
  // place: the pieces land where they belong, so that rank holds no more than the whole state and
  // its own piece, and no other rank receives anything. The first error of `move`.
  using PieceMover = std::function<absl::Status(const void* piece, uint64_t bytes, void* slots)>;
  absl::Status GatherWholeInto(const PieceMover& move, std::string* whole,
                               bool sealed = true) const;
  // GatherWholeInto in its parts, so that the pieces may travel on another thread while the state
  // steps on. On the shard's rank 0: LayOutWholeInto writes Encode's bytes without the checksum,
  // this rank's pieces in place and zeros where the others' go (INVALID_ARGUMENT on another rank);
  // ReceivePiecesInto then moves the other ranks' pieces there (and adds the checksum when
  // `sealed`), reading nothing but the layout, which it takes from the state's arena
  // (INVALID_ARGUMENT for bytes not laid out for it). On every other rank: SendPieces, at the same
  // point.
  absl::Status LayOutWholeInto(std::string& whole) const;
  // LayOutWholeInto for rank 0 of `shard` whose buffers live elsewhere (in device memory), as
  // EncodeFilledInto: `fill(block, index, dest)` writes rank 0's range of the buffer at `dest`, in
  // this host's byte order (or later, staged: `whole`'s memory does not move once filling starts).
  static absl::Status LayOutFilledInto(std::string& whole, OptimizerOptions::Kind kind,
                                       uint64_t steps, const TensorArena& arena,
                                       size_t buffers_per_block, ArenaShard shard,
                                       const BufferFill& fill);
  static absl::Status ReceivePiecesInto(const TensorArena& arena, size_t buffers_per_block,
                                        ArenaShard shard, const PieceMover& move,
                                        std::string& whole, bool sealed);
  absl::Status SendPieces(const PieceMover& move) const;
  // Replaces steps and buffers with those in `bytes` (a whole state, from Encode), keeping the
  // shard's range of each buffer. INVALID_ARGUMENT, leaving this state unchanged, when the bytes
  // are truncated or corrupt, come from another kind, hold another number of buffers per block, or
  // mirror another layout; the message names what differs.
  absl::Status Decode(absl::string_view bytes);

 private:
  using Buffer = std::variant<std::vector<float>, std::vector<double>>;

  OptimizerOptions::Kind kind_;
  uint64_t steps_ = 0;
  size_t buffers_per_block_;
  std::vector<cohort_dtype> block_dtypes_;
  // The serialised form up to the buffers: magic, version, kind, steps, block table.
  void EncodeHeaderInto(std::string& out) const;

  ArenaShard shard_;
  std::vector<uint64_t> block_sizes_;  // elements per block
  std::vector<Buffer> buffers_;        // block-major: buffers_[block * buffers_per_block_ + index]
};

// Appends the checksum that OptimizerState::EncodeInto(out, /*sealed=*/false) left off: the bytes
// become Encode's.
void SealOptimizerState(std::string& unsealed);

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_OPTIMIZER_STATE_H_
