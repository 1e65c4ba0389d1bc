#include "runtime/plugin/loaded_model.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/base/permanent_failure.h"
#include "runtime/plugin/error.h"
#include "runtime/plugin/host_api.h"
#include "runtime/plugin/state_stream.h"

namespace cohort {

template <class Describe, class Call>
absl::Status LoadedModel::Invoke(ModelPhase phase, Describe&& what, Call&& call) {
  host_->phase = phase;
  absl::Status status = TakeError(call());
  host_->phase = ModelPhase::kIdle;
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("plugin ", plugin_->name(), ": ", what(), ": ",
                                                  status.message()));
}

namespace {
// Describes a call for an error message; built only when the call failed.
auto Named(absl::string_view name) {
  return [name] { return std::string(name); };
}
}  // namespace

absl::StatusOr<std::unique_ptr<LoadedModel>> LoadedModel::Create(
    std::shared_ptr<const PluginLibrary> plugin, ModelHostOptions options) {
  if (options.memory == nullptr)
    return absl::InvalidArgumentError("LoadedModel::Create: no memory provider");
  auto host = std::make_unique<ModelHost>(std::move(options));
  host->plugin_minor = plugin->abi_version().minor;
  std::unique_ptr<LoadedModel> model(new LoadedModel(std::move(plugin), std::move(host)));

  const cohort_model_create_args args{COHORT_STRUCT_SIZE(cohort_model_create_args, host), HostApi(),
                                      model->host_.get()};
  cohort_model* created = nullptr;
  absl::Status s = model->Invoke(ModelPhase::kCreating, Named("model_create"), [&] {
    return model->plugin_->api().model_create(&args, &created);
  });
  if (!s.ok()) return s;
  model->model_ = created;
  if (created == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "plugin ", model->plugin_->name(), ": model_create succeeded but returned no model"));
  }
  if (model->host_->arena == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("plugin ", model->plugin_->name(),
                     ": model_create returned without registering its tensors (call "
                     "host_api.register_tensors once)"));
  }
  return model;
}

std::set<std::string> LoadedModel::HyperparametersRead() const {
  std::lock_guard<std::mutex> lock(host_->hyperparameters_read_mutex);
  return host_->hyperparameters_read;
}

LoadedModel::~LoadedModel() {
  if (model_ != nullptr) plugin_->api().model_destroy(model_);
}

absl::StatusOr<uint64_t> LoadedModel::DatasetSize(cohort_split split) {
  uint64_t records = 0;
  absl::Status s = Invoke(
      ModelPhase::kIdle, [split] { return absl::StrCat("dataset_size(split ", split, ")"); },
      [&] { return plugin_->api().dataset_size(model_, split, &records); });
  if (!s.ok()) return s;
  return records;
}

absl::StatusOr<BatchMetrics> LoadedModel::RunBatch(const BatchSpec& batch, bool training) {
  const cohort_batch raw{COHORT_STRUCT_SIZE(cohort_batch, record_count),
                         batch.split,
                         batch.batch_index,
                         batch.epoch,
                         batch.record_indices.data(),
                         batch.record_indices.size()};
  cohort_metrics sink;
  sink.host = host_.get();
  const auto what = [&] {
    return absl::StrCat(training ? "train_batch" : "evaluate_batch", " (batch_index ",
                        batch.batch_index, ")");
  };
  // A failure of this call every attempt would meet, named as Invoke names the plugin's own.
  const auto permanent = [&](absl::StatusCode code, absl::string_view why) {
    return PermanentFailure(
        absl::Status(code, absl::StrCat("plugin ", plugin_->name(), ": ", what(), why)));
  };
  if (training) host_->BeginTrainingBatch();
  absl::Status s = Invoke(training ? ModelPhase::kTraining : ModelPhase::kEvaluating, what, [&] {
    return training ? plugin_->api().train_batch(model_, &raw, &sink)
                    : plugin_->api().evaluate_batch(model_, &raw, &sink);
  });
  // A gradients_ready report the host refused (this batch, or between batches: a call after the
  // previous train_batch returned) fails the batch whatever the plugin made of it, and would fail
  // every attempt the same way.
  if (absl::Status breach = training ? host_->TakeReadyBreach() : absl::OkStatus(); !breach.ok()) {
    s = permanent(breach.code(), absl::StrCat(": ", breach.message()));
  }
  // The values the call left on the device are copied now, behind its work (even after a failure,
  // so nothing noted is left for the next call).
  if (DeviceValueReader* reader = host_->options.device_values; reader != nullptr) {
    if (absl::Status copied = reader->EnqueueCopies(); !copied.ok() && s.ok()) s = copied;
  }
  if (!s.ok()) return s;
  // Training needs the batch's loss, over its records (a rank's empty share of a last batch has
  // none): a loss over none would count for nothing, and the loss shown would be an older one's.
  // Either defect would fail every attempt alike.
  if (training) {
    const Metric* loss = sink.batch.Find("loss");
    if (loss == nullptr) {
      return permanent(absl::StatusCode::kFailedPrecondition,
                       " did not report the metric \"loss\"");
    }
    if (loss->record_count == 0 && !batch.record_indices.empty()) {
      return permanent(absl::StatusCode::kFailedPrecondition,
                       absl::StrCat(" reported \"loss\" over 0 records of a batch of ",
                                    batch.record_indices.size(),
                                    ": give metric_add the records the value is over (a mean's "
                                    "weight)"));
    }
  }
  return std::move(sink.batch);
}

