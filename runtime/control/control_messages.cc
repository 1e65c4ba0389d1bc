// The wire codec of control_messages.h: structs <-> ControlEnvelope (schemas/control.fbs).
#include "runtime/control/control_messages.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "control_generated.h"
#include "runtime/control/envelope_codec.h"

namespace cohort {
namespace {

namespace wire = fbs::control;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// Each C++ enum lists the wire enum's values in order, so a value in range converts by cast.
static_assert(static_cast<int>(SlotKind::kGpu) == static_cast<int>(wire::SlotKind::MAX));
static_assert(static_cast<int>(TaskState::kExited) == static_cast<int>(wire::TaskState::MAX));
static_assert(static_cast<int>(ReportKind::kTraining) ==
              static_cast<int>(wire::ReportKind::Training));
static_assert(static_cast<int>(ReportKind::kValidation) == static_cast<int>(wire::ReportKind::MAX));
static_assert(static_cast<int>(LogStream::kAgent) == static_cast<int>(wire::LogStream::MAX));
static_assert(static_cast<int>(ControlErrorCode::kInvalidRequest) ==
              static_cast<int>(wire::ErrorCode::MAX));

// ---- encoding

Offset<wire::NamedValue> Encode(FlatBufferBuilder& builder, const NamedValue& value) {
  return wire::CreateNamedValue(builder, CreateText(builder, value.name), value.value);
}

Offset<wire::KeyValue> Encode(FlatBufferBuilder& builder, const KeyValue& pair) {
  return wire::CreateKeyValue(builder, CreateText(builder, pair.key),
                              CreateText(builder, pair.value));
}

Offset<wire::AgentSlot> Encode(FlatBufferBuilder& builder, const AgentSlot& slot) {
  return wire::CreateAgentSlot(builder, slot.index, ToWire<wire::SlotKind>(slot.kind),
                               slot.device_id, CreateText(builder, slot.name));
}

Offset<wire::TaskEntry> Encode(FlatBufferBuilder& builder, const TaskEntry& task) {
  return wire::CreateTaskEntry(builder, task.task_id, task.trial_id, task.experiment_id,
                               ToWire<wire::TaskState>(task.state),
                               builder.CreateVector(task.slots), builder.CreateVector(task.ranks));
}

Offset<wire::RankAssignment> Encode(FlatBufferBuilder& builder, const RankAssignment& rank) {
  return wire::CreateRankAssignment(builder, rank.rank, rank.local_rank, rank.slot_index);
}

Offset<wire::RankProcess> Encode(FlatBufferBuilder& builder, const RankProcess& process) {
  return wire::CreateRankProcess(builder, process.rank, process.pid);
}

Offset<wire::GpuReading> Encode(FlatBufferBuilder& builder, const GpuReading& gpu) {
  return wire::CreateGpuReading(builder, gpu.rank, gpu.gpu, CreateText(builder, gpu.name),
                                gpu.utilization, gpu.memory_used, gpu.memory_total);
}

Offset<wire::RankPace> Encode(FlatBufferBuilder& builder, const RankPace& pace) {
  return wire::CreateRankPace(builder, pace.rank, pace.compute_seconds, pace.step_seconds,
                              pace.vs_fastest, pace.vs_best);
}

// Defined below EncodeAll, which it uses.
Offset<wire::TaskGpuReadings> Encode(FlatBufferBuilder& builder, const TaskGpuReadings& task);

Offset<wire::LogLine> Encode(FlatBufferBuilder& builder, const LogLine& line) {
  return wire::CreateLogLine(builder, line.rank, ToWire<wire::LogStream>(line.stream),
                             line.unix_time, CreateText(builder, line.text));
}

template <typename Item>
auto EncodeAll(FlatBufferBuilder& builder, const std::vector<Item>& items) {
  return CreateTables(builder, items,
                      [&builder](const Item& item) { return Encode(builder, item); });
}

Offset<wire::TaskGpuReadings> Encode(FlatBufferBuilder& builder, const TaskGpuReadings& task) {
  return wire::CreateTaskGpuReadings(builder, task.task_id, EncodeAll(builder, task.gpus));
}

// Appends a message's table; returns it with its union type.
struct PayloadEncoder {
  using Payload = std::pair<wire::ControlPayload, Offset<void>>;
  FlatBufferBuilder& builder;

