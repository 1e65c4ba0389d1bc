// The worker channel codec: round trips of every message and command with awkward values, and
// rejection of well-formed FlatBuffers that break the channel's rules.
#include "runtime/control/worker_messages.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/control/envelope.h"
#include "worker_generated.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Text that C strings would cut short: an embedded NUL, UTF-8, a quote and a newline.
const std::string kAwkwardText = std::string("loss\0val", 8) + " \xC3\xA9t\xC3\xA9 \"x\"\n";

WorkerMessage RoundTrip(const WorkerMessage& message) {
  absl::StatusOr<WorkerMessage> decoded = DecodeWorkerMessage(EncodeWorkerMessage(message));
  EXPECT_TRUE(decoded.ok()) << decoded.status();
  return decoded.ok() ? *decoded : WorkerMessage{};
}

absl::Status DecodeStatus(const std::string& bytes) { return DecodeWorkerMessage(bytes).status(); }

std::string Finish(flatbuffers::FlatBufferBuilder& builder, uint32_t version,
                   fbs::WorkerPayload type, flatbuffers::Offset<void> payload) {
  builder.Finish(fbs::CreateWorkerEnvelope(builder, version, type, payload),
                 fbs::WorkerEnvelopeIdentifier());
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

TEST(WorkerMessagesTest, HelloRoundTripsExtremes) {
  for (const WorkerHello& hello :
       {WorkerHello{},
        WorkerHello{kMaxU64, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<uint32_t>::max(), kMaxU64, kMaxU64},
        WorkerHello{3, 4242, 7, 100, 1000}}) {
    EXPECT_EQ(RoundTrip(hello), WorkerMessage(hello));
  }
}

TEST(WorkerMessagesTest, MetricsRoundTripManyAwkwardMetrics) {
  MetricsReport report{kMaxU64, ReportKind::kValidation, kMaxU64, 12, 1.7e9 + 0.25, {}};
  report.metrics.push_back({"", 0.0});
  report.metrics.push_back({kAwkwardText, -0.0});
  report.metrics.push_back({"inf", kInf});
  report.metrics.push_back({"tiny", std::numeric_limits<double>::denorm_min()});
  for (int i = 0; i < 5000; ++i) report.metrics.push_back({"m" + std::to_string(i), i * 0.5});
  report.timings = {{"compute", 1.25}, {"exchange_wait", 0.0}, {kAwkwardText, 3e-9}};
  report.records_per_second = 12345.5;
  report.exchanged_bytes = uint64_t{1} << 40;
  report.ranks = {{0, 0.004, 0.005, 1.0, 0.97}, {1, 0.5, 0.75, 0.0066, 1.0}};
  const auto decoded = std::get<MetricsReport>(RoundTrip(report));
  EXPECT_EQ(decoded, report);
  EXPECT_TRUE(std::signbit(decoded.metrics[1].value));
}

TEST(WorkerMessagesTest, MetricsKeepNaNAndAnEmptyList) {
  MetricsReport report{1, ReportKind::kTraining, 2, 3, kNaN, {{"loss", kNaN}}};
  const auto decoded = std::get<MetricsReport>(RoundTrip(report));
  EXPECT_EQ(decoded.kind, ReportKind::kTraining);
  EXPECT_TRUE(std::isnan(decoded.unix_time));
  ASSERT_EQ(decoded.metrics.size(), 1u);
  EXPECT_EQ(decoded.metrics[0].name, "loss");
  EXPECT_TRUE(std::isnan(decoded.metrics[0].value));

  const MetricsReport empty{};
  EXPECT_EQ(RoundTrip(empty), WorkerMessage(empty));
}

TEST(WorkerMessagesTest, ProgressRoundTripsNaNLossAndInfiniteRate) {
  const ProgressReport progress{9, kMaxU64, kMaxU64, kMaxU64, kNaN, kInf};
  const auto decoded = std::get<ProgressReport>(RoundTrip(progress));
  EXPECT_EQ(decoded.trial_id, 9u);
  EXPECT_EQ(decoded.batches, kMaxU64);
  EXPECT_EQ(decoded.total_batches, kMaxU64);
  EXPECT_EQ(decoded.records, kMaxU64);
  EXPECT_TRUE(std::isnan(decoded.latest_loss));
  EXPECT_EQ(decoded.records_per_second, kInf);

  const ProgressReport ordinary{1, 50, 100, 3200, 0.693, 12345.5};
  EXPECT_EQ(RoundTrip(ordinary), WorkerMessage(ordinary));
}

TEST(WorkerMessagesTest, CheckpointRoundTripsAndNeedsAnId) {
  const CheckpointReport report{4, kAwkwardText + std::string(10000, 'c'), kMaxU64, 0, kMaxU64};
  EXPECT_EQ(RoundTrip(report), WorkerMessage(report));

  absl::Status empty_id = DecodeStatus(EncodeWorkerMessage(CheckpointReport{4, "", 1, 2, 3}));
  EXPECT_EQ(empty_id.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty_id.message(), HasSubstr("checkpoint id"));

  // Restored: an older checkpoint, or none (the trial's start: batch 0, no id) and nothing else.
  const CheckpointReport restored{4, "trial-4-batch-50", 50, 1600, 0, true};
  EXPECT_EQ(RoundTrip(restored), WorkerMessage(restored));
  const CheckpointReport from_start{4, "", 0, 0, 0, true};
  EXPECT_EQ(RoundTrip(from_start), WorkerMessage(from_start));
  EXPECT_EQ(DecodeStatus(EncodeWorkerMessage(CheckpointReport{4, "", 50, 1600, 0, true})).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(WorkerMessagesTest, TrialFinishedRoundTripsEveryExit) {
  for (TrialExit exit : {TrialExit::kCompleted, TrialExit::kStopped, TrialExit::kFailed}) {
    const TrialFinished finished{kMaxU64, exit, 17, ""};
    EXPECT_EQ(RoundTrip(finished), WorkerMessage(finished));
  }
  const TrialFinished failed{1, TrialExit::kFailed, 0, kAwkwardText};
  EXPECT_EQ(RoundTrip(failed), WorkerMessage(failed));
}

TEST(WorkerMessagesTest, StopCommandRoundTrips) {
  for (const std::string& reason : {std::string(), kAwkwardText, std::string(100000, 'r')}) {
    absl::StatusOr<WorkerCommand> decoded =
        DecodeWorkerCommand(EncodeWorkerCommand(StopCommand{reason}));
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(std::get<StopCommand>(*decoded).reason, reason);
  }
}

WorkerCommand RoundTrip(const WorkerCommand& command) {
  absl::StatusOr<WorkerCommand> decoded = DecodeWorkerCommand(EncodeWorkerCommand(command));
  EXPECT_TRUE(decoded.ok()) << decoded.status();
  return decoded.ok() ? *decoded : WorkerCommand{};
}

// Every byte value, NULs included: rendezvous values are opaque bytes (an NCCL unique id).
std::string AllByteValues() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  return bytes;
}

TEST(WorkerMessagesTest, RendezvousSetRoundTripsAnyBytes) {
  for (const RendezvousSet& set :
       {RendezvousSet{}, RendezvousSet{"nccl/unique-id", AllByteValues()},
        RendezvousSet{kAwkwardText, std::string(kMaxRendezvousValueBytes, '\xff')}}) {
    EXPECT_EQ(RoundTrip(set), WorkerMessage(set));
  }
}

TEST(WorkerMessagesTest, RendezvousGetAndHeartbeatRoundTrip) {
  for (const RendezvousGet& get :
       {RendezvousGet{}, RendezvousGet{kAwkwardText, kMaxU64}, RendezvousGet{"gloo/rank/3", 17}}) {
    EXPECT_EQ(RoundTrip(get), WorkerMessage(get));
  }
  for (const Heartbeat& beat :
       {Heartbeat{}, Heartbeat{kMaxU64, std::numeric_limits<uint32_t>::max(), kInf, kMaxU64},
        Heartbeat{7, 3, 1.7e9 + 0.125, 1200}}) {
    EXPECT_EQ(RoundTrip(beat), WorkerMessage(beat));
  }
  const auto decoded = std::get<Heartbeat>(RoundTrip(Heartbeat{1, 2, kNaN, 5}));
  EXPECT_TRUE(std::isnan(decoded.unix_time));
  EXPECT_EQ(decoded.batches_trained, 5u);
}

TEST(WorkerMessagesTest, HeartbeatFromAWorkerWithoutBatchesTrainedDecodesAsZero) {
  // What a worker built before batches_trained was appended sends: the first three fields only.
  flatbuffers::FlatBufferBuilder builder;
  const auto start = builder.StartTable();
  builder.AddElement<uint64_t>(fbs::Heartbeat::VT_TRIAL_ID, 7, 0);
  builder.AddElement<uint32_t>(fbs::Heartbeat::VT_RANK, 2, 0);
  builder.AddElement<double>(fbs::Heartbeat::VT_UNIX_TIME, 1.7e9, 0);
  const flatbuffers::Offset<void> beat(builder.EndTable(start));
  absl::StatusOr<WorkerMessage> decoded = DecodeWorkerMessage(
      Finish(builder, kWorkerFormatVersion, fbs::WorkerPayload::Heartbeat, beat));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, WorkerMessage(Heartbeat{7, 2, 1.7e9, 0}));
}

TEST(WorkerMessagesTest, HeartbeatKeepsItsOlderFieldsWhereOlderReadersLookForThem) {
  // Appending batches_trained must not move the fields an older supervisor reads: each field's
  // slot in the vtable is fixed by its position in the table.
  EXPECT_EQ(fbs::Heartbeat::VT_TRIAL_ID, 4);
  EXPECT_EQ(fbs::Heartbeat::VT_RANK, 6);
  EXPECT_EQ(fbs::Heartbeat::VT_UNIX_TIME, 8);
  EXPECT_EQ(fbs::Heartbeat::VT_BATCHES_TRAINED, 10);
}

TEST(WorkerMessagesTest, RendezvousValueRoundTripsFoundAndMissing) {
  for (const RendezvousValue& value :
       {RendezvousValue{}, RendezvousValue{kMaxU64, "missing", false, ""},
        RendezvousValue{1, "nccl/unique-id", true, AllByteValues()},
        RendezvousValue{2, kAwkwardText, true, ""},
        RendezvousValue{3, "big", true, std::string(kMaxRendezvousValueBytes, 'v')}}) {
    EXPECT_EQ(RoundTrip(value), WorkerCommand(value));
  }
}

TEST(WorkerMessagesTest, RejectsRendezvousValuesOverTheLimit) {
  const std::string too_big(kMaxRendezvousValueBytes + 1, 'x');
  absl::Status set = DecodeStatus(EncodeWorkerMessage(RendezvousSet{"k", too_big}));
  EXPECT_EQ(set.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.message(), HasSubstr("exceeds"));
  absl::Status value =
      DecodeWorkerCommand(EncodeWorkerCommand(RendezvousValue{1, "k", true, too_big})).status();
  EXPECT_EQ(value.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(value.message(), HasSubstr("exceeds"));
}

TEST(WorkerMessagesTest, RejectsRendezvousTablesWithoutTheirRequiredKey) {
  // The generated builders refuse to omit a required field, so build the tables by hand.
  {
    flatbuffers::FlatBufferBuilder builder;
    const auto start = builder.StartTable();
    builder.AddElement<uint64_t>(fbs::RendezvousGet::VT_REQUEST_ID, 5, 0);
    const flatbuffers::Offset<void> get(builder.EndTable(start));
    absl::Status status =
        DecodeStatus(Finish(builder, kWorkerFormatVersion, fbs::WorkerPayload::RendezvousGet, get));
    EXPECT_THAT(status.message(), HasSubstr("verification"));
  }
  {
    flatbuffers::FlatBufferBuilder builder;
    auto bytes = builder.CreateString("v");
    const auto start = builder.StartTable();
    builder.AddOffset(fbs::RendezvousSet::VT_VALUE, bytes);
    const flatbuffers::Offset<void> set(builder.EndTable(start));
    absl::Status status =
        DecodeStatus(Finish(builder, kWorkerFormatVersion, fbs::WorkerPayload::RendezvousSet, set));
    EXPECT_THAT(status.message(), HasSubstr("verification"));
  }
  {
    flatbuffers::FlatBufferBuilder builder;
    const auto start = builder.StartTable();
    builder.AddElement<uint8_t>(fbs::RendezvousValue::VT_FOUND, 1, 0);
    const flatbuffers::Offset<void> value(builder.EndTable(start));
    absl::Status status = DecodeWorkerCommand(Finish(builder, kWorkerFormatVersion,
                                                     fbs::WorkerPayload::RendezvousValue, value))
                              .status();
    EXPECT_THAT(status.message(), HasSubstr("verification"));
  }
}

TEST(WorkerMessagesTest, EachDirectionRejectsTheOther) {
  absl::Status command_as_message = DecodeStatus(EncodeWorkerCommand(StopCommand{"x"}));
  EXPECT_EQ(command_as_message.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(command_as_message.message(), HasSubstr("not a worker message"));

  absl::Status message_as_command =
      DecodeWorkerCommand(EncodeWorkerMessage(WorkerHello{1, 2, 3, 4, 5})).status();
  EXPECT_EQ(message_as_command.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message_as_command.message(), HasSubstr("WorkerHello is a worker message"));

  absl::Status answer_as_message =
      DecodeStatus(EncodeWorkerCommand(RendezvousValue{1, "k", true, "v"}));
  EXPECT_EQ(answer_as_message.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(answer_as_message.message(), HasSubstr("RendezvousValue is a supervisor command"));
  for (const WorkerMessage& message :
       {WorkerMessage(RendezvousSet{"k", "v"}), WorkerMessage(RendezvousGet{"k", 1}),
        WorkerMessage(Heartbeat{1, 2, 3.0})}) {
    absl::Status status = DecodeWorkerCommand(EncodeWorkerMessage(message)).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(),
                HasSubstr(absl::StrCat(WorkerMessageName(message), " is a worker message")));
  }
}

TEST(WorkerMessagesTest, RejectsOtherFormatVersions) {
  for (uint32_t version : {0u, kWorkerFormatVersion + 1}) {
    flatbuffers::FlatBufferBuilder builder;
    auto hello = fbs::CreateWorkerHello(builder, 1);
    absl::Status status =
        DecodeStatus(Finish(builder, version, fbs::WorkerPayload::WorkerHello, hello.Union()));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("format version"));
  }
}

TEST(WorkerMessagesTest, RejectsUnknownAndMissingPayloads) {
  {
    flatbuffers::FlatBufferBuilder builder;
    auto hello = fbs::CreateWorkerHello(builder, 1);
    const std::string bytes =
        Finish(builder, kWorkerFormatVersion, static_cast<fbs::WorkerPayload>(200), hello.Union());
    EXPECT_THAT(DecodeStatus(bytes).message(), HasSubstr("unknown message type 200"));
    EXPECT_THAT(DecodeWorkerCommand(bytes).status().message(), HasSubstr("unknown command type"));
  }
  for (fbs::WorkerPayload type : {fbs::WorkerPayload::NONE, fbs::WorkerPayload::WorkerHello}) {
    flatbuffers::FlatBufferBuilder builder;
    absl::Status status = DecodeStatus(Finish(builder, kWorkerFormatVersion, type, 0));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("no payload"));
  }
}

TEST(WorkerMessagesTest, RejectsEnumValuesOutOfRange) {
  {
    flatbuffers::FlatBufferBuilder builder;
    auto report = fbs::CreateMetricsReport(builder, 1, static_cast<fbs::ReportKind>(7));
    absl::Status status = DecodeStatus(
        Finish(builder, kWorkerFormatVersion, fbs::WorkerPayload::MetricsReport, report.Union()));
    EXPECT_THAT(status.message(), HasSubstr("unknown report kind 7"));
  }
  {
    flatbuffers::FlatBufferBuilder builder;
    auto finished = fbs::CreateTrialFinished(builder, 1, static_cast<fbs::TrialExit>(9));
    absl::Status status = DecodeStatus(
        Finish(builder, kWorkerFormatVersion, fbs::WorkerPayload::TrialFinished, finished.Union()));
    EXPECT_THAT(status.message(), HasSubstr("unknown trial exit 9"));
  }
}

TEST(WorkerMessagesTest, RejectsACheckpointReportWithoutItsRequiredId) {
  flatbuffers::FlatBufferBuilder builder;
  // The generated builder refuses to omit a required field, so build the table by hand.
  const auto start = builder.StartTable();
  builder.AddElement<uint64_t>(fbs::CheckpointReport::VT_TRIAL_ID, 5, 0);
  const flatbuffers::Offset<void> report(builder.EndTable(start));
  absl::Status status = DecodeStatus(
      Finish(builder, kWorkerFormatVersion, fbs::WorkerPayload::CheckpointReport, report));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("verification"));
}

