// The NCCL collective backend. Built into cohort_nccl_collective.so only (see nccl_module.h).
//
// The communicator is non-blocking (ncclConfig_t::blocking = 0), so forming the group and every
// operation can be waited for with a deadline: each call enqueues on the stream, then polls NCCL's
// async error and the stream until the work is done. On a deadline or a NCCL error the
// communicator is aborted and every later call fails with FAILED_PRECONDITION.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "runtime/arena/dtype.h"
#include "runtime/collective/nccl/nccl_module.h"
#include "runtime/module/cuda_status.h"

namespace cohort {
namespace {

using Clock = std::chrono::steady_clock;

// Polls `comm` until its pending NCCL work is enqueued (and, with a stream, finished on it) or the
// deadline passes. On failure the communicator is aborted, which frees it.
absl::Status AwaitComm(ncclComm_t comm, cudaStream_t stream, Clock::time_point deadline,
                       absl::string_view what, absl::string_view timeout_message) {
  while (true) {
    ncclResult_t state = ncclSuccess;
    if (ncclResult_t r = ncclCommGetAsyncError(comm, &state); r != ncclSuccess) state = r;
    if (state != ncclSuccess && state != ncclInProgress) {
      const std::string why =
          absl::StrCat(what, ": ", ncclGetErrorString(state), " (", ncclGetLastError(comm), ")");
      ncclCommAbort(comm);
      return state == ncclRemoteError || state == ncclSystemError ? absl::UnavailableError(why)
                                                                  : absl::InternalError(why);
    }
    if (state == ncclSuccess) {
      if (stream == nullptr) return absl::OkStatus();
      const cudaError_t done = cudaStreamQuery(stream);
      if (done == cudaSuccess) return absl::OkStatus();
      if (done != cudaErrorNotReady) {
        ncclCommAbort(comm);
        return CudaStatus(done, what);
      }
    }
    if (Clock::now() >= deadline) {
      ncclCommAbort(comm);
      return absl::DeadlineExceededError(absl::StrCat(what, ": ", timeout_message));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

absl::StatusOr<ncclDataType_t> NcclType(cohort_dtype dtype) {
  switch (dtype) {
    case COHORT_DTYPE_FLOAT32:
      return ncclFloat32;
    case COHORT_DTYPE_FLOAT64:
      return ncclFloat64;
    case COHORT_DTYPE_FLOAT16:
      return ncclFloat16;
    case COHORT_DTYPE_BFLOAT16:
      return ncclBfloat16;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("nccl allreduce: unsupported dtype ", DtypeName(dtype)));
  }
}

class NcclBackend final : public CollectiveBackend {
 public:
  NcclBackend(ncclComm_t comm, int device, cudaStream_t stream, bool owns_stream, float* scratch,
              uint32_t rank, uint32_t size, std::chrono::milliseconds timeout)
      : comm_(comm),
        device_(device),
        stream_(stream),
        owns_stream_(owns_stream),
        scratch_(scratch),
        rank_(rank),
        size_(size),
        timeout_(timeout) {}

  ~NcclBackend() override {
    cudaSetDevice(device_);
    if (!broken_) {  // a broken communicator was aborted (and freed) already
      cudaStreamSynchronize(stream_);
      ncclCommFinalize(comm_);
      if (AwaitComm(comm_, nullptr, Clock::now() + timeout_, "nccl finalize",
                    "peers did not finish")
              .ok()) {
        ncclCommDestroy(comm_);
      }
    }
    cudaFree(scratch_);
    if (owns_stream_) cudaStreamDestroy(stream_);
  }

  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }
  std::string name() const override { return "nccl"; }

  absl::Status AllreduceSum(void* data, uint64_t count, cohort_dtype dtype) override {
    absl::StatusOr<ncclDataType_t> type = NcclType(dtype);
    if (!type.ok()) return type.status();
    if (count == 0) return absl::OkStatus();
    return Run("nccl allreduce",
               [&] { return ncclAllReduce(data, data, count, *type, ncclSum, comm_, stream_); });
  }

  absl::Status ReduceSum(void* data, uint64_t count, cohort_dtype dtype, uint32_t root) override {
    if (root >= size_) {
      return absl::InvalidArgumentError(
          absl::StrCat("nccl reduce: root ", root, " is not below size ", size_));
    }
    absl::StatusOr<ncclDataType_t> type = NcclType(dtype);
    if (!type.ok()) return type.status();
    if (count == 0) return absl::OkStatus();
    return Run("nccl reduce", [&] {
      return ncclReduce(data, data, count, *type, ncclSum, static_cast<int>(root), comm_, stream_);
    });
  }

  absl::Status Broadcast(void* data, uint64_t bytes, uint32_t root) override {
    if (root >= size_) {
      return absl::InvalidArgumentError(
          absl::StrCat("nccl broadcast: root ", root, " is not below size ", size_));
    }
    if (bytes == 0) return absl::OkStatus();
    return Run("nccl broadcast", [&] {
      return ncclBroadcast(data, data, bytes, ncclUint8, static_cast<int>(root), comm_, stream_);
    });
  }

  absl::Status Allgather(const void* in, uint64_t bytes_per_rank, void* out) override {
    if (bytes_per_rank == 0) return absl::OkStatus();
    return Run("nccl allgather",
               [&] { return ncclAllGather(in, out, bytes_per_rank, ncclUint8, comm_, stream_); });
  }

  absl::Status Gather(const void* in, uint64_t bytes_per_rank, void* out, uint32_t root) override {
    if (root >= size_) {
      return absl::InvalidArgumentError(
          absl::StrCat("nccl gather: root ", root, " is not below size ", size_));
    }
    if (bytes_per_rank == 0) return absl::OkStatus();
    // NCCL has no gather: root's receives and every rank's send, as one group.
    return Run("nccl gather", [&]() -> ncclResult_t {
      if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess) return r;
      if (rank_ == root) {
        char* slots = static_cast<char*>(out);
        for (uint32_t r = 0; r < size_; ++r) {
          if (r == root && in == slots + r * bytes_per_rank) continue;  // in place already
          if (ncclResult_t received = ncclRecv(slots + r * bytes_per_rank, bytes_per_rank,
                                               ncclUint8, static_cast<int>(r), comm_, stream_);
              received != ncclSuccess) {
            ncclGroupEnd();
            return received;
          }
        }
      }
      if (rank_ != root || in != static_cast<char*>(out) + root * bytes_per_rank) {
        if (ncclResult_t sent =
                ncclSend(in, bytes_per_rank, ncclUint8, static_cast<int>(root), comm_, stream_);
            sent != ncclSuccess) {
          ncclGroupEnd();
          return sent;
        }
      }
      return ncclGroupEnd();
    });
  }

  absl::Status Barrier() override {
    return Run("nccl barrier", [&] {
      return ncclAllReduce(scratch_, scratch_, 1, ncclFloat32, ncclSum, comm_, stream_);
    });
  }

 private:
  absl::Status Run(absl::string_view what, absl::FunctionRef<ncclResult_t()> enqueue) {
    if (broken_)
      return absl::FailedPreconditionError(
          absl::StrCat(what, ": the communicator was aborted earlier"));
    if (cudaError_t e = cudaSetDevice(device_); e != cudaSuccess) return CudaStatus(e, what);
    const ncclResult_t enqueued = enqueue();
    absl::Status status;
    if (enqueued != ncclSuccess && enqueued != ncclInProgress) {
      status = absl::InternalError(absl::StrCat(what, ": ", ncclGetErrorString(enqueued), " (",
                                                ncclGetLastError(comm_), ")"));
      ncclCommAbort(comm_);
    } else {
      status = AwaitComm(
          comm_, stream_, Clock::now() + timeout_, what,
          absl::StrCat("not finished within ", timeout_.count(), " ms; is a peer missing?"));
    }
    broken_ = !status.ok();
    return status;
  }

  ncclComm_t comm_;
  int device_;
  cudaStream_t stream_;
  bool owns_stream_;
  float* scratch_;  // one device float for Barrier
  uint32_t rank_;
  uint32_t size_;
  std::chrono::milliseconds timeout_;
  bool broken_ = false;
};

// Rank 0 publishes a fresh unique id under `key`; the others read it.
absl::StatusOr<ncclUniqueId> ShareUniqueId(uint32_t rank, RendezvousStore& store,
                                           const std::string& key,
                                           std::chrono::milliseconds timeout) {
  ncclUniqueId id;
  if (rank == 0) {
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) {
      return absl::UnavailableError(
          absl::StrCat("nccl: ncclGetUniqueId failed: ", ncclGetErrorString(r)));
    }
    if (absl::Status s = store.Set(key, std::string(id.internal, sizeof id.internal)); !s.ok())
      return s;
    return id;
  }
  absl::StatusOr<std::string> bytes = store.Get(key, timeout);
  if (!bytes.ok()) return bytes.status();
  if (bytes->size() != sizeof id.internal) {
    return absl::DataLossError(
        absl::StrCat("nccl: '", key, "' holds ", bytes->size(), " bytes, not a unique id"));
  }
  std::memcpy(id.internal, bytes->data(), sizeof id.internal);
  return id;
}

absl::StatusOr<CollectiveBackend*> Create(uint32_t rank, uint32_t size, RendezvousStore& store,
                                          const std::string& prefix, int device, void* stream,
                                          std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    return absl::UnavailableError(absl::StrCat("nccl: no usable CUDA device: ", cudaGetErrorName(e),
                                               " (", cudaGetErrorString(e), ")"));
  }
  if (device < 0 || device >= count) {
    return absl::UnavailableError(
        absl::StrCat("nccl: CUDA device ", device, " does not exist; this process sees ", count));
  }
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
    return CudaStatus(e, "nccl: cudaSetDevice");