  Payload operator()(const AgentHello& m) const {
    auto table = wire::CreateAgentHello(
        builder, CreateText(builder, m.agent_id), CreateText(builder, m.cohort_version),
        CreateText(builder, m.hostname), EncodeAll(builder, m.slots), EncodeAll(builder, m.tasks));
    return {wire::ControlPayload::AgentHello, table.Union()};
  }
  Payload operator()(const AgentHeartbeat& m) const {
    const auto task_gpus = m.task_gpus.empty() ? decltype(EncodeAll(builder, m.task_gpus))()
                                               : EncodeAll(builder, m.task_gpus);
    auto table = wire::CreateAgentHeartbeat(builder, CreateText(builder, m.agent_id), m.unix_time,
                                            m.busy_slots, builder.CreateVector(m.running_task_ids),
                                            task_gpus, m.departing);
    return {wire::ControlPayload::AgentHeartbeat, table.Union()};
  }
  Payload operator()(const StartTask& m) const {
    const WorkerSpec& w = m.worker;
    auto worker = wire::CreateWorkerSpec(
        builder, CreateText(builder, w.plugin_path), CreateText(builder, w.config_path),
        CreateText(builder, w.config_yaml), CreateText(builder, w.checkpoint_root),
        CreateText(builder, w.resume_checkpoint_id), w.validate_at_resume, w.trial_number);
    auto rendezvous =
        wire::CreateRendezvousAddress(builder, CreateText(builder, m.rendezvous.endpoint),
                                      CreateText(builder, m.rendezvous.prefix));
    auto table =
        wire::CreateStartTask(builder, m.task_id, m.trial_id, m.experiment_id, m.attempt, worker,
                              EncodeAll(builder, m.ranks), m.world_size, m.cross_rank, m.cross_size,
                              rendezvous, EncodeAll(builder, m.environment));
    return {wire::ControlPayload::StartTask, table.Union()};
  }
  Payload operator()(const KillTask& m) const {
    auto table =
        wire::CreateKillTask(builder, m.task_id, CreateText(builder, m.reason), m.grace_seconds);
    return {wire::ControlPayload::KillTask, table.Union()};
  }
  Payload operator()(const TaskStatus& m) const {
    auto table = wire::CreateTaskStatus(builder, m.task_id, ToWire<wire::TaskState>(m.state),
                                        EncodeAll(builder, m.processes));
    return {wire::ControlPayload::TaskStatus, table.Union()};
  }
  Payload operator()(const TaskExit& m) const {
    auto table = wire::CreateTaskExit(builder, m.task_id, m.rank, m.exit_code, m.signal,
                                      CreateText(builder, m.reason), m.killed_by_agent, m.stopped,
                                      m.unfinished);
    return {wire::ControlPayload::TaskExit, table.Union()};
  }
  Payload operator()(const TaskMetricsReport& m) const {
    const MetricsReport& r = m.report;
    const auto metrics = EncodeAll(builder, r.metrics);
    const auto timings = r.timings.empty() ? decltype(metrics)() : EncodeAll(builder, r.timings);
    const auto gpus =
        r.gpus.empty() ? decltype(EncodeAll(builder, r.gpus))() : EncodeAll(builder, r.gpus);
    const auto ranks =
        r.ranks.empty() ? decltype(EncodeAll(builder, r.ranks))() : EncodeAll(builder, r.ranks);
    auto table = wire::CreateTaskMetricsReport(
        builder, m.task_id, r.trial_id, ToWire<wire::ReportKind>(r.kind), r.batches, r.records,
        r.unix_time, metrics, timings, r.records_per_second, r.exchanged_bytes, gpus, ranks);
    return {wire::ControlPayload::TaskMetricsReport, table.Union()};
  }
  Payload operator()(const TaskCheckpointReport& m) const {
    auto table = wire::CreateTaskCheckpointReport(
        builder, m.task_id, m.trial_id, CreateText(builder, m.checkpoint_id), m.batches, m.records,
        m.bytes, EncodeAll(builder, m.metadata), m.restored);
    return {wire::ControlPayload::TaskCheckpointReport, table.Union()};
  }
  Payload operator()(const LogBatch& m) const {
    auto table = wire::CreateLogBatch(builder, m.task_id, EncodeAll(builder, m.lines));
    return {wire::ControlPayload::LogBatch, table.Union()};
  }
  Payload operator()(const TaskProgress& m) const {
    const ProgressReport& p = m.progress;
    auto table =
        wire::CreateTaskProgress(builder, m.task_id, p.trial_id, p.batches, p.total_batches,
                                 p.records, p.latest_loss, p.records_per_second);
    return {wire::ControlPayload::TaskProgress, table.Union()};
  }
  Payload operator()(const TaskListRequest&) const {
    return {wire::ControlPayload::TaskListRequest, wire::CreateTaskListRequest(builder).Union()};
  }
  Payload operator()(const TaskList& m) const {
    auto table = wire::CreateTaskList(builder, EncodeAll(builder, m.tasks));
    return {wire::ControlPayload::TaskList, table.Union()};
  }
  Payload operator()(const Ack&) const {
    return {wire::ControlPayload::Ack, wire::CreateAck(builder).Union()};
  }
  Payload operator()(const ErrorReply& m) const {
    auto table = wire::CreateErrorReply(builder, ToWire<wire::ErrorCode>(m.code),
                                        CreateText(builder, m.message));
    return {wire::ControlPayload::ErrorReply, table.Union()};
  }
};

// ---- decoding

static_assert(KeepsVersionFieldsFirst<wire::ControlEnvelope>());

constexpr EnvelopeProtocol kControlProtocol{"control",
                                            wire::ControlEnvelopeIdentifier,
                                            wire::VerifyControlEnvelopeBuffer,
                                            {kControlProtocolMajor, kControlProtocolMinor}};

absl::Status Invalid(absl::string_view what) { return MalformedMessage(kControlProtocol, what); }

using Reader = EnvelopeTableReader;

// A required id: present (the Verifier checked) and non-empty.
std::string Id(Reader& reader, const flatbuffers::String* id, absl::string_view what) {
  if (id->size() == 0) reader.Fail(absl::StrCat("empty ", what));
  return id->str();
}

std::string AgentId(Reader& reader, const flatbuffers::String* id) {
  std::string text = id->str();
  if (std::optional<std::string> problem = AgentIdProblem(text)) reader.Fail(*problem);
  return text;
}

NamedValue Read(Reader&, const wire::NamedValue& t) { return {t.name()->str(), t.value()}; }

KeyValue Read(Reader&, const wire::KeyValue& t) { return {t.key()->str(), TextOf(t.value())}; }

AgentSlot Read(Reader& reader, const wire::AgentSlot& t) {
  return {t.index(), reader.Enum<SlotKind>(t.kind(), "slot kind"), t.device_id(), TextOf(t.name())};
}

TaskEntry Read(Reader& reader, const wire::TaskEntry& t) {
  return {t.task_id(),
          t.trial_id(),
          t.experiment_id(),
          reader.Enum<TaskState>(t.state(), "task state"),
          ReadScalars(reader, t.slots()),
          ReadScalars(reader, t.ranks())};
}

RankAssignment Read(Reader&, const wire::RankAssignment& t) {
  return {t.rank(), t.local_rank(), t.slot_index()};
}

RankProcess Read(Reader&, const wire::RankProcess& t) { return {t.rank(), t.pid()}; }

RankPace Read(Reader&, const wire::RankPace& t) {
  return {t.rank(), t.compute_seconds(), t.step_seconds(), t.vs_fastest(), t.vs_best()};
}

GpuReading Read(Reader&, const wire::GpuReading& t) {
  return {t.rank(), t.gpu(), TextOf(t.name()), t.utilization(), t.memory_used(), t.memory_total()};
}

LogLine Read(Reader& reader, const wire::LogLine& t) {
  return {t.rank(), reader.Enum<LogStream>(t.stream(), "log stream"), t.unix_time(),
          TextOf(t.text())};
}

// Defined below ReadAll, which it uses.
TaskGpuReadings Read(Reader& reader, const wire::TaskGpuReadings& t);

template <typename T>
auto ReadAll(Reader& reader, const flatbuffers::Vector<Offset<T>>* list) {
  return ReadTables(list, [&reader](const T& table) { return Read(reader, table); });
}

AgentHello Read(Reader& reader, const wire::AgentHello& t) {
  return {AgentId(reader, t.agent_id()), TextOf(t.cohort_version()), TextOf(t.hostname()),
          ReadAll(reader, t.slots()), ReadAll(reader, t.tasks())};
}

TaskGpuReadings Read(Reader& reader, const wire::TaskGpuReadings& t) {
  return {t.task_id(), ReadAll(reader, t.gpus())};
}

AgentHeartbeat Read(Reader& reader, const wire::AgentHeartbeat& t) {
  return {AgentId(reader, t.agent_id()),
          t.unix_time(),
          t.busy_slots(),
          ReadScalars(reader, t.running_task_ids()),
          ReadAll(reader, t.task_gpus()),
          t.departing()};
}

StartTask Read(Reader& reader, const wire::StartTask& t) {
  const wire::WorkerSpec& w = *t.worker();
  StartTask m{t.task_id(),
              t.trial_id(),
              t.experiment_id(),
              t.attempt(),
              WorkerSpec{Id(reader, w.plugin_path(), "plugin path"), TextOf(w.config_path()),
                         TextOf(w.config_yaml()), TextOf(w.checkpoint_root()),
                         TextOf(w.resume_checkpoint_id()), w.validate_at_resume(),
                         w.trial_number()},
              ReadAll(reader, t.ranks()),
              t.world_size(),
              t.cross_rank(),
              t.cross_size(),
              RendezvousAddress{},
              ReadAll(reader, t.environment())};
  if (t.rendezvous() != nullptr) {
    m.rendezvous = {TextOf(t.rendezvous()->endpoint()), TextOf(t.rendezvous()->prefix())};
  }
  return m;
}

KillTask Read(Reader&, const wire::KillTask& t) {
  return {t.task_id(), TextOf(t.reason()), t.grace_seconds()};
}

TaskStatus Read(Reader& reader, const wire::TaskStatus& t) {
  return {t.task_id(), reader.Enum<TaskState>(t.state(), "task state"),
          ReadAll(reader, t.processes())};
}

TaskExit Read(Reader& reader, const wire::TaskExit& t) {
  if (t.rank() < kWholeTask) reader.Fail(absl::StrCat("rank ", t.rank(), " is below -1"));
  return {t.task_id(),         t.rank(),   t.exit_code(), t.signal(), TextOf(t.reason()),
          t.killed_by_agent(), t.stopped(), t.unfinished()};
}

TaskMetricsReport Read(Reader& reader, const wire::TaskMetricsReport& t) {
  TaskMetricsReport report{
      t.task_id(),
      {t.trial_id(), reader.Enum<ReportKind>(t.kind(), "report kind"), t.batches(), t.records(),
       t.unix_time(), ReadAll(reader, t.metrics()), ReadAll(reader, t.timings()),
       t.records_per_second(), t.exchanged_bytes()}};
  report.report.gpus = ReadAll(reader, t.gpus());
  report.report.ranks = ReadAll(reader, t.ranks());
  return report;
}

TaskCheckpointReport Read(Reader& reader, const wire::TaskCheckpointReport& t) {
  // Only a restored report of the trial's start names no checkpoint.
  const bool from_start = t.restored() && t.batches() == 0;
  return {t.task_id(),
          t.trial_id(),
          from_start ? t.checkpoint_id()->str() : Id(reader, t.checkpoint_id(), "checkpoint id"),
          t.batches(),
          t.records(),
          t.bytes(),
          ReadAll(reader, t.metadata()),
          t.restored()};
}

LogBatch Read(Reader& reader, const wire::LogBatch& t) {
  return {t.task_id(), ReadAll(reader, t.lines())};
}

TaskProgress Read(Reader&, const wire::TaskProgress& t) {
  return {t.task_id(),
          {t.trial_id(), t.batches(), t.total_batches(), t.records(), t.latest_loss(),
           t.records_per_second()}};
}

TaskListRequest Read(Reader&, const wire::TaskListRequest&) { return {}; }

TaskList Read(Reader& reader, const wire::TaskList& t) { return {ReadAll(reader, t.tasks())}; }

Ack Read(Reader&, const wire::Ack&) { return {}; }

ErrorReply Read(Reader& reader, const wire::ErrorReply& t) {
  return {reader.Enum<ControlErrorCode>(t.code(), "error code"), TextOf(t.message())};
}

// The payload of `envelope` as a struct, if this build knows its type and it keeps the rules.
absl::StatusOr<ControlMessage> ReadPayload(const wire::ControlEnvelope& envelope) {
  const wire::ControlPayload type = envelope.payload_type();
  if (static_cast<int>(type) > static_cast<int>(wire::ControlPayload::MAX)) {
    return Invalid(absl::StrCat("unknown message type ", static_cast<int>(type)));
  }
  Reader reader(kControlProtocol, wire::EnumNameControlPayload(type));
  ControlMessage message;
  switch (type) {
    case wire::ControlPayload::AgentHello:
      message = Read(reader, *envelope.payload_as_AgentHello());
      break;
    case wire::ControlPayload::AgentHeartbeat:
      message = Read(reader, *envelope.payload_as_AgentHeartbeat());
      break;
    case wire::ControlPayload::StartTask:
      message = Read(reader, *envelope.payload_as_StartTask());
      break;
    case wire::ControlPayload::KillTask:
      message = Read(reader, *envelope.payload_as_KillTask());
      break;
    case wire::ControlPayload::TaskStatus:
      message = Read(reader, *envelope.payload_as_TaskStatus());
      break;
    case wire::ControlPayload::TaskExit:
      message = Read(reader, *envelope.payload_as_TaskExit());
      break;
    case wire::ControlPayload::TaskMetricsReport:
      message = Read(reader, *envelope.payload_as_TaskMetricsReport());
      break;
    case wire::ControlPayload::TaskCheckpointReport:
      message = Read(reader, *envelope.payload_as_TaskCheckpointReport());
      break;
    case wire::ControlPayload::LogBatch:
      message = Read(reader, *envelope.payload_as_LogBatch());
      break;
    case wire::ControlPayload::TaskListRequest:
      message = Read(reader, *envelope.payload_as_TaskListRequest());
      break;
    case wire::ControlPayload::TaskList:
      message = Read(reader, *envelope.payload_as_TaskList());
      break;
    case wire::ControlPayload::Ack:
      message = Read(reader, *envelope.payload_as_Ack());
      break;
    case wire::ControlPayload::ErrorReply:
      message = Read(reader, *envelope.payload_as_ErrorReply());
      break;
    case wire::ControlPayload::TaskProgress:
      message = Read(reader, *envelope.payload_as_TaskProgress());
      break;
    case wire::ControlPayload::NONE:
      return Invalid("no payload");
  }
  if (!reader.status().ok()) return reader.status();
  return message;
}

// The agent id an agent's registration or heartbeat names, which must be its sender's.
const std::string* NamedAgent(const ControlMessage& message) {
  if (const auto* hello = std::get_if<AgentHello>(&message)) return &hello->agent_id;
  if (const auto* beat = std::get_if<AgentHeartbeat>(&message)) return &beat->agent_id;
  return nullptr;
}

}  // namespace

std::string EncodeControlMessage(const ControlHeader& header, const ControlMessage& message) {
  FlatBufferBuilder builder(256);
  // Store every field, so a value equal to the default but not identical (-0.0) survives.
  builder.ForceDefaults(true);
  const auto [type, payload] = std::visit(PayloadEncoder{builder}, message);
  builder.Finish(wire::CreateControlEnvelope(builder, kControlProtocolMajor, kControlProtocolMinor,
                                             header.message_id, header.correlation_id,
                                             CreateText(builder, header.sender), type, payload),
                 wire::ControlEnvelopeIdentifier());
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

std::optional<std::string> AgentIdProblem(absl::string_view id) {
  if (id.empty()) return "empty agent id";
  if (id.size() > kMaxAgentIdBytes) {
    return absl::StrCat("agent id of ", id.size(), " bytes; at most ", kMaxAgentIdBytes);
  }
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7f) return "agent id holds a control character (a line break, a tab...)";
  }
  return std::nullopt;
}