absl::StatusOr<BatchMetrics> LoadedModel::TrainBatch(const BatchSpec& batch) {
  return RunBatch(batch, true);
}

absl::Status LoadedModel::Settle(std::vector<BatchMetrics>& batches) {
  const bool any = std::any_of(batches.begin(), batches.end(),
                               [](const BatchMetrics& b) { return b.unsettled(); });
  DeviceValueReader* reader = host_->options.device_values;
  if (!any || reader == nullptr) return absl::OkStatus();
  absl::StatusOr<std::vector<double>> values = reader->TakeAll();
  if (!values.ok()) return values.status();
  size_t settled = 0;
  for (BatchMetrics& batch : batches) {
    for (Metric& metric : batch.metrics) {
      if (!metric.device_ticket) continue;
      if (*metric.device_ticket >= values->size()) {
        return absl::InternalError(absl::StrCat("metric '", metric.name, "': device value ",
                                                *metric.device_ticket, " of only ", values->size(),
                                                " captured"));
      }
      metric.value = (*values)[*metric.device_ticket];
      metric.device_ticket.reset();
      ++settled;
    }
  }
  if (settled != values->size()) {
    return absl::InternalError(absl::StrCat(values->size(),
                                            " metric values were captured on the device but ",
                                            settled, " were settled"));
  }
  return absl::OkStatus();
}

absl::StatusOr<BatchMetrics> LoadedModel::EvaluateBatch(const BatchSpec& batch) {
  return RunBatch(batch, false);
}

absl::Status LoadedModel::OptimizerStep(uint64_t step, uint64_t batches_trained) {
  if (!has_optimizer()) {
    return absl::FailedPreconditionError(
        absl::StrCat("plugin ", plugin_->name(), " has no optimizer_step"));
  }
  const cohort_step_info info{COHORT_STRUCT_SIZE(cohort_step_info, batches_trained), step,
                              batches_trained};
  return Invoke(
      ModelPhase::kStepping, [step] { return absl::StrCat("optimizer_step (step ", step, ")"); },
      [&] { return plugin_->api().optimizer_step(model_, &info); });
}

absl::StatusOr<std::string> LoadedModel::SaveState() {
  if (!has_state()) return std::string();
  cohort_writer writer;
  absl::Status s = Invoke(ModelPhase::kSaving, Named("save_state"),
                          [&] { return plugin_->api().save_state(model_, &writer); });
  if (!s.ok()) return s;
  return std::move(writer.bytes);
}

absl::Status LoadedModel::LoadState(absl::string_view bytes) {
  if (!has_state()) {
    if (bytes.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("plugin ", plugin_->name(),
                                                      " keeps no state but ", bytes.size(),
                                                      " bytes of plugin state were given"));
  }
  cohort_reader reader{bytes, 0};
  absl::Status s = Invoke(ModelPhase::kLoading, Named("load_state"),
                          [&] { return plugin_->api().load_state(model_, &reader); });
  if (!s.ok()) return s;
  if (reader.position != bytes.size()) {
    return absl::DataLossError(absl::StrCat("plugin ", plugin_->name(), ": load_state read ",
                                            reader.position, " of ", bytes.size(),
                                            " bytes of its saved state"));
  }
  return absl::OkStatus();
}

}  // namespace cohort
