#include "runtime/arena/tensor_arena.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/arena/dtype.h"

namespace cohort {
namespace {

bool SameDevice(cohort_device a, cohort_device b) {
  return a.kind == b.kind && a.ordinal == b.ordinal;
}

// OK when `shape` is empty (unknown) or its dimensions are all > 0 with product element_count.
absl::Status ValidateShape(const std::vector<uint64_t>& shape, uint64_t element_count) {
  if (shape.empty()) return absl::OkStatus();
  const std::string dims = absl::StrCat("shape [", absl::StrJoin(shape, ", "), "]");
  auto mismatch = [&](absl::string_view held) {
    return absl::InvalidArgumentError(
        absl::StrCat(dims, " holds ", held, " elements, but element_count is ", element_count));
  };
  uint64_t product = 1;
  for (uint64_t dim : shape) {
    if (dim == 0) return absl::InvalidArgumentError(absl::StrCat(dims, " has a zero dimension"));
    if (product > std::numeric_limits<uint64_t>::max() / dim) return mismatch("more than 2^64");
    product *= dim;
  }
  if (product != element_count) return mismatch(absl::StrCat(product));
  return absl::OkStatus();
}

absl::Status Validate(const std::vector<TensorDescriptor>& specs, ArenaGradients gradients) {
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorDescriptor& s = specs[i];
    if (s.name.empty())
      return absl::InvalidArgumentError(absl::StrCat("tensor ", i, " has an empty name"));
    const std::string what = absl::StrCat("tensor ", i, " '", s.name, "'");
    if (!names.insert(s.name).second) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": the name is registered twice"));
    }
    if (s.element_count == 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": element_count must be > 0"));
    }
    if (absl::Status shape = ValidateShape(s.shape, s.element_count); !shape.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", shape.message()));
    }
    if (auto size = DtypeSize(s.dtype); !size.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", size.status().message()));
    }
    if (s.dtype == COHORT_DTYPE_INT64 && gradients == ArenaGradients::kKeep) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": an int64 tensor has no gradient; register it as state (COHORT_TENSOR_STATE)"));
    }
    if (absl::Status device = ValidateDevice(s.device); !device.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", device.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TensorArena>> TensorArena::Create(
    std::vector<TensorDescriptor> specs, DeviceMemoryProvider& memory, ArenaGradients gradients) {
  if (absl::Status s = Validate(specs, gradients); !s.ok()) return s;
  std::unique_ptr<TensorArena> arena(new TensorArena());
  arena->gradients_ = gradients;
  arena->placements_.reserve(specs.size());

  // Lay out: tensors in registration order, appended to their (device, dtype) block.
  for (const TensorDescriptor& s : specs) {
    size_t block = 0;
    while (block < arena->blocks_.size() && !(SameDevice(arena->blocks_[block].device, s.device) &&
                                              arena->blocks_[block].dtype == s.dtype)) {
      ++block;
    }
    if (block == arena->blocks_.size()) {
      const size_t element_size = *DtypeSize(s.dtype);
      absl::StatusOr<DeviceMemory*> mem = memory.For(s.device);
      if (!mem.ok()) {
        return absl::Status(mem.status().code(),
                            absl::StrCat("tensor '", s.name, "' on ", DeviceName(s.device), ": ",
                                         mem.status().message()));
      }
      arena->blocks_.push_back(
          ArenaBlock{s.device, s.dtype, element_size, 0, nullptr, nullptr, *mem});
    }
    ArenaBlock& b = arena->blocks_[block];
    const uint64_t per_line = kArenaAlignment / b.element_size;
    const uint64_t offset = (b.element_count + per_line - 1) / per_line * per_line;
    arena->placements_.push_back(TensorPlacement{block, offset, s.element_count});
    b.element_count = offset + s.element_count;
  }

  for (ArenaBlock& b : arena->blocks_) {
    const size_t bytes = b.element_count * b.element_size;
    absl::StatusOr<void*> data = b.memory->Allocate(bytes);
    if (!data.ok()) return data.status();
    b.data = *data;
    if (gradients == ArenaGradients::kNone) continue;
    absl::StatusOr<void*> grad = b.memory->Allocate(bytes);
    if (!grad.ok()) return grad.status();
    b.grad = *grad;
  }
  arena->specs_ = std::move(specs);
  return arena;
}

TensorArena::~TensorArena() {
  for (ArenaBlock& b : blocks_) {
    if (b.data != nullptr) b.memory->Free(b.data);
    if (b.grad != nullptr) b.memory->Free(b.grad);
  }
}

void* TensorArena::data(size_t tensor) const {
  const TensorPlacement& p = placements_[tensor];
  const ArenaBlock& b = blocks_[p.block];
  return static_cast<char*>(b.data) + p.offset * b.element_size;
}

void* TensorArena::grad(size_t tensor) const {
  const TensorPlacement& p = placements_[tensor];
  const ArenaBlock& b = blocks_[p.block];
  if (b.grad == nullptr) return nullptr;
  return static_cast<char*>(b.grad) + p.offset * b.element_size;
}

absl::Status TensorArena::ZeroGradients() {
  for (ArenaBlock& b : blocks_) {
    if (b.grad == nullptr) continue;
    if (absl::Status s = b.memory->Zero(b.grad, b.element_count * b.element_size); !s.ok())
      return s;
  }
  return absl::OkStatus();
}

}  // namespace cohort
