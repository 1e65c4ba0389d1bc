// TensorArena: the runtime-owned memory behind a model's registered tensors.
//
// Tensors are grouped by (device, dtype); each group is one contiguous block of parameters and one
// of gradients with the same layout, tensors in registration order, each starting on a
// kArenaAlignment boundary (the gaps are zero and stay zero). Exchanging or compressing a block's
// gradients is then one pass over one buffer, with no copy in or out of the plugin's tensors.
//
//   auto arena = TensorArena::Create(specs, memory);   // validates names, sizes, dtypes, devices
//   float* w = static_cast<float*>((*arena)->data(0));
//   (*arena)->ZeroGradients();
//
// A model's non-trainable state (SDK 1.4 state tensors) lives in an arena of its own, created
// with ArenaGradients::kNone: the same layout, no gradient blocks (grad() is nullptr), and int64
// allowed. Parameters are never int64.
//
// Thread-safety: const methods may be called concurrently; ZeroGradients needs exclusive use.
#ifndef COHORT_RUNTIME_ARENA_TENSOR_ARENA_H_
#define COHORT_RUNTIME_ARENA_TENSOR_ARENA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cohort/plugin.h"
#include "runtime/arena/device_memory.h"

namespace cohort {

struct TensorDescriptor {
  std::string name;
  cohort_dtype dtype = COHORT_DTYPE_FLOAT32;
  cohort_device device{COHORT_DEVICE_CPU, 0};
  uint64_t element_count = 0;
  // Dimensions, outermost first (row-major); empty = unknown. When known, every dimension is > 0
  // and their product is element_count.
  std::vector<uint64_t> shape{};
};

// Whether an arena keeps a gradient beside each tensor (parameters) or not (state).
enum class ArenaGradients { kKeep, kNone };

// One contiguous (device, dtype) block; element_count includes alignment gaps. `grad` is nullptr
// in an arena without gradients.
struct ArenaBlock {
  cohort_device device;
  cohort_dtype dtype;
  size_t element_size;
  uint64_t element_count;
  void* data;
  void* grad;
  DeviceMemory* memory;
};

// Where one tensor lives.
struct TensorPlacement {
  size_t block;     // index into blocks()
  uint64_t offset;  // first element within the block
  uint64_t element_count;
};

class TensorArena {
 public:
  // Validates the specs (non-empty unique names, element_count > 0, known dtype and device, a
  // shape that is empty or matches element_count, no int64 beside gradients) and allocates zeroed
  // blocks. Errors name the offending tensor.
  static absl::StatusOr<std::unique_ptr<TensorArena>> Create(
      std::vector<TensorDescriptor> specs, DeviceMemoryProvider& memory,
      ArenaGradients gradients = ArenaGradients::kKeep);
  ~TensorArena();
  TensorArena(const TensorArena&) = delete;
  TensorArena& operator=(const TensorArena&) = delete;

  size_t tensor_count() const { return specs_.size(); }
  const TensorDescriptor& spec(size_t tensor) const { return specs_[tensor]; }
  const TensorPlacement& placement(size_t tensor) const { return placements_[tensor]; }
  const std::vector<ArenaBlock>& blocks() const { return blocks_; }

  void* data(size_t tensor) const;
  void* grad(size_t tensor) const;  // nullptr without gradients
  bool has_gradients() const { return gradients_ == ArenaGradients::kKeep; }

  // Zeroes every gradient block (nothing without gradients).
  absl::Status ZeroGradients();

 private:
  TensorArena() = default;

  std::vector<TensorDescriptor> specs_;
  std::vector<TensorPlacement> placements_;
  std::vector<ArenaBlock> blocks_;
  ArenaGradients gradients_ = ArenaGradients::kKeep;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_TENSOR_ARENA_H_
