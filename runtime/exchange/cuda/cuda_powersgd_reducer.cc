#include "runtime/exchange/cuda/cuda_powersgd_reducer.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/exchange/cuda/exchange_kernels.h"

namespace cohort {
namespace {

constexpr uint64_t kMaxDimension = static_cast<uint64_t>(std::numeric_limits<int>::max());

int I(uint64_t value) { return static_cast<int>(value); }

// C (m x n, column-major, leading dimension ldc) = alpha * op(A) op(B) + beta * C.
absl::Status Gemm(cublasHandle_t blas, cublasOperation_t a_op, cublasOperation_t b_op, uint64_t m,
                  uint64_t n, uint64_t k, float alpha, const float* a, uint64_t lda, const float* b,
                  uint64_t ldb, float beta, float* c, uint64_t ldc) {
  return CublasStatus(cublasSgemm(blas, a_op, b_op, I(m), I(n), I(k), &alpha, a, I(lda), b, I(ldb),
                                  &beta, c, I(ldc)),
                      "PowerSGD matrix product");
}

absl::Status CopyOnDevice(float* to, const float* from, uint64_t count, cudaStream_t stream) {
  if (count == 0) return absl::OkStatus();
  return CudaStatus(
      cudaMemcpyAsync(to, from, count * sizeof(float), cudaMemcpyDeviceToDevice, stream),
      "PowerSGD copy");
}

}  // namespace

absl::StatusOr<std::unique_ptr<BucketReducer>> CudaPowerSgdReducer::Create(
    CudaContext& context, uint32_t rank, uint64_t start_iter,
    const std::vector<GradientBucket>& plan,
    const std::vector<std::vector<PowerSgdTensor>>& tensors, CollectiveBackend& backend) {
  std::unique_ptr<CudaPowerSgdReducer> reducer(
      new CudaPowerSgdReducer(context, start_iter, backend));
  if (absl::Status s = reducer->CreateEvents(plan.size()); !s.ok()) return s;
  uint64_t first = 0;
  uint64_t second = 0;
  reducer->buckets_.resize(plan.size());
  for (size_t b = 0; b < plan.size(); ++b) {
    BucketState& state = reducer->buckets_[b];
    state.layout = LayOutPowerSgd(tensors[b], rank);
    for (const PowerSgdMatrix& matrix : state.layout.matrices) {
      if (matrix.rows > kMaxDimension || matrix.cols > kMaxDimension) {
        return absl::InvalidArgumentError(
            absl::StrCat("optimizations.gradient_compression: PowerSGD on a GPU takes "
                         "matrices of fewer than 2^31 rows and columns, not ",
                         matrix.rows, " x ", matrix.cols));
      }
    }
    // The same starting Q as the CPU compressor: bucket b is seeded with b.
    std::vector<float> start(state.layout.second_count);
    for (const PowerSgdMatrix& matrix : state.layout.matrices) {
      for (uint32_t c = 0; c < matrix.rank; ++c) {
        DrawStartingQColumn(/*seed=*/b, matrix.index, c, matrix.cols,
                            start.data() + matrix.q_offset + c * matrix.cols);
      }
    }
    for (absl::Status s :
         {state.q.Allocate(start.size()), state.start_q.Allocate(start.size()),
          state.own_q.Allocate(start.size()), state.error.Allocate(state.layout.error_count)}) {
      if (!s.ok()) return s;
    }
    if (!start.empty()) {
      for (float* to : {state.q.data(), state.start_q.data()}) {
        if (absl::Status s = CudaStatus(
                cudaMemcpy(to, start.data(), start.size() * sizeof(float), cudaMemcpyHostToDevice),
                "uploading PowerSGD's starting Q");
            !s.ok()) {
          return s;
        }
      }
    }
    if (state.layout.error_count > 0) {
      if (absl::Status s = CudaStatus(
              cudaMemset(state.error.data(), 0, state.layout.error_count * sizeof(float)),
              "clearing PowerSGD's error");
          !s.ok()) {
        return s;
      }
    }
    first = std::max(first, state.layout.first_count);
    second = std::max(second, state.layout.second_count);
  }
  if (absl::Status s = reducer->first_.Allocate(first); !s.ok()) return s;
  if (absl::Status s = reducer->second_.Allocate(second); !s.ok()) return s;
  if (absl::StatusOr<cublasHandle_t> blas = context.Blas(); !blas.ok()) return blas.status();
  return std::unique_ptr<BucketReducer>(std::move(reducer));
}

absl::Status CudaPowerSgdReducer::Reset() {
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  for (BucketState& state : buckets_) {
    if (state.error.count() > 0) {
      if (absl::Status s =
              CudaStatus(cudaMemset(state.error.data(), 0, state.error.count() * sizeof(float)),
                         "clearing PowerSGD's error");
          !s.ok()) {
        return s;
      }
    }
    if (state.q.count() > 0) {
      if (absl::Status s =
              CudaStatus(cudaMemcpy(state.q.data(), state.start_q.data(),
                                    state.q.count() * sizeof(float), cudaMemcpyDeviceToDevice),
                         "restarting PowerSGD's Q");
          !s.ok()) {
        return s;
      }
    }
  }
  // cudaMemset and cudaMemcpy run on the default stream, which the exchange's streams do not
  // wait for.
  return CudaStatus(cudaDeviceSynchronize(), "restarting PowerSGD");
}

absl::StatusOr<std::string> CudaPowerSgdReducer::SaveState() const {
  std::vector<const DeviceBuffer<float>*> buffers;
  for (const BucketState& state : buckets_) {
    buffers.push_back(&state.q);
    buffers.push_back(&state.error);
  }
  return CopyToHost(buffers);
}

absl::Status CudaPowerSgdReducer::LoadState(absl::string_view state) {
  std::vector<DeviceBuffer<float>*> buffers;
  for (BucketState& bucket : buckets_) {
    buffers.push_back(&bucket.q);
    buffers.push_back(&bucket.error);
  }
  return CopyToDevice(state, buffers);
}

absl::Status CudaPowerSgdReducer::Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                                         uint64_t step) {
  if (absl::Status s = BeginBucket(bucket); !s.ok()) return s;
  cudaStream_t stream = context_.communication;
  if (absl::Status s = CudaStatus(EnqueueScale(grad, count, scale, stream), "scaling a bucket");
      !s.ok())
    return s;
  if (step < start_iter_) {
    if (absl::Status s = backend_.AllreduceSum(grad, count, COHORT_DTYPE_FLOAT32); !s.ok())
      return s;
  } else if (absl::Status s = Compress(buckets_[bucket], grad); !s.ok()) {
    return s;
  }
  return EndBucket();
}

