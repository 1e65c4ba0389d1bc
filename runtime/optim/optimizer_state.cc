#include "runtime/optim/optimizer_state.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/arena/dtype.h"
#include "runtime/arena/host_buffer.h"
#include "runtime/base/fnv1a.h"
#include "runtime/optim/little_endian.h"

namespace cohort {
namespace {

using Kind = OptimizerOptions::Kind;

constexpr absl::string_view kMagic = "COHOPTST";
constexpr uint32_t kVersion = 1;
constexpr size_t kChecksumSize = sizeof(uint64_t);

// The kind's number in the serialised form; fixed forever, whatever the enum's order.
uint32_t KindCode(Kind kind) {
  switch (kind) {
    case Kind::kSgd:
      return 0;
    case Kind::kAdam:
      return 1;
    case Kind::kAdamW:
      return 2;
  }
  return 0xffffffff;
}

std::string KindCodeName(uint32_t code) {
  for (Kind kind : {Kind::kSgd, Kind::kAdam, Kind::kAdamW}) {
    if (KindCode(kind) == code) return std::string(OptimizerKindName(kind));
  }
  return absl::StrCat("an unknown kind (", code, ")");
}

// The serialised form up to the buffers: magic, version, kind, steps, block table.
void EncodeHeader(std::string& out, Kind kind, uint64_t steps,
                  const std::vector<cohort_dtype>& dtypes, const std::vector<uint64_t>& sizes,
                  size_t buffers_per_block) {
  out.append(kMagic.data(), kMagic.size());
  AppendLittleEndian(out, kVersion);
  AppendLittleEndian(out, KindCode(kind));
  AppendLittleEndian(out, steps);
  AppendLittleEndian(out, static_cast<uint32_t>(dtypes.size()));
  AppendLittleEndian(out, static_cast<uint32_t>(buffers_per_block));
  for (size_t b = 0; b < dtypes.size(); ++b) {
    AppendLittleEndian(out, static_cast<uint32_t>(dtypes[b]));
    AppendLittleEndian(out, sizes[b]);
  }
}

// The dtypes and element counts of an arena's blocks, in block order: a state's layout.
struct BlockLayout {
  std::vector<cohort_dtype> dtypes;
  std::vector<uint64_t> sizes;
};
BlockLayout LayoutOf(const TensorArena& arena) {
  BlockLayout layout;
  for (const ArenaBlock& block : arena.blocks()) {
    layout.dtypes.push_back(block.dtype);
    layout.sizes.push_back(block.element_count);
  }
  return layout;
}

// Bytes of EncodeHeader's part for `blocks` blocks.
size_t HeaderBytes(size_t blocks) {
  return kMagic.size() + 4 * sizeof(uint32_t) + sizeof(uint64_t) +
         blocks * (sizeof(uint32_t) + sizeof(uint64_t));
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("optimizer state ", what));
}

std::string DescribeBlock(cohort_dtype dtype, uint64_t elements) {
  return absl::StrCat(DtypeName(dtype), " with ", elements, " elements");
}

}  // namespace

OptimizerState::OptimizerState(Kind kind, const TensorArena& arena, size_t buffers_per_block,
                               ArenaShard shard)
    : kind_(kind), buffers_per_block_(buffers_per_block), shard_(shard) {
  for (const ArenaBlock& block : arena.blocks()) {
    block_dtypes_.push_back(block.dtype);
    block_sizes_.push_back(block.element_count);
    // A shard's buffers are ShardChunk long, the tail past its range zero: the piece it moves
    // (whole: the block's length).
    const uint64_t length = ShardChunk(block.element_count, shard.size);
    for (size_t i = 0; i < buffers_per_block; ++i) {
      if (block.dtype == COHORT_DTYPE_FLOAT64) {
        buffers_.emplace_back(std::vector<double>(length, 0.0));
      } else {
        buffers_.emplace_back(std::vector<float>(length, 0.0f));
      }
    }
  }
}

std::string OptimizerState::Encode() const {
  std::string out;
  EncodeInto(out);
  return out;
}

void OptimizerState::EncodeHeaderInto(std::string& out) const {
  EncodeHeader(out, kind_, steps_, block_dtypes_, block_sizes_, buffers_per_block_);
}

