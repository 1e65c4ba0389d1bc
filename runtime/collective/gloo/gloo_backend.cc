#include "runtime/collective/gloo/gloo_backend.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/broadcast.h"
#include "gloo/gather.h"
#include "gloo/math.h"
#include "gloo/reduce.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/prefix_store.h"
#include "gloo/transport/tcp/attr.h"
#include "gloo/transport/tcp/device.h"
#include "gloo/types.h"
#include "runtime/arena/dtype.h"
#include "runtime/collective/gloo/gloo_call.h"
#include "runtime/collective/gloo/gloo_store.h"

namespace cohort {
namespace {

using ReduceFunction = void (*)(void*, const void*, const void*, size_t);

class GlooBackend final : public CollectiveBackend {
 public:
  explicit GlooBackend(std::shared_ptr<gloo::Context> context) : context_(std::move(context)) {}

  uint32_t rank() const override { return static_cast<uint32_t>(context_->rank); }
  uint32_t size() const override { return static_cast<uint32_t>(context_->size); }
  std::string name() const override { return "gloo"; }

  absl::Status AllreduceSum(void* data, uint64_t count, cohort_dtype dtype) override {
    return WithSummable("gloo allreduce", data, dtype,
                        [&](auto* typed) { return Allreduce(typed, count); });
  }

  absl::Status ReduceSum(void* data, uint64_t count, cohort_dtype dtype, uint32_t root) override {
    if (root >= size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("gloo reduce: root ", root, " is not below size ", size()));
    }
    return WithSummable("gloo reduce", data, dtype,
                        [&](auto* typed) { return Reduce(typed, count, root); });
  }

  absl::Status Broadcast(void* data, uint64_t bytes, uint32_t root) override {
    if (root >= size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("gloo broadcast: root ", root, " is not below size ", size()));
    }
    if (bytes == 0) return absl::OkStatus();
    if (data == nullptr) return absl::InvalidArgumentError("gloo broadcast: null buffer");
    return CallGloo("gloo broadcast", [&] {
      gloo::BroadcastOptions options(context_);
      options.setOutput(static_cast<uint8_t*>(data), bytes);
      options.setRoot(static_cast<int>(root));
      gloo::broadcast(options);
    });
  }

  absl::Status Allgather(const void* in, uint64_t bytes_per_rank, void* out) override {
    if (bytes_per_rank == 0) return absl::OkStatus();
    if (in == nullptr || out == nullptr)
      return absl::InvalidArgumentError("gloo allgather: null buffer");
    uint8_t* gathered = static_cast<uint8_t*>(out);
    const uint8_t* own = static_cast<const uint8_t*>(in);
    return CallGloo("gloo allgather", [&] {
      gloo::AllgatherOptions options(context_);
      // Without an input Gloo takes this rank's slot of the output as the contribution.
      if (own != gathered + rank() * bytes_per_rank)
        options.setInput(const_cast<uint8_t*>(own), bytes_per_rank);
      options.setOutput(gathered, size() * bytes_per_rank);
      gloo::allgather(options);
    });
  }

  absl::Status Gather(const void* in, uint64_t bytes_per_rank, void* out, uint32_t root) override {
    if (root >= size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("gloo gather: root ", root, " is not below size ", size()));
    }
    if (bytes_per_rank == 0) return absl::OkStatus();
    if (in == nullptr || (rank() == root && out == nullptr))
      return absl::InvalidArgumentError("gloo gather: null buffer");
    return CallGloo("gloo gather", [&] {
      gloo::GatherOptions options(context_);
      // Root's own contribution is copied into its slot: onto itself when `in` is that slot.
      options.setInput(static_cast<uint8_t*>(const_cast<void*>(in)), bytes_per_rank);
      if (rank() == root) options.setOutput(static_cast<uint8_t*>(out), size() * bytes_per_rank);
      options.setRoot(static_cast<int>(root));
      gloo::gather(options);
    });
  }

  absl::Status Barrier() override {
    return CallGloo("gloo barrier", [&] {
      gloo::BarrierOptions options(context_);
      gloo::barrier(options);
    });
  }

 private:
  // sum(data as T*) for the dtypes Gloo can add; an error naming `what` and the dtype otherwise.
  template <typename Sum>
  static absl::Status WithSummable(const char* what, void* data, cohort_dtype dtype, Sum sum) {
    switch (dtype) {
      case COHORT_DTYPE_FLOAT32:
        return sum(static_cast<float*>(data));
      case COHORT_DTYPE_FLOAT64:
        return sum(static_cast<double*>(data));
      case COHORT_DTYPE_FLOAT16:
        return sum(static_cast<gloo::float16*>(data));
      case COHORT_DTYPE_BFLOAT16:
        return absl::UnimplementedError(
            absl::StrCat(what, ": Gloo cannot add bfloat16; convert to float32 first"));
      default:
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": unsupported dtype ", DtypeName(dtype)));
    }
  }

  template <typename T>
  absl::Status Allreduce(T* data, uint64_t count) {
    if (count == 0) return absl::OkStatus();
    if (data == nullptr) return absl::InvalidArgumentError("gloo allreduce: null buffer");
    return CallGloo("gloo allreduce", [&] {
      gloo::AllreduceOptions options(context_);
      options.setOutput(data, count);
      options.setReduceFunction(static_cast<ReduceFunction>(&gloo::sum<T>));
      gloo::allreduce(options);
    });
  }

  template <typename T>
  absl::Status Reduce(T* data, uint64_t count, uint32_t root) {
    if (count == 0) return absl::OkStatus();
    if (data == nullptr) return absl::InvalidArgumentError("gloo reduce: null buffer");
    return CallGloo("gloo reduce", [&] {
      gloo::ReduceOptions options(context_);
      options.setOutput(data, count);  // in place: the output is the input too
      options.setRoot(static_cast<int>(root));
      options.setReduceFunction(static_cast<ReduceFunction>(&gloo::sum<T>));
      gloo::reduce(options);
    });
  }

  std::shared_ptr<gloo::Context> context_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CollectiveBackend>> CreateGlooBackend(uint32_t rank, uint32_t size,
                                                                     RendezvousStore& store,
                                                                     const GlooOptions& options) {
  if (size == 0 || rank >= size) {
    return absl::InvalidArgumentError(
        absl::StrCat("gloo: rank ", rank, " does not fit a group of size ", size));
  }
  if (options.timeout.count() <= 0)
    return absl::InvalidArgumentError("gloo: the timeout must be positive");
  std::shared_ptr<gloo::rendezvous::Context> context;
  absl::Status joined = CallGloo("gloo rendezvous", [&] {
    gloo::transport::tcp::attr attr;
    attr.hostname = options.hostname;
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
    GlooStore gloo_store(store, options.timeout);
    gloo::rendezvous::PrefixStore prefixed(
        options.prefix.empty() ? "gloo" : options.prefix + "/gloo", gloo_store);
    context =
        std::make_shared<gloo::rendezvous::Context>(static_cast<int>(rank), static_cast<int>(size));
    context->setTimeout(options.timeout);
    context->connectFullMesh(prefixed, device);
  });
  if (absl::IsDeadlineExceeded(joined)) {
    return absl::DeadlineExceededError(
        absl::StrCat("gloo: rank ", rank, " waited ", options.timeout.count(), " ms and not all ",
                     size, " ranks joined (", joined.message(), ")"));
  }
  if (!joined.ok()) return joined;
  return std::unique_ptr<CollectiveBackend>(std::make_unique<GlooBackend>(std::move(context)));
}

}  // namespace cohort
