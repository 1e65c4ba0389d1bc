// The supervisor -> worker half of worker_messages.h.
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/control/envelope.h"
#include "runtime/control/worker_messages.h"
#include "worker_generated.h"

namespace cohort {
namespace {

struct CommandEncoder {
  flatbuffers::FlatBufferBuilder& builder;

  std::string operator()(const StopCommand& c) const {
    auto table =
        fbs::CreateStopCommand(builder, builder.CreateString(c.reason.data(), c.reason.size()));
    return FinishWorkerEnvelope(builder, fbs::WorkerPayload::StopCommand, table.Union());
  }
  std::string operator()(const RendezvousValue& c) const {
    auto key = builder.CreateString(c.key.data(), c.key.size());
    auto table = fbs::CreateRendezvousValue(builder, c.request_id, key, c.found,
                                            CreateBytes(builder, c.value));
    return FinishWorkerEnvelope(builder, fbs::WorkerPayload::RendezvousValue, table.Union());
  }
};

absl::Status MalformedCommand(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed worker command: ", what));
}

absl::StatusOr<WorkerCommand> Decode(const fbs::RendezvousValue& t) {
  if (t.value() != nullptr && t.value()->size() > kMaxRendezvousValueBytes) {
    return MalformedCommand(absl::StrCat("rendezvous value of ", t.value()->size(), " bytes for '",
                                         t.key()->str(), "' exceeds ", kMaxRendezvousValueBytes));
  }
  return RendezvousValue{t.request_id(), t.key()->str(), t.found(), BytesOf(t.value())};
}

}  // namespace

std::string EncodeWorkerCommand(const WorkerCommand& command) {
  flatbuffers::FlatBufferBuilder builder(128);
  return std::visit(CommandEncoder{builder}, command);
}

absl::StatusOr<WorkerCommand> DecodeWorkerCommand(absl::string_view bytes) {
  std::vector<uint64_t> storage;
  absl::StatusOr<const fbs::WorkerEnvelope*> opened = OpenWorkerEnvelope(bytes, storage);
  if (!opened.ok()) return opened.status();
  const fbs::WorkerEnvelope& envelope = **opened;
  switch (envelope.payload_type()) {
    case fbs::WorkerPayload::StopCommand: {
      const flatbuffers::String* reason = envelope.payload_as_StopCommand()->reason();
      return StopCommand{reason ? reason->str() : std::string()};
    }
    case fbs::WorkerPayload::RendezvousValue:
      return Decode(*envelope.payload_as_RendezvousValue());
    case fbs::WorkerPayload::WorkerHello:
    case fbs::WorkerPayload::MetricsReport:
    case fbs::WorkerPayload::ProgressReport:
    case fbs::WorkerPayload::CheckpointReport:
    case fbs::WorkerPayload::TrialFinished:
    case fbs::WorkerPayload::RendezvousSet:
    case fbs::WorkerPayload::RendezvousGet:
    case fbs::WorkerPayload::Heartbeat:
      return MalformedCommand(absl::StrCat("a ",
                                           fbs::EnumNameWorkerPayload(envelope.payload_type()),
                                           " is a worker message, not a supervisor command"));
    default:
      return MalformedCommand(
          absl::StrCat("unknown command type ", static_cast<int>(envelope.payload_type())));
  }
}

absl::string_view WorkerCommandName(const WorkerCommand& command) {
  static constexpr absl::string_view kNames[] = {"StopCommand", "RendezvousValue"};
  static_assert(std::size(kNames) == std::variant_size_v<WorkerCommand>);
  return kNames[command.index()];
}

}  // namespace cohort