  absl::StatusOr<ncclUniqueId> id =
      ShareUniqueId(rank, store, prefix.empty() ? "nccl-id" : prefix + "/nccl-id", timeout);
  if (absl::IsDeadlineExceeded(id.status())) {
    return absl::DeadlineExceededError(absl::StrCat("nccl: rank ", rank, " waited ",
                                                    timeout.count(), " ms for rank 0's unique id (",
                                                    id.status().message(), ")"));
  }
  if (!id.ok()) return id.status();

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  const ncclResult_t started =
      ncclCommInitRankConfig(&comm, static_cast<int>(size), *id, static_cast<int>(rank), &config);
  if (started != ncclSuccess && started != ncclInProgress) {
    if (comm != nullptr) ncclCommAbort(comm);
    return absl::UnavailableError(
        absl::StrCat("nccl: ncclCommInitRankConfig failed: ", ncclGetErrorString(started)));
  }
  absl::Status joined = AwaitComm(comm, nullptr, deadline, "nccl rendezvous",
                                  absl::StrCat("rank ", rank, " waited ", timeout.count(),
                                               " ms and not all ", size, " ranks joined"));
  if (!joined.ok()) return joined;

  cudaStream_t own_stream = nullptr;
  if (stream == nullptr) {
    if (cudaError_t e = cudaStreamCreateWithFlags(&own_stream, cudaStreamNonBlocking);
        e != cudaSuccess) {
      ncclCommAbort(comm);
      return CudaStatus(e, "nccl: cudaStreamCreate");
    }
  }
  float* scratch = nullptr;
  if (cudaError_t e = cudaMalloc(&scratch, sizeof(float)); e != cudaSuccess) {
    ncclCommAbort(comm);
    if (own_stream != nullptr) cudaStreamDestroy(own_stream);
    return CudaStatus(e, "nccl: cudaMalloc");
  }
  cudaStream_t used = stream != nullptr ? static_cast<cudaStream_t>(stream) : own_stream;
  return new NcclBackend(comm, device, used, own_stream != nullptr, scratch, rank, size, timeout);
}

}  // namespace
}  // namespace cohort

extern "C" __attribute__((visibility("default"))) cohort::CollectiveBackend*
cohort_nccl_backend_create(uint32_t rank, uint32_t size, cohort::RendezvousStore* store,
                           const char* key_prefix, int device, void* stream, int64_t timeout_ms,
                           int* code, char* error, size_t error_len) {
  absl::StatusOr<cohort::CollectiveBackend*> backend = cohort::Create(
      rank, size, *store, key_prefix, device, stream, std::chrono::milliseconds(timeout_ms));
  if (backend.ok()) return *backend;
  *code = static_cast<int>(backend.status().code());
  std::snprintf(error, error_len, "%s", std::string(backend.status().message()).c_str());
  return nullptr;
}
static_assert(std::is_same_v<decltype(&cohort_nccl_backend_create), cohort_nccl_backend_create_fn>);