namespace {

// Bytes of the whole form of a state of this layout, checksum included.
uint64_t WholeBytes(const std::vector<cohort_dtype>& dtypes, const std::vector<uint64_t>& sizes,
                    size_t buffers_per_block) {
  uint64_t bytes = HeaderBytes(dtypes.size()) + kChecksumSize;
  for (size_t b = 0; b < dtypes.size(); ++b) {
    bytes += sizes[b] * *DtypeSize(dtypes[b]) * buffers_per_block;
  }
  return bytes;
}

// The whole state's bytes of this layout without the checksum, as rank 0 of `shard` lays them out
// (LayOutWholeInto; a whole shard's are Encode's): the header, then each buffer's room, zeros but
// where `fill` writes rank 0's range of it. The memory of `whole` does not move once filling
// starts.
absl::Status LayOut(std::string& whole, Kind kind, uint64_t steps,
                    const std::vector<cohort_dtype>& dtypes, const std::vector<uint64_t>& sizes,
                    size_t buffers_per_block, ArenaShard shard,
                    const OptimizerState::BufferFill& fill) {
  if (shard.rank != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the whole optimizer state is assembled on the shard's rank 0, not on rank ", shard.rank));
  }
  uint64_t padding = 0;  // the most a buffer's last pieces reach past its end
  for (size_t b = 0; b < dtypes.size(); ++b) {
    padding = std::max(padding, (ShardChunk(sizes[b], shard.size) * shard.size - sizes[b]) *
                                    *DtypeSize(dtypes[b]));
  }
  whole.clear();
  ReserveHostBuffer(whole, WholeBytes(dtypes, sizes, buffers_per_block) + padding);
  EncodeHeader(whole, kind, steps, dtypes, sizes, buffers_per_block);
  for (size_t b = 0; b < dtypes.size(); ++b) {
    for (size_t i = 0; i < buffers_per_block; ++i) {
      const size_t start = whole.size();
      whole.resize(start + sizes[b] * *DtypeSize(dtypes[b]));
      if (absl::Status filled = fill(b, i, whole.data() + start); !filled.ok()) return filled;
    }
  }
  return absl::OkStatus();
}

}  // namespace

void OptimizerState::EncodeInto(std::string& out, bool sealed) const {
  out.clear();
  if (!shard_.whole()) return;
  ReserveHostBuffer(out, WholeBytes(block_dtypes_, block_sizes_, buffers_per_block_));
  EncodeHeaderInto(out);
  for (const Buffer& buffer : buffers_) {
    std::visit([&](const auto& values) { AppendLittleEndian(out, values.data(), values.size()); },
               buffer);
  }
  if (sealed) SealOptimizerState(out);
}

absl::Status OptimizerState::EncodeFilledInto(std::string& out, Kind kind, uint64_t steps,
                                              const TensorArena& arena, size_t buffers_per_block,
                                              const BufferFill& fill, bool sealed) {
  const BlockLayout layout = LayoutOf(arena);  // a lambda cannot capture structured bindings
  const std::vector<cohort_dtype>& dtypes = layout.dtypes;
  const std::vector<uint64_t>& sizes = layout.sizes;
  // A whole state is the layout of a shard of one rank, each buffer put in little-endian order.
  if (absl::Status laid = LayOut(out, kind, steps, dtypes, sizes, buffers_per_block, ArenaShard{},
                                 [&](size_t b, size_t i, char* dest) {
                                   if (absl::Status filled = fill(b, i, dest); !filled.ok()) {
                                     return filled;
                                   }
                                   if (dtypes[b] == COHORT_DTYPE_FLOAT64) {
                                     ToLittleEndianInPlace<double>(dest, sizes[b]);
                                   } else {
                                     ToLittleEndianInPlace<float>(dest, sizes[b]);
                                   }
                                   return absl::OkStatus();
                                 });
      !laid.ok()) {
    return laid;
  }
  if (sealed) SealOptimizerState(out);
  return absl::OkStatus();
}

uint64_t OptimizerState::held_bytes() const {
  uint64_t bytes = 0;
  for (const Buffer& buffer : buffers_) {
    std::visit([&](const auto& values) { bytes += values.size() * sizeof(values[0]); }, buffer);
  }
  return bytes;
}

