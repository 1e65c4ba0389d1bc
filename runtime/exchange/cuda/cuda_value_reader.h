// CudaValueReader: DeviceValueReader (runtime/plugin/device_value_reader.h) on one CUDA device.
// Capture notes the value and its slot, the next 8 bytes of the reader's device memory (grown in
// chunks of kChunkSlots, never moved); EnqueueCopies copies the noted values into their slots with
// one kernel launch (value_kernels.h) per ValueCopies::kMax of them, on the plugin's compute
// stream; TakeAll copies the used slots to pinned host memory, waits for the stream once, and
// converts.
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_VALUE_READER_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_VALUE_READER_H_

#include <cstdint>
#include <vector>

#include "runtime/exchange/cuda/cuda_context.h"
#include "runtime/exchange/cuda/device_buffer.h"
#include "runtime/exchange/cuda/value_kernels.h"
#include "runtime/plugin/device_value_reader.h"

namespace cohort {

class CudaValueReader final : public DeviceValueReader {
 public:
  static constexpr uint32_t kChunkSlots = 1024;

  // `context` must outlive this object.
  explicit CudaValueReader(const CudaContext& context) : context_(context) {}
  ~CudaValueReader() override;
  CudaValueReader(const CudaValueReader&) = delete;
  CudaValueReader& operator=(const CudaValueReader&) = delete;

  absl::StatusOr<uint32_t> Capture(const void* device_value, cohort_dtype dtype) override;
  absl::Status EnqueueCopies() override;
  absl::StatusOr<std::vector<double>> TakeAll() override;

 private:
  const CudaContext& context_;
  std::vector<DeviceBuffer<uint64_t>> chunks_;  // slot i: chunks_[i / kChunkSlots]
  std::vector<cohort_dtype> dtypes_;            // of each captured slot, in ticket order
  ValueCopies noted_;                           // captured, not enqueued yet
  uint64_t* pinned_ = nullptr;                  // TakeAll's landing place
  uint64_t pinned_slots_ = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_VALUE_READER_H_
