// CudaBucketReducer: what every reducer of the CUDA exchange shares: one event per bucket, recorded
// on the compute stream when the plugin has reported the bucket's gradients (BucketReady), which
// the communication stream waits for before the bucket is read (BeginBucket); and the wait for the
// communication stream at the end of a bucket (EndBucket), so Reduce returns with the result in
// place. A subclass's Reduce is BeginBucket, its kernels and collectives, then EndBucket.
//
// Thread-safety: BucketReady(b) runs on the thread that drives the model and Reduce(b) later on
// the thread the exchange hands b to (the hand-off orders them); different buckets' events are
// independent.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_BUCKET_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_BUCKET_REDUCER_H_

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "runtime/exchange/bucket_reducer.h"
#include "runtime/exchange/cuda/cuda_context.h"
#include "runtime/exchange/cuda/device_buffer.h"

namespace cohort {

class CudaBucketReducer : public BucketReducer {
 public:
  ~CudaBucketReducer() override;
  void BucketReady(size_t bucket) final;

 protected:
  explicit CudaBucketReducer(CudaContext& context) : context_(context) {}

  // Makes one event per bucket; call once from the subclass's factory.
  absl::Status CreateEvents(size_t buckets);
  // Makes the device current and the communication stream wait for the bucket's gradients.
  absl::Status BeginBucket(size_t bucket);
  // Waits until the communication stream has done everything enqueued for the bucket.
  absl::Status EndBucket();
  // For SaveState and LoadState, between steps: `buffers` copied one after the other into
  // float32 bytes, and bytes copied back into them (a size other than theirs is refused, naming
  // both). The restore waits until the copies have landed, so the next step's kernels, on streams
  // that do not wait for the default stream, read them.
  absl::StatusOr<std::string> CopyToHost(
      const std::vector<const DeviceBuffer<float>*>& buffers) const;
  absl::Status CopyToDevice(absl::string_view state,
                            const std::vector<DeviceBuffer<float>*>& buffers);

  CudaContext& context_;

 private:
  std::vector<cudaEvent_t> ready_;
  std::vector<absl::Status> ready_errors_;  // a failed record, reported by that bucket's Reduce
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_BUCKET_REDUCER_H_