namespace {

// The other ranks' pieces of a whole state of this layout moved into `whole` (laid out by
// LayOutWholeInto), in GatherWholeInto's order, then the checksum when `sealed`; reads nothing but
// the layout.
absl::Status ReceiveOthersPieces(const std::vector<cohort_dtype>& dtypes,
                                 const std::vector<uint64_t>& sizes, size_t buffers_per_block,
                                 uint32_t ranks, const OptimizerState::PieceMover& move,
                                 std::string& whole, bool sealed) {
  const size_t laid_out = whole.size();
  size_t start = HeaderBytes(dtypes.size());
  std::string overlap;  // the bytes after a buffer that its last piece's padding lands on
  for (size_t b = 0; b < dtypes.size(); ++b) {
    const uint64_t element = *DtypeSize(dtypes[b]);
    const uint64_t buffer = sizes[b] * element;
    const uint64_t piece = ShardChunk(sizes[b], ranks) * element;
    for (size_t i = 0; i < buffers_per_block; ++i, start += buffer) {
      if (start + buffer > laid_out) {
        return absl::InvalidArgumentError("the bytes given are not laid out for this state");
      }
      // Rank r's piece starts at element r * chunk of the buffer: where its range begins, so the
      // gathered pieces land in place, rank 0's onto itself. Those of the last ranks (their
      // padding, or empty ranges) reach past the buffer's end, a few elements at most: the bytes
      // they land on are put back (past the last buffer, into the room LayOutWholeInto reserved,
      // cut off below).
      const uint64_t end = start + buffer;
      const uint64_t reach = start + ranks * piece;
      if (reach > end) {
        if (reach > whole.size()) whole.resize(reach);
        overlap.assign(whole.data() + end, reach - end);
      }
      char* slots = whole.data() + start;
      if (absl::Status moved = move(slots, piece, slots); !moved.ok()) return moved;
      if (reach > end) std::memcpy(whole.data() + end, overlap.data(), overlap.size());
    }
  }
  whole.resize(laid_out);
  if (sealed) SealOptimizerState(whole);
  return absl::OkStatus();
}

}  // namespace

absl::Status OptimizerState::LayOutWholeInto(std::string& whole) const {
  return LayOut(whole, kind_, steps_, block_dtypes_, block_sizes_, buffers_per_block_, shard_,
                [this](size_t b, size_t i, char* dest) {
                  // Rank 0's range, from the buffer's first element.
                  const uint64_t bytes = range(b).count() * *DtypeSize(block_dtypes_[b]);
                  std::visit([&](const auto& values) { std::memcpy(dest, values.data(), bytes); },
                             buffers_[b * buffers_per_block_ + i]);
                  return absl::OkStatus();
                });
}

absl::Status OptimizerState::LayOutFilledInto(std::string& whole, Kind kind, uint64_t steps,
                                              const TensorArena& arena, size_t buffers_per_block,
                                              ArenaShard shard, const BufferFill& fill) {
  const auto [dtypes, sizes] = LayoutOf(arena);
  return LayOut(whole, kind, steps, dtypes, sizes, buffers_per_block, shard, fill);
}

absl::Status OptimizerState::ReceivePiecesInto(const TensorArena& arena, size_t buffers_per_block,
                                               ArenaShard shard, const PieceMover& move,
                                               std::string& whole, bool sealed) {
  const auto [dtypes, sizes] = LayoutOf(arena);
  return ReceiveOthersPieces(dtypes, sizes, buffers_per_block, shard.size, move, whole, sealed);
}

absl::Status OptimizerState::SendPieces(const PieceMover& move) const {
  for (size_t b = 0; b < block_dtypes_.size(); ++b) {
    const uint64_t piece = ShardChunk(block_sizes_[b], shard_.size) * *DtypeSize(block_dtypes_[b]);
    for (size_t i = 0; i < buffers_per_block_; ++i) {
      const void* own = nullptr;
      std::visit([&](const auto& values) { own = values.data(); },
                 buffers_[b * buffers_per_block_ + i]);
      if (absl::Status moved = move(own, piece, nullptr); !moved.ok()) return moved;
    }
  }
  return absl::OkStatus();
}

