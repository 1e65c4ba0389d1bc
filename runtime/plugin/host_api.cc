#include "runtime/plugin/host_api.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/plugin/batch_metrics.h"
#include "runtime/plugin/error.h"
#include "runtime/plugin/model_host.h"
#include "runtime/plugin/state_stream.h"

namespace cohort {
namespace {

absl::string_view View(const char* p, size_t n) {
  return p == nullptr ? absl::string_view() : absl::string_view(p, n);
}

cohort_error* Fail(absl::Status status) { return NewError(std::move(status)); }

void Log(cohort_host* host, cohort_log_level level, const char* message, size_t message_len) {
  if (host == nullptr) return;
  host->options.log(level, View(message, message_len));
}

const cohort_trial_context* TrialContext(cohort_host* host) { return &host->options.context; }

// Notes that the plugin asked for hyperparameter `name` (see UnreadHyperparameters).
absl::string_view NoteRead(cohort_host* host, absl::string_view name) {
  std::lock_guard<std::mutex> lock(host->hyperparameters_read_mutex);
  host->hyperparameters_read.emplace(name);
  return name;
}

cohort_hparam_type HparamType(cohort_host* host, const char* name, size_t name_len) {
  return host->options.hyperparameters.TypeOf(NoteRead(host, View(name, name_len)));
}

cohort_error* HparamInt(cohort_host* host, const char* name, size_t name_len, int64_t* out) {
  absl::StatusOr<int64_t> v =
      host->options.hyperparameters.GetInt(NoteRead(host, View(name, name_len)));
  if (!v.ok()) return Fail(v.status());
  *out = *v;
  return nullptr;
}

cohort_error* HparamDouble(cohort_host* host, const char* name, size_t name_len, double* out) {
  absl::StatusOr<double> v =
      host->options.hyperparameters.GetDouble(NoteRead(host, View(name, name_len)));
  if (!v.ok()) return Fail(v.status());
  *out = *v;
  return nullptr;
}

cohort_error* HparamBool(cohort_host* host, const char* name, size_t name_len, uint8_t* out) {
  absl::StatusOr<bool> v =
      host->options.hyperparameters.GetBool(NoteRead(host, View(name, name_len)));
  if (!v.ok()) return Fail(v.status());
  *out = *v ? 1 : 0;
  return nullptr;
}

cohort_error* HparamString(cohort_host* host, const char* name, size_t name_len, const char** out,
                           size_t* out_len) {
  absl::StatusOr<const std::string*> v =
      host->options.hyperparameters.GetString(NoteRead(host, View(name, name_len)));
  if (!v.ok()) return Fail(v.status());
  *out = (*v)->data();
  *out_len = (*v)->size();
  return nullptr;
}

cohort_error* HparamText(cohort_host* host, const char* name, size_t name_len, const char** out,
                         size_t* out_len) {
  const std::string key(NoteRead(host, View(name, name_len)));
  absl::StatusOr<std::string> text = host->options.hyperparameters.GetText(key);
  if (!text.ok()) return Fail(text.status());
  std::lock_guard<std::mutex> lock(host->hyperparameters_read_mutex);
  // The first answer stays (a trial's values never change): its pointer outlives later calls.
  const std::string& kept =
      host->hyperparameter_texts.try_emplace(key, *std::move(text)).first->second;
  *out = kept.data();
  *out_len = kept.size();
  return nullptr;
}

// The host's copy of specs[index]; reads the 1.1 shape and the 1.4 kind only when struct_size
// covers them.
absl::StatusOr<TensorDescriptor> Describe(const cohort_tensor_spec& spec, size_t index) {
  TensorDescriptor tensor{std::string(View(spec.name, spec.name_len)), spec.dtype, spec.device,
                          spec.element_count};
  if (!COHORT_HAS_FIELD(&spec, cohort_tensor_spec, shape_len) || spec.shape_len == 0) return tensor;
  if (spec.shape == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("register_tensors: specs[", index, "] '",
                                                   tensor.name, "' has shape_len ", spec.shape_len,
                                                   " but a NULL shape"));
  }
  tensor.shape.assign(spec.shape, spec.shape + spec.shape_len);
  return tensor;
}

absl::StatusOr<cohort_tensor_kind> KindOf(const cohort_tensor_spec& spec, size_t index) {
  if (!COHORT_HAS_FIELD(&spec, cohort_tensor_spec, kind)) return COHORT_TENSOR_PARAMETER;
  if (spec.kind != COHORT_TENSOR_PARAMETER && spec.kind != COHORT_TENSOR_STATE) {
    return absl::InvalidArgumentError(absl::StrCat(
        "register_tensors: specs[", index, "] '", View(spec.name, spec.name_len), "' has kind ",
        spec.kind, "; allowed: 0 (COHORT_TENSOR_PARAMETER), 1 (COHORT_TENSOR_STATE)"));
  }
  return spec.kind;
}

// How far apart a plugin's spec array puts its elements: sizeof(cohort_tensor_spec) in the
// headers of the older side (plugin.h, "Arrays of specs"): 48 bytes up to 1.0, 64 from 1.1, 72
// from 1.4.
size_t SpecStride(uint32_t plugin_minor) {
  const uint32_t minor = std::min<uint32_t>(plugin_minor, COHORT_ABI_VERSION_MINOR);
  const size_t size = minor >= 4   ? COHORT_STRUCT_SIZE(cohort_tensor_spec, kind)
                      : minor >= 1 ? COHORT_STRUCT_SIZE(cohort_tensor_spec, shape_len)
                                   : COHORT_STRUCT_SIZE(cohort_tensor_spec, element_count);
  return (size + 7) / 8 * 8;
}

const cohort_tensor_spec& SpecAt(const cohort_tensor_spec* specs, size_t stride, size_t i) {
  return *reinterpret_cast<const cohort_tensor_spec*>(reinterpret_cast<const char*>(specs) +
                                                      i * stride);
}

cohort_error* RegisterTensors(cohort_host* host, const cohort_tensor_spec* specs,
                              cohort_tensor_view* views, size_t count) {
  if (host->phase != ModelPhase::kCreating) {
    return Fail(
        absl::FailedPreconditionError("register_tensors may only be called from model_create"));
  }
  if (host->arena != nullptr) {
    return Fail(absl::FailedPreconditionError(
        "register_tensors was already called; register every tensor in one call"));
  }
  if (count == 0) return Fail(absl::InvalidArgumentError("register_tensors: no tensors given"));
  if (specs == nullptr || views == nullptr) {
    return Fail(absl::InvalidArgumentError("register_tensors: NULL specs or views"));
  }
  const size_t spec_v1 = COHORT_STRUCT_SIZE(cohort_tensor_spec, element_count);
  const size_t view_v1 = COHORT_STRUCT_SIZE(cohort_tensor_view, arena_offset);
  std::vector<TensorDescriptor> parameters;
  std::vector<TensorDescriptor> states;
  std::vector<RegisteredTensor> registered;
  registered.reserve(count);
  const size_t stride = SpecStride(host->plugin_minor);
  for (size_t i = 0; i < count; ++i) {
    const cohort_tensor_spec& spec = SpecAt(specs, stride, i);
    if (spec.struct_size < spec_v1 || spec.struct_size > stride) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "register_tensors: specs[", i, "].struct_size is ", spec.struct_size, ", expected ",
          spec_v1, " to ", stride, " for a plugin of ABI 1.", host->plugin_minor)));
    }
    if (views[i].struct_size < view_v1) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("register_tensors: views[", i,
                                                          "].struct_size is ", views[i].struct_size,
                                                          ", expected at least ", view_v1)));
    }
    absl::StatusOr<TensorDescriptor> tensor = Describe(spec, i);
    if (!tensor.ok()) return Fail(tensor.status());
    absl::StatusOr<cohort_tensor_kind> kind = KindOf(spec, i);
    if (!kind.ok()) return Fail(kind.status());
    std::vector<TensorDescriptor>& into = *kind == COHORT_TENSOR_STATE ? states : parameters;
    registered.push_back(
        RegisteredTensor{*kind == COHORT_TENSOR_STATE, static_cast<uint32_t>(into.size())});
    into.push_back(*std::move(tensor));
  }
  if (parameters.empty()) {
    return Fail(
        absl::InvalidArgumentError("register_tensors: every tensor is state (COHORT_TENSOR_STATE); "
                                   "a model trains at least one parameter"));
  }
  auto create = [&](std::vector<TensorDescriptor> tensors,
                    ArenaGradients gradients) -> absl::StatusOr<std::unique_ptr<TensorArena>> {
    absl::StatusOr<std::unique_ptr<TensorArena>> arena =
        TensorArena::Create(std::move(tensors), *host->options.memory, gradients);
    if (!arena.ok()) {
      return absl::Status(arena.status().code(),
                          absl::StrCat("register_tensors: ", arena.status().message()));
    }
    return arena;
  };
  // Names are unique across both kinds (each arena checks its own).
  absl::flat_hash_set<absl::string_view> parameter_names;
  for (const TensorDescriptor& parameter : parameters) parameter_names.insert(parameter.name);
  for (const TensorDescriptor& state : states) {
    if (parameter_names.contains(state.name)) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("register_tensors: '", state.name,
                       "' is registered twice (as a parameter and as state)")));
    }
  }
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      create(std::move(parameters), ArenaGradients::kKeep);
  if (!arena.ok()) return Fail(arena.status());
  std::unique_ptr<TensorArena> state;
  if (!states.empty()) {
    absl::StatusOr<std::unique_ptr<TensorArena>> created =
        create(std::move(states), ArenaGradients::kNone);
    if (!created.ok()) return Fail(created.status());
    state = *std::move(created);
  }
  host->arena = *std::move(arena);
  {
    std::lock_guard<std::mutex> lock(host->ready_mutex);
    host->ready = std::make_unique<ReadyRanges>(*host->arena);
  }
  host->state = std::move(state);
  host->registered = std::move(registered);
  for (size_t i = 0; i < count; ++i) {
    const RegisteredTensor& where = host->registered[i];
    const TensorArena& in = where.state ? *host->state : *host->arena;
    views[i].data = in.data(where.index);
    views[i].grad = in.grad(where.index);
    views[i].element_count = in.placement(where.index).element_count;
    views[i].arena_offset = in.placement(where.index).offset;
  }
  return nullptr;
}

