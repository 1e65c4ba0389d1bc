#include "runtime/control/worker_messages.h"

#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/control/envelope.h"
#include "worker_generated.h"

namespace cohort {
namespace {

using flatbuffers::FlatBufferBuilder;

std::string Text(const flatbuffers::String* text) { return text ? text->str() : std::string(); }

flatbuffers::Offset<flatbuffers::String> Text(FlatBufferBuilder& builder, const std::string& text) {
  return builder.CreateString(text.data(), text.size());
}

// Appends each message's table to the builder and wraps it in an envelope.
struct MessageEncoder {
  FlatBufferBuilder& builder;

  std::string operator()(const WorkerHello& m) const {
    auto table = fbs::CreateWorkerHello(builder, m.trial_id, m.pid, m.rank, m.batches_trained,
                                        m.total_batches);
    return FinishWorkerEnvelope(builder, fbs::WorkerPayload::WorkerHello, table.Union());
  }
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fbs::NamedValue>>> Named(
      const std::vector<NamedValue>& values) const {
    std::vector<flatbuffers::Offset<fbs::NamedValue>> offsets;
    offsets.reserve(values.size());
    for (const NamedValue& value : values) {
      offsets.push_back(fbs::CreateNamedValue(builder, Text(builder, value.name), value.value));
    }
    return builder.CreateVector(offsets);
  }
  std::string operator()(const MetricsReport& m) const {
    const auto kind =
        m.kind == ReportKind::kValidation ? fbs::ReportKind::Validation : fbs::ReportKind::Training;
    const auto metrics = Named(m.metrics);
    const auto timings = m.timings.empty() ? decltype(metrics)() : Named(m.timings);
    std::vector<flatbuffers::Offset<fbs::RankPace>> paces;
    for (const RankPace& pace : m.ranks) {
      paces.push_back(fbs::CreateRankPace(builder, pace.rank, pace.compute_seconds,
                                          pace.step_seconds, pace.vs_fastest, pace.vs_best));
    }
    const auto ranks =
        paces.empty() ? decltype(builder.CreateVector(paces))() : builder.CreateVector(paces);
    auto table =
        fbs::CreateMetricsReport(builder, m.trial_id, kind, m.batches, m.records, m.unix_time,
                                 metrics, timings, m.records_per_second, m.exchanged_bytes, ranks);
    return FinishWorkerEnvelope(builder, fbs::WorkerPayload::MetricsReport, table.Union());
  }
  std::string operator()(const ProgressReport& m) const {
    auto table = fbs::CreateProgressReport(builder, m.trial_id, m.batches, m.total_batches,
                                           m.records, m.latest_loss, m.records_per_second);
    return FinishWorkerEnvelope(builder, fbs::WorkerPayload::ProgressReport, table.Union());
  }
  std::string operator()(const CheckpointReport& m) const {
    auto table = fbs::CreateCheckpointReport(builder, m.trial_id, Text(builder, m.id), m.batches,
                                             m.records, m.bytes, m.restored);
    return FinishWorkerEnvelope(builder, fbs::WorkerPayload::CheckpointReport, table.Union());
  }
  std::string operator()(const TrialFinished& m) const {
    fbs::TrialExit exit = fbs::TrialExit::Completed;
    if (m.exit == TrialExit::kStopped) exit = fbs::TrialExit::Stopped;
    if (m.exit == TrialExit::kFailed) exit = fbs::TrialExit::Failed;
    auto table = fbs::CreateTrialFinished(builder, m.trial_id, exit, m.batches,
                                          Text(builder, m.message), m.rank);
    return FinishWorkerEnvelope(builder, fbs::WorkerPayload::TrialFinished, table.Union());
  }
  std::string operator()(const RendezvousSet& m) const {
    auto table =
        fbs::CreateRendezvousSet(builder, Text(builder, m.key), CreateBytes(builder, m.value));
    return FinishWorkerEnvelope(builder, fbs::WorkerPayload::RendezvousSet, table.Union());
  }
  std::string operator()(const RendezvousGet& m) const {
    auto table = fbs::CreateRendezvousGet(builder, Text(builder, m.key), m.request_id);
    return FinishWorkerEnvelope(builder, fbs::WorkerPayload::RendezvousGet, table.Union());
  }
  std::string operator()(const Heartbeat& m) const {
    auto table = fbs::CreateHeartbeat(builder, m.trial_id, m.rank, m.unix_time, m.batches_trained);
    return FinishWorkerEnvelope(builder, fbs::WorkerPayload::Heartbeat, table.Union());
  }
};

absl::Status MalformedWorkerMessage(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed worker message: ", what));
}

WorkerMessage Decode(const fbs::WorkerHello& t) {
  return WorkerHello{t.trial_id(), t.pid(), t.rank(), t.batches_trained(), t.total_batches()};
}

absl::StatusOr<WorkerMessage> Decode(const fbs::MetricsReport& t) {
  MetricsReport m{t.trial_id(), ReportKind::kTraining, t.batches(), t.records(), t.unix_time(), {}};
  switch (t.kind()) {
    case fbs::ReportKind::Training:
      m.kind = ReportKind::kTraining;
      break;
    case fbs::ReportKind::Validation:
      m.kind = ReportKind::kValidation;
      break;
    default:
      return MalformedWorkerMessage(
          absl::StrCat("unknown report kind ", static_cast<int>(t.kind())));
  }
  for (auto [list, values] :
       {std::pair{t.metrics(), &m.metrics}, std::pair{t.timings(), &m.timings}}) {
    if (list == nullptr) continue;
    values->reserve(list->size());
    for (const fbs::NamedValue* value : *list) {
      values->push_back(NamedValue{Text(value->name()), value->value()});
    }
  }
  m.records_per_second = t.records_per_second();
  m.exchanged_bytes = t.exchanged_bytes();
  if (t.ranks() != nullptr) {
    for (const fbs::RankPace* pace : *t.ranks()) {
      m.ranks.push_back({pace->rank(), pace->compute_seconds(), pace->step_seconds(),
                         pace->vs_fastest(), pace->vs_best()});
    }
  }
  return m;
}

WorkerMessage Decode(const fbs::ProgressReport& t) {
  return ProgressReport{t.trial_id(), t.batches(),     t.total_batches(),
                        t.records(),  t.latest_loss(), t.records_per_second()};
}

absl::StatusOr<WorkerMessage> Decode(const fbs::CheckpointReport& t) {
  if (t.id()->size() == 0 && !(t.restored() && t.batches() == 0)) {
    return MalformedWorkerMessage("checkpoint report without a checkpoint id");
  }
  return CheckpointReport{t.trial_id(), t.id()->str(), t.batches(),
                          t.records(),  t.bytes(),     t.restored()};
}

absl::StatusOr<WorkerMessage> Decode(const fbs::TrialFinished& t) {
  TrialFinished m{t.trial_id(), TrialExit::kCompleted, t.batches(), Text(t.message()), t.rank()};
  switch (t.exit()) {
    case fbs::TrialExit::Completed:
      m.exit = TrialExit::kCompleted;
      break;
    case fbs::TrialExit::Stopped:
      m.exit = TrialExit::kStopped;
      break;
    case fbs::TrialExit::Failed:
      m.exit = TrialExit::kFailed;
      break;
    default:
      return MalformedWorkerMessage(
          absl::StrCat("unknown trial exit ", static_cast<int>(t.exit())));
  }
  return m;
}

absl::StatusOr<WorkerMessage> Decode(const fbs::RendezvousSet& t) {
  if (t.value() != nullptr && t.value()->size() > kMaxRendezvousValueBytes) {
    return MalformedWorkerMessage(absl::StrCat("rendezvous value of ", t.value()->size(),
                                               " bytes for '", t.key()->str(), "' exceeds ",
                                               kMaxRendezvousValueBytes));
  }
  return RendezvousSet{t.key()->str(), BytesOf(t.value())};
}

WorkerMessage Decode(const fbs::RendezvousGet& t) {
  return RendezvousGet{t.key()->str(), t.request_id()};
}

WorkerMessage Decode(const fbs::Heartbeat& t) {
  return Heartbeat{t.trial_id(), t.rank(), t.unix_time(), t.batches_trained()};
}

}  // namespace

std::string EncodeWorkerMessage(const WorkerMessage& message) {
  FlatBufferBuilder builder(256);
  // Store every field, so a value equal to the default but not identical (-0.0) survives.
  builder.ForceDefaults(true);
  return std::visit(MessageEncoder{builder}, message);
}

absl::StatusOr<WorkerMessage> DecodeWorkerMessage(absl::string_view bytes) {
  std::vector<uint64_t> storage;
  absl::StatusOr<const fbs::WorkerEnvelope*> opened = OpenWorkerEnvelope(bytes, storage);
  if (!opened.ok()) return opened.status();
  const fbs::WorkerEnvelope& envelope = **opened;
  switch (envelope.payload_type()) {
    case fbs::WorkerPayload::WorkerHello:
      return Decode(*envelope.payload_as_WorkerHello());
    case fbs::WorkerPayload::MetricsReport:
      return Decode(*envelope.payload_as_MetricsReport());
    case fbs::WorkerPayload::ProgressReport:
      return Decode(*envelope.payload_as_ProgressReport());
    case fbs::WorkerPayload::CheckpointReport:
      return Decode(*envelope.payload_as_CheckpointReport());
    case fbs::WorkerPayload::TrialFinished:
      return Decode(*envelope.payload_as_TrialFinished());
    case fbs::WorkerPayload::RendezvousSet:
      return Decode(*envelope.payload_as_RendezvousSet());
    case fbs::WorkerPayload::RendezvousGet:
      return Decode(*envelope.payload_as_RendezvousGet());
    case fbs::WorkerPayload::Heartbeat:
      return Decode(*envelope.payload_as_Heartbeat());
    case fbs::WorkerPayload::StopCommand:
    case fbs::WorkerPayload::RendezvousValue:
      return MalformedWorkerMessage(
          absl::StrCat("a ", fbs::EnumNameWorkerPayload(envelope.payload_type()),
                       " is a supervisor command, not a worker message"));
    default:
      return MalformedWorkerMessage(
          absl::StrCat("unknown message type ", static_cast<int>(envelope.payload_type())));
  }
}

absl::string_view WorkerMessageName(const WorkerMessage& message) {
  static constexpr absl::string_view kNames[] = {
      "WorkerHello",   "MetricsReport", "ProgressReport", "CheckpointReport",
      "TrialFinished", "RendezvousSet", "RendezvousGet",  "Heartbeat"};
  static_assert(std::size(kNames) == std::variant_size_v<WorkerMessage>);
  return kNames[message.index()];
}

}  // namespace cohort
