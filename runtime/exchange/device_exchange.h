// DeviceExchange: the GPU half of the gradient exchange on one CUDA device. It owns two streams,
// the one the plugin enqueues its work on (handed to it as cohort_trial_context.stream) and the
// communication stream the exchange and the NCCL backend run on, and it makes the reducers that
// scale, encode, sum and decode buckets of device gradients there. It lives in the CUDA exchange
// module (cohort_cuda_exchange.so, loaded by OpenCudaExchange), so the core binaries never link
// the CUDA runtime.
//
//   absl::StatusOr<std::unique_ptr<DeviceExchange>> cuda = OpenCudaExchange(/*device=*/0);
//   context.stream = (*cuda)->compute_stream();      // the plugin's kernels go here
//   nccl_options.stream = (*cuda)->communication_stream();
//   ExchangeOptions options;
//   options.device = cuda->get();
//   GradientExchange::Create(arena, *nccl_backend, options);
//
// Ordering between the streams: when the plugin has reported every gradient of a bucket, the
// reducer records an event on the compute stream (BucketReducer::BucketReady); Reduce makes the
// communication stream wait for that event before it reads the bucket. Early buckets are thus
// exchanged while the plugin's later backward kernels still run, and the host never waits for
// the plugin's kernels. Reduce returns once the communication stream has finished the bucket, so
// whatever the host enqueues afterwards on either stream sees the result.
//
// Each compression form has CUDA kernels doing what its CPU reducer does (bucket_reducer.h):
// float32, fp16 and bf16 are summed by NCCL (which adds both 16-bit formats on the device);
// top-k selects the same entries as TopKCompressor and adds the gathered pairs in rank order;
// PowerSGD lays out and seeds a bucket as PowerSgdCompressor does and multiplies through cuBLAS.
// ZeRO stage 2's reducer sums each piece of a bucket onto the rank whose shard holds it (NCCL's
// reduce).
//
// Thread-safety: the streams may be used from any thread; a reducer is used as BucketReducer says.
// Destroy every reducer before the DeviceExchange, and the DeviceExchange before unloading.
#ifndef COHORT_RUNTIME_EXCHANGE_DEVICE_EXCHANGE_H_
#define COHORT_RUNTIME_EXCHANGE_DEVICE_EXCHANGE_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/arena/device_gradient_ops.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/config/compression_options.h"
#include "runtime/exchange/bucket_plan.h"
#include "runtime/exchange/bucket_reducer.h"
#include "runtime/exchange/compression/powersgd/powersgd_layout.h"
#include "runtime/exchange/shard_pieces.h"
#include "runtime/plugin/device_value_reader.h"

namespace cohort {

class DeviceExchange {
 public:
  virtual ~DeviceExchange() = default;

  // The CUDA device ordinal, as this process sees it.
  virtual int device() const = 0;
  // A cudaStream_t for the plugin's work.
  virtual void* compute_stream() = 0;
  // A cudaStream_t for the exchange; the collective backend must run on it (NcclOptions::stream).
  virtual void* communication_stream() = 0;

  // Averaging and the non-finite check of gradients on this device, enqueued on
  // compute_stream() (for the training loop). Lives as long as the DeviceExchange.
  virtual DeviceGradientOps& gradient_ops() = 0;

  // Takes the plugin's metric values on this device (metric_add_device) after the work on
  // compute_stream() that computes them, for ModelHostOptions::device_values. Lives as long as
  // the DeviceExchange.
  virtual DeviceValueReader& value_reader() = 0;

  // Makes the communication stream wait for the work enqueued on the compute stream so far (an
  // event; the host does not wait), so that a collective enqueued next reads what the plugin's
  // kernels and the optimizer's wrote. Called by the thread that drives the model.
  virtual absl::Status CommunicationAfterCompute() = 0;

  // backend.Allgather of `bytes` host bytes from `in` into `out` (size() * bytes), staged through
  // device memory for an engine that only moves device memory. Called by the thread that reduces.
  virtual absl::Status AllgatherHostBytes(CollectiveBackend& backend, const void* in,
                                          uint64_t bytes, void* out) = 0;

  // A reducer for `plan`'s buckets, whose gradients live on this device. `tensors[b]` lists bucket
  // b's tensors as PowerSGD sees them (PowerSgdTensorsOf; read only for PowerSGD). `backend` must
  // run on communication_stream() and outlive the reducer.
  virtual absl::StatusOr<std::unique_ptr<BucketReducer>> CreateReducer(
      const CompressionOptions& compression, const std::vector<GradientBucket>& plan,
      const std::vector<std::vector<PowerSgdTensor>>& tensors, CollectiveBackend& backend) = 0;

  // ZeRO stage 2's reducer for `plan`'s buckets on this device, as the host's ShardReducer: each
  // bucket scaled, then each of its `pieces` (ShardPieces of the plan) summed onto its owner only
  // (the engine's reduce), float32, uncompressed. `backend` as for CreateReducer.
  virtual absl::StatusOr<std::unique_ptr<BucketReducer>> CreateShardReducer(
      const std::vector<GradientBucket>& plan, std::vector<std::vector<ShardPiece>> pieces,
      CollectiveBackend& backend) = 0;
};

// Loads the CUDA exchange module (at $COHORT_CUDA_EXCHANGE_MODULE, then in the build tree, then in
// the install tree) and opens it on `device`. UNAVAILABLE where the module or the device is
// missing, with the reason.
absl::StatusOr<std::unique_ptr<DeviceExchange>> OpenCudaExchange(int device);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_DEVICE_EXCHANGE_H_