absl::StatusOr<DecodedControl> DecodeControlMessage(absl::string_view bytes) {
  std::vector<uint64_t> storage;
  const absl::StatusOr<VerifiedEnvelope> verified =
      VerifyEnvelope(kControlProtocol, bytes, storage);
  if (!verified.ok()) return verified.status();
  const wire::ControlEnvelope& envelope = *wire::GetControlEnvelope(verified->buffer);
  if (envelope.payload() == nullptr) return Invalid("no payload");
  absl::StatusOr<ControlMessage> message = ReadPayload(envelope);
  if (!message.ok()) return NoteNewerSender(kControlProtocol, verified->sender, message.status());
  DecodedControl decoded{
      {verified->sender.major, verified->sender.minor},
      {envelope.message_id(), envelope.correlation_id(), envelope.sender()->str()},
      *std::move(message)};
  if (decoded.header.message_id == 0) return Invalid("message_id is 0");
  if (decoded.header.sender.empty()) return Invalid("empty sender");
  const std::string* agent = NamedAgent(decoded.message);
  if (agent != nullptr && *agent != decoded.header.sender) {
    // Both are a peer's text, which reaches a log: escaped.
    return Invalid(absl::StrCat(ControlMessageName(decoded.message), " names agent '",
                                absl::CHexEscape(*agent), "' but was sent by '",
                                absl::CHexEscape(decoded.header.sender), "'"));
  }
  return decoded;
}

}  // namespace cohort
