// The wire codec of client_messages.h: structs <-> ClientEnvelope (schemas/client.fbs); the
// tables several messages share are client_rows_codec.h's.
#include "runtime/client/client_messages.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client_generated.h"
#include "runtime/client/client_rows_codec.h"
#include "runtime/control/envelope_codec.h"

namespace cohort {
namespace {

namespace wire = fbs::client;
using client_wire::Encode;
using client_wire::EncodeAll;
using client_wire::Read;
using client_wire::ReadAll;
using client_wire::Texts;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// Each C++ enum lists the wire enum's values in order, so a value in range converts by cast.
static_assert(static_cast<int>(ExperimentState::kPaused) ==
              static_cast<int>(wire::ExperimentState::MAX));
static_assert(static_cast<int>(ExperimentChangeKind::kDelete) ==
              static_cast<int>(wire::ExperimentChange::MAX));
static_assert(static_cast<int>(TrialState::kError) == static_cast<int>(wire::TrialState::MAX));
static_assert(static_cast<int>(ClientErrorCode::kUnschedulable) ==
              static_cast<int>(wire::ClientErrorCode::MAX));
static_assert(static_cast<int>(TaskRowState::kStopping) ==
              static_cast<int>(wire::TaskRowState::MAX));
static_assert(static_cast<int>(CheckpointCondition::kMissing) ==
              static_cast<int>(wire::CheckpointCondition::MAX));
// The union lists the messages in the variant's order, after NONE.
static_assert(static_cast<size_t>(wire::ClientMessage::MAX) == std::variant_size_v<ClientMessage>);

// ---- encoding

// Appends a message's table; returns it with its union type.
struct MessageEncoder {
  using Message = std::pair<wire::ClientMessage, Offset<void>>;
  FlatBufferBuilder& builder;