absl::Status OptimizerState::GatherWholeInto(const PieceMover& move, std::string* whole,
                                             bool sealed) const {
  if (whole == nullptr) return SendPieces(move);
  if (absl::Status laid = LayOutWholeInto(*whole); !laid.ok()) return laid;
  return ReceiveOthersPieces(block_dtypes_, block_sizes_, buffers_per_block_, shard_.size, move,
                             *whole, sealed);
}

void SealOptimizerState(std::string& unsealed) { AppendLittleEndian(unsealed, Fnv1a64(unsealed)); }

absl::Status OptimizerState::Decode(absl::string_view bytes) {
  // Integrity first: magic, version, then the checksum over everything else.
  const size_t minimum = kMagic.size() + sizeof(uint32_t) + kChecksumSize;
  if (bytes.size() < minimum) {
    return Invalid(absl::StrCat("is truncated: ", bytes.size(), " bytes, fewer than the ", minimum,
                                " any state has"));
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return Invalid(absl::StrCat("does not start with \"", kMagic,
                                "\": these bytes are not a saved optimizer state"));
  }
  LittleEndianReader reader(
      bytes.substr(kMagic.size(), bytes.size() - kMagic.size() - kChecksumSize));
  uint32_t version = 0;
  reader.Read(version);
  if (version != kVersion) {
    return Invalid(
        absl::StrCat("has format version ", version, "; this build reads version ", kVersion));
  }
  uint64_t checksum = 0;
  LittleEndianReader(bytes.substr(bytes.size() - kChecksumSize)).Read(checksum);
  if (checksum != Fnv1a64(bytes.substr(0, bytes.size() - kChecksumSize))) {
    return Invalid("is truncated or corrupt: its checksum does not match its contents");
  }

  // Then agreement with this optimizer and arena.
  uint32_t kind = 0, block_count = 0, buffers_per_block = 0;
  uint64_t steps = 0;
  if (!(reader.Read(kind) && reader.Read(steps) && reader.Read(block_count) &&
        reader.Read(buffers_per_block))) {
    return Invalid("is truncated: its header ends early");
  }
  if (kind != KindCode(kind_)) {
    return Invalid(absl::StrCat("was saved by ", KindCodeName(kind), "; this optimizer is ",
                                OptimizerKindName(kind_)));
  }
  if (block_count != block_dtypes_.size()) {
    return Invalid(
        absl::StrCat("has ", block_count, " blocks; this arena has ", block_dtypes_.size()));
  }
  if (buffers_per_block != buffers_per_block_) {
    return Invalid(absl::StrCat(
        "keeps ", buffers_per_block, " buffers per block; this ", OptimizerKindName(kind_),
        " optimizer keeps ", buffers_per_block_,
        kind_ == Kind::kSgd ? " (sgd keeps a momentum buffer only when momentum > 0)" : ""));
  }
  uint64_t payload = 0;
  for (size_t b = 0; b < block_count; ++b) {
    uint32_t dtype = 0;
    uint64_t elements = 0;
    if (!(reader.Read(dtype) && reader.Read(elements)))
      return Invalid("is truncated: its block table ends early");
    if (static_cast<cohort_dtype>(dtype) != block_dtypes_[b] || elements != block_sizes_[b]) {
      return Invalid(absl::StrCat(
          "block ", b, " is ", DescribeBlock(static_cast<cohort_dtype>(dtype), elements),
          "; this arena's block ", b, " is ", DescribeBlock(block_dtypes_[b], block_sizes_[b])));
    }
    payload += block_sizes_[b] * *DtypeSize(block_dtypes_[b]) * buffers_per_block_;
  }
  if (reader.remaining() != payload) {
    return Invalid(absl::StrCat("holds ", reader.remaining(),
                                " bytes of buffers; its layout needs ", payload));
  }

  // Every check passed: the reads below cannot fail. A shard keeps its range of each buffer.
  for (size_t b = 0; b < block_count; ++b) {
    const uint64_t element = *DtypeSize(block_dtypes_[b]);
    for (size_t i = 0; i < buffers_per_block_; ++i) {
      reader.Skip(range(b).begin * element);
      std::visit([&](auto& values) { reader.Read(values.data(), range(b).count()); },
                 buffers_[b * buffers_per_block_ + i]);
      reader.Skip((block_sizes_[b] - range(b).end) * element);
    }
  }
  steps_ = steps;
  return absl::OkStatus();
}

}  // namespace cohort