// Checks a gradients_ready report (the phase, the tensor, the range against those reported this
// batch) and records its range; the tensor's index in the arena.
absl::StatusOr<uint32_t> RecordReady(cohort_host* host, uint32_t tensor_index, uint64_t offset,
                                     uint64_t count) {
  if (host->phase != ModelPhase::kTraining) {
    return absl::FailedPreconditionError(
        "gradients_ready may only be called during train_batch (every call returning before "
        "train_batch does)");
  }
  if (tensor_index >= host->registered.size()) {
    return absl::OutOfRangeError(absl::StrCat("gradients_ready: tensor index ", tensor_index,
                                              " but the model registered ", host->registered.size(),
                                              " tensors"));
  }
  const RegisteredTensor where = host->registered[tensor_index];
  if (where.state) {
    return absl::InvalidArgumentError(
        absl::StrCat("gradients_ready: tensor '", host->state->spec(where.index).name,
                     "' is state (COHORT_TENSOR_STATE) and has no gradient"));
  }
  std::lock_guard<std::mutex> lock(host->ready_mutex);
  if (absl::Status added = host->ready->Add(where.index, offset, count); !added.ok()) return added;
  return where.index;
}

cohort_error* GradientsReady(cohort_host* host, uint32_t tensor_index, uint64_t offset,
                             uint64_t count) {
  absl::StatusOr<uint32_t> index = RecordReady(host, tensor_index, offset, count);
  if (!index.ok()) {
    host->NoteReadyBreach(index.status());
    return Fail(index.status());
  }
  if (host->options.on_gradients_ready) host->options.on_gradients_ready(*index, offset, count);
  return nullptr;
}

}  // namespace

const cohort_host_api* HostApi() {
  static const cohort_host_api table = [] {
    cohort_host_api t{};
    t.struct_size = COHORT_STRUCT_SIZE(cohort_host_api, hparam_text);
    t.abi_version = {COHORT_ABI_VERSION_MAJOR, COHORT_ABI_VERSION_MINOR};
    t.extensions = nullptr;
    t.error_create = &ErrorCreate;
    t.error_destroy = &ErrorDestroy;
    t.error_code = &ErrorCode;
    t.error_message = &ErrorMessage;
    t.log = &Log;
    t.trial_context = &TrialContext;
    t.hparam_type = &HparamType;
    t.hparam_int = &HparamInt;
    t.hparam_double = &HparamDouble;
    t.hparam_bool = &HparamBool;
    t.hparam_string = &HparamString;
    t.register_tensors = &RegisterTensors;
    t.gradients_ready = &GradientsReady;
    t.metric_add = &MetricAdd;
    t.metric_add_device = &MetricAddDevice;
    t.writer_write = &WriterWrite;
    t.reader_read = &ReaderRead;
    t.reader_remaining = &ReaderRemaining;
    t.hparam_text = &HparamText;
    return t;
  }();
  return &table;
}

}  // namespace cohort
