// The CUDA exchange module's DeviceExchange (see device_exchange.h and cuda_exchange_module.h):
// the two streams of one device and the factory of its reducers.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/exchange/cuda/cuda_exchange_module.h"
#include "runtime/exchange/cuda/cuda_gradient_ops.h"
#include "runtime/exchange/cuda/cuda_powersgd_reducer.h"
#include "runtime/exchange/cuda/cuda_shard_reducer.h"
#include "runtime/exchange/cuda/cuda_topk_reducer.h"
#include "runtime/exchange/cuda/cuda_value_reader.h"
#include "runtime/exchange/cuda/cuda_wire_reducer.h"
#include "runtime/exchange/cuda/device_buffer.h"

namespace cohort {
namespace {

class CudaExchange final : public DeviceExchange {
 public:
  explicit CudaExchange(const CudaContext& context)
      : context_(context),
        gradient_ops_(std::in_place, context_),
        value_reader_(std::in_place, context_) {}

  ~CudaExchange() override {
    // Both wait for the compute stream's work before freeing their memory.
    gradient_ops_.reset();
    value_reader_.reset();
    cudaSetDevice(context_.device);
    cudaStreamSynchronize(context_.compute);
    cudaStreamSynchronize(context_.communication);
    if (compute_done_ != nullptr) cudaEventDestroy(compute_done_);
    if (context_.blas != nullptr) cublasDestroy(context_.blas);
    cudaStreamDestroy(context_.compute);
    cudaStreamDestroy(context_.communication);
  }

  int device() const override { return context_.device; }
  void* compute_stream() override { return context_.compute; }
  void* communication_stream() override { return context_.communication; }
  DeviceGradientOps& gradient_ops() override { return *gradient_ops_; }
  DeviceValueReader& value_reader() override { return *value_reader_; }

  absl::Status CommunicationAfterCompute() override {
    if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
      return s;
    }
    if (compute_done_ == nullptr) {
      if (absl::Status s = CudaStatus(
              cudaEventCreateWithFlags(&compute_done_, cudaEventDisableTiming), "cudaEventCreate");
          !s.ok()) {
        return s;
      }
    }
    if (absl::Status s = CudaStatus(cudaEventRecord(compute_done_, context_.compute),
                                    "marking the compute stream's work");
        !s.ok()) {
      return s;
    }
    return CudaStatus(cudaStreamWaitEvent(context_.communication, compute_done_, 0),
                      "waiting for the compute stream's work");
  }

  absl::Status AllgatherHostBytes(CollectiveBackend& backend, const void* in, uint64_t bytes,
                                  void* out) override {
    if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
      return s;
    }
    const uint64_t total = bytes * backend.size();
    if (staging_.count() < total) {
      if (absl::Status s = staging_.Allocate(total); !s.ok()) return s;
    }
    uint8_t* own = staging_.data() + bytes * backend.rank();
    cudaStream_t stream = context_.communication;
    if (absl::Status s = CudaStatus(cudaMemcpyAsync(own, in, bytes, cudaMemcpyHostToDevice, stream),
                                    "staging bytes to gather");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = backend.Allgather(own, bytes, staging_.data()); !s.ok()) return s;
    if (absl::Status s =
            CudaStatus(cudaMemcpyAsync(out, staging_.data(), total, cudaMemcpyDeviceToHost, stream),
                       "reading gathered bytes");
        !s.ok()) {
      return s;
    }
    return CudaStatus(cudaStreamSynchronize(stream), "gathering host bytes");
  }

  absl::StatusOr<std::unique_ptr<BucketReducer>> CreateReducer(
      const CompressionOptions& compression, const std::vector<GradientBucket>& plan,
      const std::vector<std::vector<PowerSgdTensor>>& tensors,
      CollectiveBackend& backend) override {
    if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok())
      return s;
    switch (compression.kind) {
      case CompressionOptions::kNone:
        return CudaWireReducer::Create(context_, std::nullopt, plan, backend);
      case CompressionOptions::kFp16:
        return CudaWireReducer::Create(context_, WireFormat::kFloat16, plan, backend);
      case CompressionOptions::kBf16:
        return CudaWireReducer::Create(context_, WireFormat::kBfloat16, plan, backend);
      case CompressionOptions::kTopK:
        return CudaTopKReducer::Create(context_, compression.topk_ratio, plan, backend);
      case CompressionOptions::kPowerSgd:
        if (tensors.size() != plan.size()) {
          return absl::InvalidArgumentError(
              absl::StrCat("PowerSGD needs the tensors of each of the ", plan.size(),
                           " buckets; got ", tensors.size(), " lists"));
        }
        return CudaPowerSgdReducer::Create(context_, compression.powersgd_rank,
                                           compression.powersgd_start_iter, plan, tensors, backend);
    }
    return absl::InternalError(
        absl::StrCat("unknown gradient compression kind ", static_cast<int>(compression.kind)));
  }

  absl::StatusOr<std::unique_ptr<BucketReducer>> CreateShardReducer(
      const std::vector<GradientBucket>& plan, std::vector<std::vector<ShardPiece>> pieces,
      CollectiveBackend& backend) override {
    if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok())
      return s;
    return CudaShardReducer::Create(context_, plan, std::move(pieces), backend);
  }

 private:
  CudaContext context_;
  std::optional<CudaGradientOps> gradient_ops_;  // refers to context_
  std::optional<CudaValueReader> value_reader_;  // refers to context_
  DeviceBuffer<uint8_t> staging_;                // AllgatherHostBytes, grown as needed
  cudaEvent_t compute_done_ = nullptr;           // CommunicationAfterCompute's, made on first use
};

absl::StatusOr<DeviceExchange*> Open(int device) {
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    return absl::UnavailableError(absl::StrCat("no usable CUDA device: ", cudaGetErrorName(e), " (",
                                               cudaGetErrorString(e), ")"));
  }
  if (device < 0 || device >= count) {
    return absl::UnavailableError(
        absl::StrCat("CUDA device ", device, " does not exist; this process sees ", count));
  }
  if (absl::Status s = CudaStatus(cudaSetDevice(device), "cudaSetDevice"); !s.ok()) return s;
  CudaContext context;
  context.device = device;
  if (absl::Status s =
          CudaStatus(cudaStreamCreateWithFlags(&context.compute, cudaStreamNonBlocking),
                     "creating the compute stream");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CudaStatus(cudaStreamCreateWithFlags(&context.communication, cudaStreamNonBlocking),
                     "creating the communication stream");
      !s.ok()) {
    cudaStreamDestroy(context.compute);
    return s;
  }
  return new CudaExchange(context);
}

}  // namespace
}  // namespace cohort

extern "C" __attribute__((visibility("default"))) cohort::DeviceExchange* cohort_cuda_exchange_open(
    int device, char* error, size_t error_len) {
  absl::StatusOr<cohort::DeviceExchange*> exchange = cohort::Open(device);
  if (exchange.ok()) return *exchange;
  std::snprintf(error, error_len, "%s", std::string(exchange.status().message()).c_str());
  return nullptr;
}
static_assert(std::is_same_v<decltype(&cohort_cuda_exchange_open), cohort_cuda_exchange_open_fn>);
