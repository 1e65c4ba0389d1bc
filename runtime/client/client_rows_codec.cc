#include "runtime/client/client_rows_codec.h"

namespace cohort::client_wire {

// ---- encoding

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> Texts(
    FlatBufferBuilder& builder, const std::vector<std::string>& texts) {
  std::vector<Offset<flatbuffers::String>> strings;
  strings.reserve(texts.size());
  for (const std::string& text : texts) strings.push_back(CreateText(builder, text));
  return builder.CreateVector(strings);
}

Offset<wire::NamedValue> Encode(FlatBufferBuilder& builder, const NamedValue& value) {
  return wire::CreateNamedValue(builder, CreateText(builder, value.name), value.value);
}

Offset<wire::RankPace> Encode(FlatBufferBuilder& builder, const RankPace& pace) {
  return wire::CreateRankPace(builder, pace.rank, pace.compute_seconds, pace.step_seconds,
                              pace.vs_fastest, pace.vs_best);
}

Offset<wire::GpuReading> Encode(FlatBufferBuilder& builder, const GpuReading& gpu) {
  return wire::CreateGpuReading(builder, gpu.rank, gpu.gpu, CreateText(builder, gpu.name),
                                gpu.utilization, gpu.memory_used, gpu.memory_total);
}

Offset<wire::ExperimentSummary> Encode(FlatBufferBuilder& builder, const ExperimentSummary& s) {
  return wire::CreateExperimentSummary(
      builder, s.experiment_id, CreateText(builder, s.name), ToWire<wire::ExperimentState>(s.state),
      CreateText(builder, s.searcher), s.progress, s.slots_per_trial, s.trials, s.active_trials,
      s.completed_trials, s.errored_trials, s.submitted_unix_time, s.ended_unix_time,
      CreateText(builder, s.error), s.archived);
}

Offset<wire::CheckpointRow> Encode(FlatBufferBuilder& builder, const CheckpointRow& row) {
  return wire::CreateCheckpointRow(
      builder, CreateText(builder, row.checkpoint_id), row.experiment_id, row.trial_id, row.batches,
      row.has_metric, row.metric, CreateText(builder, row.path), row.bytes,
      ToWire<wire::CheckpointCondition>(row.condition), CreateText(builder, row.problem));
}

Offset<wire::TaskRow> Encode(FlatBufferBuilder& builder, const TaskRow& row) {
  return wire::CreateTaskRow(builder, row.task_id, row.experiment_id, row.trial_id, row.slots,
                             ToWire<wire::TaskRowState>(row.state), Texts(builder, row.agents),
                             CreateText(builder, row.reason), row.queued_unix_time,
                             CreateText(builder, row.job));
}

Offset<wire::AgentRow> Encode(FlatBufferBuilder& builder, const AgentRow& row) {
  return wire::CreateAgentRow(
      builder, CreateText(builder, row.agent_id), CreateText(builder, row.hostname), row.slots,
      row.busy_slots, row.connected, row.last_seen_unix_time, builder.CreateVector(row.task_ids));
}

Offset<wire::TrialLogLine> Encode(FlatBufferBuilder& builder, const TrialLogLine& line) {
  return wire::CreateTrialLogLine(builder, line.sequence, line.rank, line.attempt,
                                  line.stderr_stream, line.unix_time,
                                  CreateText(builder, line.text), line.orchestrator_line);
}

Offset<wire::TrialSummary> Encode(FlatBufferBuilder& builder, const TrialSummary& t) {
  return wire::CreateTrialSummary(
      builder, t.trial_id, t.request_id, ToWire<wire::TrialState>(t.state),
      CreateText(builder, t.hyperparameters_json), t.batches_trained, t.target_batches, t.restarts,
      t.task_id, EncodeAll(builder, t.latest_training), EncodeAll(builder, t.latest_validation),
      t.has_best_metric, t.best_metric, CreateText(builder, t.latest_checkpoint_id),
      CreateText(builder, t.error), EncodeAll(builder, t.latest_timings), t.records_per_second,
      t.scaling_efficiency, t.baseline_experiment_id,
      t.latest_gpus.empty() ? 0 : EncodeAll(builder, t.latest_gpus),
      t.latest_ranks.empty() ? 0 : EncodeAll(builder, t.latest_ranks), t.scaled_learning_rate,
      t.latest_training_batches, t.latest_validation_batches, t.best_metric_batches,
      CreateText(builder, t.best_checkpoint_id));
}

Offset<wire::ValidationRow> Encode(FlatBufferBuilder& builder, const ValidationRow& row) {
  return wire::CreateValidationRow(builder, row.batches, EncodeAll(builder, row.metrics));
}

// ---- decoding

std::vector<std::string> Texts(const flatbuffers::Vector<Offset<flatbuffers::String>>* list) {
  std::vector<std::string> texts;
  if (list == nullptr) return texts;
  texts.reserve(list->size());
  for (const flatbuffers::String* text : *list) texts.push_back(text->str());
  return texts;
}

NamedValue Read(Reader&, const wire::NamedValue& t) { return {t.name()->str(), t.value()}; }

RankPace Read(Reader&, const wire::RankPace& t) {
  return {t.rank(), t.compute_seconds(), t.step_seconds(), t.vs_fastest(), t.vs_best()};
}

GpuReading Read(Reader&, const wire::GpuReading& t) {
  return {t.rank(), t.gpu(), TextOf(t.name()), t.utilization(), t.memory_used(), t.memory_total()};
}

ExperimentSummary Read(Reader& reader, const wire::ExperimentSummary& t) {
  return {t.experiment_id(),
          TextOf(t.name()),
          reader.Enum<ExperimentState>(t.state(), "experiment state"),
          TextOf(t.searcher()),
          t.progress(),
          t.slots_per_trial(),
          t.trials(),
          t.active_trials(),
          t.completed_trials(),
          t.errored_trials(),
          t.submitted_unix_time(),
          t.ended_unix_time(),
          TextOf(t.error()),
          t.archived()};
}

CheckpointRow Read(Reader& reader, const wire::CheckpointRow& t) {
  return {TextOf(t.checkpoint_id()),
          t.experiment_id(),
          t.trial_id(),
          t.batches(),
          t.has_metric(),
          t.metric(),
          TextOf(t.path()),
          t.bytes(),
          reader.Enum<CheckpointCondition>(t.condition(), "checkpoint condition"),
          TextOf(t.problem())};
}

TaskRow Read(Reader& reader, const wire::TaskRow& t) {
  return {t.task_id(),
          t.experiment_id(),
          t.trial_id(),
          t.slots(),
          reader.Enum<TaskRowState>(t.state(), "task row state"),
          Texts(t.agents()),
          TextOf(t.reason()),
          t.queued_unix_time(),
          TextOf(t.job())};
}

AgentRow Read(Reader& reader, const wire::AgentRow& t) {
  return {TextOf(t.agent_id()),
          TextOf(t.hostname()),
          t.slots(),
          t.busy_slots(),
          t.connected(),
          t.last_seen_unix_time(),
          ReadScalars(reader, t.task_ids())};
}

TrialLogLine Read(Reader&, const wire::TrialLogLine& t) {
  return {t.sequence(),  t.rank(),         t.attempt(),          t.stderr_stream(),
          t.unix_time(), TextOf(t.text()), t.orchestrator_line()};
}

TrialSummary Read(Reader& reader, const wire::TrialSummary& t) {
  return {t.trial_id(),
          t.request_id(),
          reader.Enum<TrialState>(t.state(), "trial state"),
          TextOf(t.hyperparameters_json()),
          t.batches_trained(),
          t.target_batches(),
          t.restarts(),
          t.task_id(),
          ReadAll(reader, t.latest_training()),
          ReadAll(reader, t.latest_validation()),
          t.has_best_metric(),
          t.best_metric(),
          TextOf(t.latest_checkpoint_id()),
          TextOf(t.error()),
          ReadAll(reader, t.latest_timings()),
          t.records_per_second(),
          t.scaling_efficiency(),
          t.baseline_experiment_id(),
          ReadAll(reader, t.latest_gpus()),
          ReadAll(reader, t.latest_ranks()),
          t.scaled_learning_rate(),
          t.latest_training_batches(),
          t.latest_validation_batches(),
          t.best_metric_batches(),
          TextOf(t.best_checkpoint_id())};
}

ValidationRow Read(Reader& reader, const wire::ValidationRow& t) {
  return {t.batches(), ReadAll(reader, t.metrics())};
}

}  // namespace cohort::client_wire