TEST(WorkerMessagesTest, DecodesFromAnyAlignment) {
  const ProgressReport progress{1, 2, 3, 4, 0.5, 1e6};
  const std::string bytes = EncodeWorkerMessage(progress);
  std::string shifted(bytes.size() + 8, '\0');
  for (size_t offset = 0; offset < 8; ++offset) {
    std::memcpy(shifted.data() + offset, bytes.data(), bytes.size());
    absl::StatusOr<WorkerMessage> decoded =
        DecodeWorkerMessage(absl::string_view(shifted.data() + offset, bytes.size()));
    ASSERT_TRUE(decoded.ok()) << "offset " << offset << ": " << decoded.status();
    EXPECT_EQ(*decoded, WorkerMessage(progress));
  }
}

TEST(WorkerMessagesTest, NamesEachAlternative) {
  EXPECT_EQ(WorkerMessageName(WorkerHello{}), "WorkerHello");
  EXPECT_EQ(WorkerMessageName(MetricsReport{}), "MetricsReport");
  EXPECT_EQ(WorkerMessageName(ProgressReport{}), "ProgressReport");
  EXPECT_EQ(WorkerMessageName(CheckpointReport{}), "CheckpointReport");
  EXPECT_EQ(WorkerMessageName(TrialFinished{}), "TrialFinished");
  EXPECT_EQ(WorkerMessageName(RendezvousSet{}), "RendezvousSet");
  EXPECT_EQ(WorkerMessageName(RendezvousGet{}), "RendezvousGet");
  EXPECT_EQ(WorkerMessageName(Heartbeat{}), "Heartbeat");
  EXPECT_EQ(WorkerCommandName(StopCommand{}), "StopCommand");
  EXPECT_EQ(WorkerCommandName(RendezvousValue{}), "RendezvousValue");
}

}  // namespace
}  // namespace cohort