absl::Status CudaPowerSgdReducer::Compress(BucketState& state, float* grad) {
  cudaStream_t stream = context_.communication;
  absl::StatusOr<cublasHandle_t> blas = context_.Blas();
  if (!blas.ok()) return blas.status();
  const PowerSgdLayout& layout = state.layout;
  float* first = first_.data();
  float* second = second_.data();

  // Step 1: M = grad + error in place, P = M Q; then the plain tensors after the Ps.
  for (const PowerSgdMatrix& matrix : layout.matrices) {
    float* q = state.q.data() + matrix.q_offset;
    float* m = grad + matrix.offset;
    if (absl::Status s =
            CudaStatus(EnqueueOrthonormalize(q, matrix.cols, matrix.rank,
                                             state.start_q.data() + matrix.q_offset, stream),
                       "orthonormalizing Q");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CudaStatus(EnqueueAdd(m, state.error.data() + matrix.error_offset,
                                               matrix.rows * matrix.cols, stream),
                                    "adding PowerSGD's error");
        !s.ok()) {
      return s;
    }
    // M is row-major rows x cols, i.e. column-major M^T (cols x rows); P (rows x r) = (M^T)^T Q.
    if (absl::Status s =
            Gemm(*blas, CUBLAS_OP_T, CUBLAS_OP_N, matrix.rows, matrix.rank, matrix.cols, 1.0f, m,
                 matrix.cols, q, matrix.cols, 0.0f, first + matrix.p_offset, matrix.rows);
        !s.ok()) {
      return s;
    }
  }
  for (const PowerSgdPlain& plain : layout.plain) {
    if (absl::Status s =
            CopyOnDevice(first + plain.first_offset, grad + plain.offset, plain.count, stream);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = backend_.AllreduceSum(first, layout.first_count, COHORT_DTYPE_FLOAT32);
      !s.ok())
    return s;

  // Step 2: orthonormalize each summed P, then this rank's Q = M^T P.
  for (const PowerSgdMatrix& matrix : layout.matrices) {
    float* p = first + matrix.p_offset;
    if (absl::Status s =
            CudaStatus(EnqueueOrthonormalize(p, matrix.rows, matrix.rank, nullptr, stream),
                       "orthonormalizing P");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = Gemm(*blas, CUBLAS_OP_N, CUBLAS_OP_N, matrix.cols, matrix.rank,
                              matrix.rows, 1.0f, grad + matrix.offset, matrix.cols, p, matrix.rows,
                              0.0f, second + matrix.q_offset, matrix.cols);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CopyOnDevice(state.own_q.data(), second, layout.second_count, stream);
      !s.ok())
    return s;
  if (layout.second_count > 0) {
    if (absl::Status s = backend_.AllreduceSum(second, layout.second_count, COHORT_DTYPE_FLOAT32);
        !s.ok())
      return s;
  }

  // Step 3: error = M - P Q_own^T, then M = P Q^T (column-major: Q P^T); keep the summed Q.
  for (const PowerSgdMatrix& matrix : layout.matrices) {
    const float* p = first + matrix.p_offset;
    float* m = grad + matrix.offset;
    float* error = state.error.data() + matrix.error_offset;
    if (absl::Status s = CopyOnDevice(error, m, matrix.rows * matrix.cols, stream); !s.ok())
      return s;
    if (absl::Status s = Gemm(*blas, CUBLAS_OP_N, CUBLAS_OP_T, matrix.cols, matrix.rows,
                              matrix.rank, -1.0f, state.own_q.data() + matrix.q_offset, matrix.cols,
                              p, matrix.rows, 1.0f, error, matrix.cols);
        !s.ok()) {
      return s;
    }
    if (absl::Status s =
            Gemm(*blas, CUBLAS_OP_N, CUBLAS_OP_T, matrix.cols, matrix.rows, matrix.rank, 1.0f,
                 second + matrix.q_offset, matrix.cols, p, matrix.rows, 0.0f, m, matrix.cols);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CopyOnDevice(state.q.data(), second, layout.second_count, stream); !s.ok())
    return s;
  for (const PowerSgdPlain& plain : layout.plain) {
    if (absl::Status s =
            CopyOnDevice(grad + plain.offset, first + plain.first_offset, plain.count, stream);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace cohort