  Message operator()(const SubmitExperiment& m) const {
    auto table = wire::CreateSubmitExperiment(builder, CreateText(builder, m.config_yaml));
    return {wire::ClientMessage::SubmitExperiment, table.Union()};
  }
  Message operator()(const ListExperiments& m) const {
    auto table = wire::CreateListExperiments(builder, m.include_archived);
    return {wire::ClientMessage::ListExperiments, table.Union()};
  }
  Message operator()(const DescribeExperiment& m) const {
    auto table = wire::CreateDescribeExperiment(builder, m.experiment_id);
    return {wire::ClientMessage::DescribeExperiment, table.Union()};
  }
  Message operator()(const KillExperiment& m) const {
    auto table = wire::CreateKillExperiment(builder, m.experiment_id);
    return {wire::ClientMessage::KillExperiment, table.Union()};
  }
  Message operator()(const ListTasks&) const {
    return {wire::ClientMessage::ListTasks, wire::CreateListTasks(builder).Union()};
  }
  Message operator()(const ListAgents&) const {
    return {wire::ClientMessage::ListAgents, wire::CreateListAgents(builder).Union()};
  }
  Message operator()(const TrialLogsRequest& m) const {
    auto table =
        wire::CreateTrialLogsRequest(builder, m.trial_id, m.rank, m.after_sequence, m.max_lines);
    return {wire::ClientMessage::TrialLogsRequest, table.Union()};
  }
  Message operator()(const ExperimentSubmitted& m) const {
    auto table =
        wire::CreateExperimentSubmitted(builder, m.experiment_id, Texts(builder, m.warnings));
    return {wire::ClientMessage::ExperimentSubmitted, table.Union()};
  }
  Message operator()(const ExperimentList& m) const {
    auto table = wire::CreateExperimentList(builder, EncodeAll(builder, m.experiments));
    return {wire::ClientMessage::ExperimentList, table.Union()};
  }
  Message operator()(const ExperimentDescription& m) const {
    auto table = wire::CreateExperimentDescription(
        builder, Encode(builder, m.summary), CreateText(builder, m.config_yaml),
        CreateText(builder, m.searcher_metric), m.smaller_is_better, EncodeAll(builder, m.trials));
    return {wire::ClientMessage::ExperimentDescription, table.Union()};
  }
  Message operator()(const TaskListing& m) const {
    auto table = wire::CreateTaskListing(builder, EncodeAll(builder, m.tasks));
    return {wire::ClientMessage::TaskListing, table.Union()};
  }
  Message operator()(const AgentTable& m) const {
    auto table = wire::CreateAgentTable(builder, EncodeAll(builder, m.agents));
    return {wire::ClientMessage::AgentTable, table.Union()};
  }
  Message operator()(const TrialLogs& m) const {
    auto table =
        wire::CreateTrialLogs(builder, m.trial_id, EncodeAll(builder, m.lines), m.trial_ended);
    return {wire::ClientMessage::TrialLogs, table.Union()};
  }
  Message operator()(const ClientAck&) const {
    return {wire::ClientMessage::ClientAck, wire::CreateClientAck(builder).Union()};
  }
  Message operator()(const ClientError& m) const {
    auto table = wire::CreateClientError(builder, ToWire<wire::ClientErrorCode>(m.code),
                                         CreateText(builder, m.message));
    return {wire::ClientMessage::ClientError, table.Union()};
  }
  Message operator()(const ChangeExperiment& m) const {
    auto table = wire::CreateChangeExperiment(builder, m.experiment_id,
                                              ToWire<wire::ExperimentChange>(m.change));
    return {wire::ClientMessage::ChangeExperiment, table.Union()};
  }
  Message operator()(const KillTrial& m) const {
    return {wire::ClientMessage::KillTrial, wire::CreateKillTrial(builder, m.trial_id).Union()};
  }
  Message operator()(const DiagnoseTrial& m) const {
    return {wire::ClientMessage::DiagnoseTrial,
            wire::CreateDiagnoseTrial(builder, m.trial_id).Union()};
  }
  Message operator()(const TrialDiagnosis& m) const {
    auto table = wire::CreateTrialDiagnosis(
        builder, m.trial_id, m.task_id, m.running, CreateText(builder, m.summary),
        CreateText(builder, m.collective), builder.CreateVector(m.entered),
        builder.CreateVector(m.missing), builder.CreateVector(m.silent), Texts(builder, m.ranks),
        CreateText(builder, m.record_path));
    return {wire::ClientMessage::TrialDiagnosis, table.Union()};
  }
  Message operator()(const DescribeTrial& m) const {
    auto table = wire::CreateDescribeTrial(builder, m.trial_id);
    return {wire::ClientMessage::DescribeTrial, table.Union()};
  }
  Message operator()(const ListCheckpoints& m) const {
    auto table = wire::CreateListCheckpoints(builder, m.experiment_id, m.trial_id);
    return {wire::ClientMessage::ListCheckpoints, table.Union()};
  }
  Message operator()(const TrialDescription& m) const {
    auto table = wire::CreateTrialDescription(
        builder, m.experiment_id, CreateText(builder, m.experiment_name),
        CreateText(builder, m.searcher_metric), m.smaller_is_better, Encode(builder, m.trial),
        EncodeAll(builder, m.validations), EncodeAll(builder, m.checkpoints));
    return {wire::ClientMessage::TrialDescription, table.Union()};
  }
  Message operator()(const CheckpointListing& m) const {
    auto table = wire::CreateCheckpointListing(builder, EncodeAll(builder, m.checkpoints));
    return {wire::ClientMessage::CheckpointListing, table.Union()};
  }
};

// ---- decoding

static_assert(KeepsVersionFieldsFirst<wire::ClientEnvelope>());

constexpr EnvelopeProtocol kClientProtocol{"client",
                                           wire::ClientEnvelopeIdentifier,
                                           wire::VerifyClientEnvelopeBuffer,
                                           {kClientProtocolMajor, kClientProtocolMinor}};

absl::Status Invalid(absl::string_view what) { return MalformedMessage(kClientProtocol, what); }

using client_wire::Reader;

SubmitExperiment Read(Reader&, const wire::SubmitExperiment& t) {
  return {TextOf(t.config_yaml())};
}

ListExperiments Read(Reader&, const wire::ListExperiments& t) { return {t.include_archived()}; }

DescribeExperiment Read(Reader&, const wire::DescribeExperiment& t) { return {t.experiment_id()}; }

KillExperiment Read(Reader&, const wire::KillExperiment& t) { return {t.experiment_id()}; }

ListTasks Read(Reader&, const wire::ListTasks&) { return {}; }

ListAgents Read(Reader&, const wire::ListAgents&) { return {}; }

TrialLogsRequest Read(Reader&, const wire::TrialLogsRequest& t) {
  return {t.trial_id(), t.rank(), t.after_sequence(), t.max_lines()};
}

ExperimentSubmitted Read(Reader&, const wire::ExperimentSubmitted& t) {
  return {t.experiment_id(), Texts(t.warnings())};
}

ExperimentList Read(Reader& reader, const wire::ExperimentList& t) {
  return {ReadAll(reader, t.experiments())};
}

ExperimentDescription Read(Reader& reader, const wire::ExperimentDescription& t) {
  return {Read(reader, *t.summary()), TextOf(t.config_yaml()), TextOf(t.searcher_metric()),
          t.smaller_is_better(), ReadAll(reader, t.trials())};
}

TaskListing Read(Reader& reader, const wire::TaskListing& t) {
  return {ReadAll(reader, t.tasks())};
}

AgentTable Read(Reader& reader, const wire::AgentTable& t) { return {ReadAll(reader, t.agents())}; }

TrialLogs Read(Reader& reader, const wire::TrialLogs& t) {
  return {t.trial_id(), ReadAll(reader, t.lines()), t.trial_ended()};
}

ClientAck Read(Reader&, const wire::ClientAck&) { return {}; }

ClientError Read(Reader& reader, const wire::ClientError& t) {
  return {reader.Enum<ClientErrorCode>(t.code(), "error code"), TextOf(t.message())};
}

ChangeExperiment Read(Reader& reader, const wire::ChangeExperiment& t) {
  return {t.experiment_id(), reader.Enum<ExperimentChangeKind>(t.change(), "experiment change")};
}

KillTrial Read(Reader&, const wire::KillTrial& t) { return {t.trial_id()}; }

DescribeTrial Read(Reader&, const wire::DescribeTrial& t) { return {t.trial_id()}; }

ListCheckpoints Read(Reader&, const wire::ListCheckpoints& t) {
  return {t.experiment_id(), t.trial_id()};
}

TrialDescription Read(Reader& reader, const wire::TrialDescription& t) {
  return {t.experiment_id(),
          TextOf(t.experiment_name()),
          TextOf(t.searcher_metric()),
          t.smaller_is_better(),
          Read(reader, *t.trial()),
          ReadAll(reader, t.validations()),
          ReadAll(reader, t.checkpoints())};
}

CheckpointListing Read(Reader& reader, const wire::CheckpointListing& t) {
  return {ReadAll(reader, t.checkpoints())};
}

DiagnoseTrial Read(Reader&, const wire::DiagnoseTrial& t) { return {t.trial_id()}; }

std::vector<uint32_t> Ranks(const flatbuffers::Vector<uint32_t>* list) {
  return list == nullptr ? std::vector<uint32_t>()
                         : std::vector<uint32_t>(list->begin(), list->end());
}

TrialDiagnosis Read(Reader&, const wire::TrialDiagnosis& t) {
  return {t.trial_id(),
          t.task_id(),
          t.running(),
          TextOf(t.summary()),
          TextOf(t.collective()),
          Ranks(t.entered()),
          Ranks(t.missing()),
          Ranks(t.silent()),
          Texts(t.ranks()),
          TextOf(t.record_path())};
}

// The message of `envelope` as a struct, if this build knows its type and its enum values.
absl::StatusOr<ClientMessage> ReadMessage(const wire::ClientEnvelope& envelope) {
  const wire::ClientMessage type = envelope.message_type();
  if (static_cast<int>(type) > static_cast<int>(wire::ClientMessage::MAX)) {
    return Invalid(absl::StrCat("unknown message type ", static_cast<int>(type)));
  }
  Reader reader(kClientProtocol, wire::EnumNameClientMessage(type));
  ClientMessage message;
  switch (type) {
    case wire::ClientMessage::SubmitExperiment:
      message = Read(reader, *envelope.message_as_SubmitExperiment());
      break;
    case wire::ClientMessage::ListExperiments:
      message = Read(reader, *envelope.message_as_ListExperiments());
      break;
    case wire::ClientMessage::DescribeExperiment:
      message = Read(reader, *envelope.message_as_DescribeExperiment());
      break;
    case wire::ClientMessage::KillExperiment:
      message = Read(reader, *envelope.message_as_KillExperiment());
      break;
    case wire::ClientMessage::ListTasks:
      message = Read(reader, *envelope.message_as_ListTasks());
      break;
    case wire::ClientMessage::ListAgents:
      message = Read(reader, *envelope.message_as_ListAgents());
      break;
    case wire::ClientMessage::TrialLogsRequest:
      message = Read(reader, *envelope.message_as_TrialLogsRequest());
      break;
    case wire::ClientMessage::ExperimentSubmitted:
      message = Read(reader, *envelope.message_as_ExperimentSubmitted());
      break;
    case wire::ClientMessage::ExperimentList:
      message = Read(reader, *envelope.message_as_ExperimentList());
      break;
    case wire::ClientMessage::ExperimentDescription:
      message = Read(reader, *envelope.message_as_ExperimentDescription());
      break;
    case wire::ClientMessage::TaskListing:
      message = Read(reader, *envelope.message_as_TaskListing());
      break;
    case wire::ClientMessage::AgentTable:
      message = Read(reader, *envelope.message_as_AgentTable());
      break;
    case wire::ClientMessage::TrialLogs:
      message = Read(reader, *envelope.message_as_TrialLogs());
      break;
    case wire::ClientMessage::ClientAck:
      message = Read(reader, *envelope.message_as_ClientAck());
      break;
    case wire::ClientMessage::ClientError:
      message = Read(reader, *envelope.message_as_ClientError());
      break;
    case wire::ClientMessage::ChangeExperiment:
      message = Read(reader, *envelope.message_as_ChangeExperiment());
      break;
    case wire::ClientMessage::KillTrial:
      message = Read(reader, *envelope.message_as_KillTrial());
      break;
    case wire::ClientMessage::DescribeTrial:
      message = Read(reader, *envelope.message_as_DescribeTrial());
      break;
    case wire::ClientMessage::ListCheckpoints:
      message = Read(reader, *envelope.message_as_ListCheckpoints());
      break;
    case wire::ClientMessage::TrialDescription:
      message = Read(reader, *envelope.message_as_TrialDescription());
      break;
    case wire::ClientMessage::CheckpointListing:
      message = Read(reader, *envelope.message_as_CheckpointListing());
      break;
    case wire::ClientMessage::DiagnoseTrial:
      message = Read(reader, *envelope.message_as_DiagnoseTrial());
      break;
    case wire::ClientMessage::TrialDiagnosis:
      message = Read(reader, *envelope.message_as_TrialDiagnosis());
      break;
    case wire::ClientMessage::NONE:
      return Invalid("no message");
  }
  if (!reader.status().ok()) return reader.status();
  return message;
}

}  // namespace

std::string EncodeClientMessage(const ClientHeader& header, const ClientMessage& message) {
  FlatBufferBuilder builder(256);
  // Store every field, so a value equal to the default but not identical (-0.0) survives.
  builder.ForceDefaults(true);
  const auto [type, table] = std::visit(MessageEncoder{builder}, message);
  builder.Finish(wire::CreateClientEnvelope(builder, kClientProtocolMajor, kClientProtocolMinor,
                                            header.message_id, header.correlation_id,
                                            CreateText(builder, header.sender), type, table),
                 wire::ClientEnvelopeIdentifier());
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

absl::StatusOr<DecodedClient> DecodeClientMessage(absl::string_view bytes) {
  std::vector<uint64_t> storage;
  const absl::StatusOr<VerifiedEnvelope> verified = VerifyEnvelope(kClientProtocol, bytes, storage);
  if (!verified.ok()) return verified.status();
  const wire::ClientEnvelope& envelope = *wire::GetClientEnvelope(verified->buffer);
  if (envelope.message() == nullptr) return Invalid("no message");
  absl::StatusOr<ClientMessage> message = ReadMessage(envelope);
  if (!message.ok()) return NoteNewerSender(kClientProtocol, verified->sender, message.status());
  if (envelope.message_id() == 0) return Invalid("message_id is 0");
  if (envelope.sender()->size() == 0) return Invalid("empty sender");
  return DecodedClient{{verified->sender.major, verified->sender.minor},
                       {envelope.message_id(), envelope.correlation_id(), envelope.sender()->str()},
                       *std::move(message)};
}

}  // namespace cohort
