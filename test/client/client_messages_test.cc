// The client protocol codec: round trips of every message with every field set, version rules,
// the rules a verified buffer must still keep, message directions and names, and bytes no honest
// peer would send (random, truncated, bit-flipped), which must give an error or a well-formed
// message, never a crash.
#include "runtime/client/client_messages.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client_generated.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/common/hostile_bytes.h"

namespace cohort {
namespace {

namespace wire = fbs::client;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using ::testing::HasSubstr;

constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kMaxU32 = std::numeric_limits<uint32_t>::max();

// Text that C strings would cut short: an embedded NUL, UTF-8, a quote and a newline.
const std::string kAwkwardText = std::string("a\0b", 3) + " \xC3\xA9t\xC3\xA9 \"x\"\n";

const ClientHeader kClientHeader{kMaxU64, 0, "cohort-cli"};
const ClientHeader kOrchestratorHeader{12, 41, "orchestrator"};

ExperimentSummary FullSummary() {
  return {kMaxU64,
          "mnist-mlp",
          ExperimentState::kStopping,
          "adaptive_asha",
          0.375,
          8,
          kMaxU32,
          3,
          2,
          1,
          1.7e9 + 0.25,
          1.7e9 + 3600.5,
          kAwkwardText,
          true};
}

CheckpointRow FullCheckpoint() {
  return {
      "trial-3-batch-1200",          kMaxU64,     3, kMaxU64, true, -0.125, kAwkwardText, kMaxU64,
      CheckpointCondition::kDamaged, kAwkwardText};
}

TrialSummary FullTrial() {
  return {kMaxU64,
          2,
          TrialState::kError,
          R"({"lr": 0.01, "layers": 3})",
          1200,
          kMaxU64,
          kMaxU32,
          9,
          {{"loss", 0.25}, {"accuracy", -0.0}},
          {{"validation_loss", 1e308}, {kAwkwardText, -1e-308}},
          true,
          0.125,
          "trial-3-batch-1200",
          "rank 1 exited with signal 9",
          {{"compute", 1.5}, {"exchange_wait", 0.25}},
          2048.5,
          0.875,
          kMaxU64,
          {{0, 1, "NVIDIA H100 80GB HBM3", 97.5, uint64_t{40} << 30, kMaxU64},
           {kMaxU32, kMaxU32, kAwkwardText, 0.0, 0, 0}},
          {{0, 0.004, 0.005, 1.0, 0.97}, {kMaxU32, 0.5, 0.75, 0.0066, 1.0}},
          0.1,
          1150,
          kMaxU64};
}

// One of each message, in the variant's order, every field set to a value other than its default.
std::vector<ClientMessage> EveryMessageFullySet() {
  return {
      SubmitExperiment{"name: mnist\nentrypoint: /opt/plugins/libmlp.so\n" + kAwkwardText},
      ListExperiments{true},
      DescribeExperiment{kMaxU64},
      KillExperiment{7},
      ListTasks{},
      ListAgents{},
      TrialLogsRequest{kMaxU64, std::numeric_limits<int32_t>::max(), kMaxU64 - 1, kMaxU32},
      ExperimentSubmitted{7, {"unknown key 'foo' ignored", kAwkwardText, ""}},
      ExperimentList{{FullSummary(),
                      {1, "a", ExperimentState::kError, "single", 1.0, 1, 1, 0, 0, 1, 2.5, 3.5,
                       "searcher could not start"}}},
      ExperimentDescription{
          FullSummary(),
          "name: mnist\n",
          "validation_loss",
          false,
          {FullTrial(), {4, 1, TrialState::kPaused, "{}", 0, 100, 0, 0, {}, {}, false, 0, "", ""}}},
      TaskListing{
          {{9, 7, kMaxU64, 4, TaskRowState::kRunning, {"agent-1", "agent-2"}, "", 1.7e9, ""},
           {10, 7, 5, kMaxU32, TaskRowState::kQueued, {}, kAwkwardText, 1.7e9 + 1, "4711"}}},
      AgentTable{{{"agent-1", "gpu-node-1", 8, 4, true, 1.7e9 + 0.5, {9, kMaxU64}},
                  {kAwkwardText, "", kMaxU32, kMaxU32, false, 1.5, {}}}},
      TrialLogs{kMaxU64,
                {{1, 0, 0, false, 1.7e9, "epoch 1"},
                 {kMaxU64, kMaxU32, kMaxU32, true, 1.7e9 + 1, kAwkwardText},
                 {3, 1, 2, false, 0.5, ""},
                 {4, 0, 1, false, 1.7e9 + 2, "[cohort] task 4 ended", true}},
                true},
      ClientAck{},
      ClientError{ClientErrorCode::kUnschedulable,
                  "slots_per_trial 16 exceeds the largest agent (8 slots)"},
      ChangeExperiment{kMaxU64, ExperimentChangeKind::kDelete},
      KillTrial{kMaxU64},
      DescribeTrial{kMaxU64},
      ListCheckpoints{kMaxU64, kMaxU64 - 1},
      TrialDescription{
          kMaxU64,
          kAwkwardText,
          "validation_loss",
          false,
          FullTrial(),
          {{100, {{"validation_loss", 0.5}, {"accuracy", -0.0}}}, {kMaxU64, {}}},
          {FullCheckpoint(),
           {"trial-3-batch-5", 7, 3, 5, false, 0, "", 0, CheckpointCondition::kUnchecked, ""}}},
      CheckpointListing{{FullCheckpoint(),
                         {"trial-4-batch-1", 1, 4, 1, false, 0, "/x", 12,
                          CheckpointCondition::kMissing, "no folder /x"}}},
      DiagnoseTrial{kMaxU64},
      TrialDiagnosis{kMaxU64,
                     kMaxU64 - 1,
                     true,
                     kAwkwardText,
                     "host collective #57",
                     {0, kMaxU32},
                     {1},
                     {},
                     {"rank 0: ...", kAwkwardText},
                     "/runs/x/trials/7/flight_record.json"},
  };
}

ClientHeader HeaderFor(const ClientMessage& message) {
  return IsClientRequest(message) ? kClientHeader : kOrchestratorHeader;
}

std::vector<std::string> EveryMessageEncoded() {
  std::vector<std::string> buffers;
  for (const ClientMessage& message : EveryMessageFullySet()) {
    buffers.push_back(EncodeClientMessage(HeaderFor(message), message));
  }
  return buffers;
}

std::string Finished(FlatBufferBuilder& builder) {
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

// An envelope as a peer in another language might build it.
std::string Envelope(FlatBufferBuilder& builder, uint16_t major, uint16_t minor,
                     wire::ClientMessage type, Offset<void> message, uint64_t message_id = 5,
                     const std::string& sender = "orchestrator") {
  auto envelope = wire::CreateClientEnvelope(builder, major, minor, message_id, 0,
                                             builder.CreateString(sender), type, message);
  builder.Finish(envelope, wire::ClientEnvelopeIdentifier());
  return Finished(builder);
}

void ExpectInvalid(const std::string& bytes, const std::string& expected_text) {
  absl::Status status = DecodeClientMessage(bytes).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(expected_text));
}

TEST(ClientMessagesTest, TheFixtureHasOneOfEachMessageInOrder) {
  const std::vector<ClientMessage> messages = EveryMessageFullySet();
  ASSERT_EQ(messages.size(), std::variant_size_v<ClientMessage>);
  for (size_t i = 0; i < messages.size(); ++i) EXPECT_EQ(messages[i].index(), i);
}

TEST(ClientMessagesTest, EveryMessageRoundTripsWithEveryFieldSet) {
  for (const ClientMessage& message : EveryMessageFullySet()) {
    SCOPED_TRACE(ClientMessageName(message));
    const ClientHeader header = HeaderFor(message);
    absl::StatusOr<DecodedClient> decoded =
        DecodeClientMessage(EncodeClientMessage(header, message));
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->version, (ClientVersion{kClientProtocolMajor, kClientProtocolMinor}));
    EXPECT_EQ(decoded->header, header);
    EXPECT_EQ(decoded->message, message);
  }
}

TEST(ClientMessagesTest, DefaultMessagesRoundTripWithTheirDefaults) {
  for (size_t i = 0; i < std::variant_size_v<ClientMessage>; ++i) {
    // A default-constructed value of the i-th alternative, taken from the fixture's type.
    ClientMessage message =
        std::visit([](const auto& m) { return ClientMessage(std::decay_t<decltype(m)>{}); },
                   EveryMessageFullySet()[i]);
    SCOPED_TRACE(ClientMessageName(message));
    absl::StatusOr<DecodedClient> decoded =
        DecodeClientMessage(EncodeClientMessage(kClientHeader, message));
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->message, message);
  }
  EXPECT_EQ(TrialLogsRequest{}.rank, -1);
  EXPECT_TRUE(ExperimentDescription{}.smaller_is_better);
}

// A table a peer wrote without its optional fields reads as the schema's defaults, which are the
// structs' defaults.
TEST(ClientMessagesTest, AbsentFieldsReadAsTheStructDefaults) {
  FlatBufferBuilder builder;
  auto empty_request = builder.EndTable(builder.StartTable());
  const std::string request = Envelope(builder, 1, 0, wire::ClientMessage::TrialLogsRequest,
                                       Offset<void>(empty_request), 5, "cohort-cli");
  absl::StatusOr<DecodedClient> decoded = DecodeClientMessage(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->message, ClientMessage(TrialLogsRequest{}));

  FlatBufferBuilder description_builder;
  auto summary = description_builder.EndTable(description_builder.StartTable());
  const auto start = description_builder.StartTable();
  description_builder.AddOffset(wire::ExperimentDescription::VT_SUMMARY,
                                Offset<wire::ExperimentSummary>(summary));
  const Offset<void> description(description_builder.EndTable(start));
  decoded = DecodeClientMessage(
      Envelope(description_builder, 1, 0, wire::ClientMessage::ExperimentDescription, description));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->message, ClientMessage(ExperimentDescription{}));
}

TEST(ClientMessagesTest, KeepsTheSignOfZeroAndNaN) {
  ExperimentSummary summary;
  summary.progress = std::numeric_limits<double>::quiet_NaN();
  summary.ended_unix_time = -0.0;
  absl::StatusOr<DecodedClient> decoded =
      DecodeClientMessage(EncodeClientMessage(kOrchestratorHeader, ExperimentList{{summary}}));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const ExperimentSummary& back = std::get<ExperimentList>(decoded->message).experiments.at(0);
  EXPECT_TRUE(std::isnan(back.progress));
  EXPECT_TRUE(std::signbit(back.ended_unix_time));
}

TEST(ClientMessagesTest, DecodesFromAnyAlignment) {
  const size_t agent_table = 11;
  const std::string bytes = EveryMessageEncoded()[agent_table];
  std::string shifted(bytes.size() + 8, '\0');
  for (size_t offset = 0; offset < 8; ++offset) {
    std::memcpy(shifted.data() + offset, bytes.data(), bytes.size());
    absl::StatusOr<DecodedClient> decoded =
        DecodeClientMessage(absl::string_view(shifted.data() + offset, bytes.size()));
    ASSERT_TRUE(decoded.ok()) << "offset " << offset << ": " << decoded.status();
    EXPECT_EQ(decoded->message, EveryMessageFullySet()[agent_table]);
  }
}

// What a peer of protocol 1.7 sends: a KillExperiment and an envelope each with a field appended.
TEST(ClientMessagesTest, AcceptsANewerMinorAndIgnoresItsNewFields) {
  FlatBufferBuilder builder;
  auto start = builder.StartTable();
  builder.AddElement<uint64_t>(wire::KillExperiment::VT_EXPERIMENT_ID, 7, 0);
  builder.AddElement<uint32_t>(
      static_cast<flatbuffers::voffset_t>(wire::KillExperiment::VT_EXPERIMENT_ID + 2), 30, 0);
  const Offset<void> kill(builder.EndTable(start));
  auto sender = builder.CreateString("cohort-cli");
  auto future_text = builder.CreateString("a field of 1.7");
  start = builder.StartTable();
  builder.AddElement<uint16_t>(wire::ClientEnvelope::VT_PROTOCOL_MAJOR, 1, 0);
  builder.AddElement<uint16_t>(wire::ClientEnvelope::VT_PROTOCOL_MINOR, 7, 0);
  builder.AddElement<uint64_t>(wire::ClientEnvelope::VT_MESSAGE_ID, 99, 0);
  builder.AddElement<uint64_t>(wire::ClientEnvelope::VT_CORRELATION_ID, 0, 0);
  builder.AddOffset(wire::ClientEnvelope::VT_SENDER, sender);
  builder.AddElement<uint8_t>(wire::ClientEnvelope::VT_MESSAGE_TYPE,
                              static_cast<uint8_t>(wire::ClientMessage::KillExperiment), 0);
  builder.AddOffset(wire::ClientEnvelope::VT_MESSAGE, kill);
  builder.AddOffset(static_cast<flatbuffers::voffset_t>(wire::ClientEnvelope::VT_MESSAGE + 2),
                    future_text);
  builder.Finish(Offset<wire::ClientEnvelope>(builder.EndTable(start)),
                 wire::ClientEnvelopeIdentifier());

  absl::StatusOr<DecodedClient> decoded = DecodeClientMessage(Finished(builder));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->version, (ClientVersion{1, 7}));
  EXPECT_EQ(decoded->header, (ClientHeader{99, 0, "cohort-cli"}));
  EXPECT_EQ(decoded->message, ClientMessage(KillExperiment{7}));
}

TEST(ClientMessagesTest, RefusesAnotherMajorNamingBothVersions) {
  for (uint16_t major : {uint16_t{0}, uint16_t{2}, uint16_t{65535}}) {
    FlatBufferBuilder builder;
    const std::string bytes = Envelope(builder, major, 3, wire::ClientMessage::ClientAck,
                                       wire::CreateClientAck(builder).Union());
    ExpectInvalid(
        bytes, absl::StrCat("client protocol ", major, ".3 is not supported: this build speaks 1.",
                            kClientProtocolMinor));
  }
}

// A major-2 envelope need not verify as a major-1 one (here it lacks the sender 1.0 requires):
// the version is still what the error names.
TEST(ClientMessagesTest, NamesAnotherMajorEvenWhenTheRestDoesNotVerify) {
  FlatBufferBuilder builder;
  const auto start = builder.StartTable();
  builder.AddElement<uint16_t>(wire::ClientEnvelope::VT_PROTOCOL_MAJOR, 2, 0);
  builder.AddElement<uint16_t>(wire::ClientEnvelope::VT_PROTOCOL_MINOR, 1, 0);
  builder.Finish(Offset<wire::ClientEnvelope>(builder.EndTable(start)),
                 wire::ClientEnvelopeIdentifier());
  ExpectInvalid(Finished(builder), "client protocol 2.1 is not supported");
}

TEST(ClientMessagesTest, RefusesAnotherProtocolsEnvelope) {
  std::string bytes = EveryMessageEncoded()[0];
  std::memcpy(bytes.data() + 4, "CCTL", 4);
  ExpectInvalid(bytes, "not a client envelope");
}

TEST(ClientMessagesTest, RefusesAnUnknownMessageTypeNamingIt) {
  // From this build's minor, or from a newer one, which the error then names.
  const uint16_t newer = kClientProtocolMinor + 1;
  for (uint16_t minor : {uint16_t{0}, newer}) {
    FlatBufferBuilder builder;
    const std::string bytes = Envelope(builder, 1, minor, static_cast<wire::ClientMessage>(200),
                                       wire::CreateClientAck(builder).Union());
    ExpectInvalid(bytes, "malformed client message: unknown message type 200");
    if (minor > 0) {
      ExpectInvalid(bytes, absl::StrCat("the sender speaks protocol 1.", newer, ", this build 1.",
                                        kClientProtocolMinor));
    }
  }
}

TEST(ClientMessagesTest, RefusesAMissingMessage) {
  for (wire::ClientMessage type : {wire::ClientMessage::NONE, wire::ClientMessage::ClientAck}) {
    FlatBufferBuilder builder;
    ExpectInvalid(Envelope(builder, 1, 0, type, 0), "no message");
  }
}

TEST(ClientMessagesTest, RefusesEnumValuesItDoesNotKnowNamingThem) {
  {
    FlatBufferBuilder builder;
    auto summary =
        wire::CreateExperimentSummary(builder, 1, 0, static_cast<wire::ExperimentState>(6));
    auto list = wire::CreateExperimentList(builder, builder.CreateVector(&summary, 1));
    ExpectInvalid(Envelope(builder, 1, 0, wire::ClientMessage::ExperimentList, list.Union()),
                  "ExperimentList: unknown experiment state 6");
  }
  {
    FlatBufferBuilder builder;
    auto change = wire::CreateChangeExperiment(builder, 1, static_cast<wire::ExperimentChange>(5));
    ExpectInvalid(Envelope(builder, 1, 0, wire::ClientMessage::ChangeExperiment, change.Union()),
                  "ChangeExperiment: unknown experiment change 5");
  }
  {
    FlatBufferBuilder builder;
    auto trial = wire::CreateTrialSummary(builder, 1, 1, static_cast<wire::TrialState>(6));
    auto description =
        wire::CreateExperimentDescription(builder, wire::CreateExperimentSummary(builder), 0, 0,
                                          true, builder.CreateVector(&trial, 1));
    ExpectInvalid(
        Envelope(builder, 1, 0, wire::ClientMessage::ExperimentDescription, description.Union()),
        "ExperimentDescription: unknown trial state 6");
  }
  {
    FlatBufferBuilder builder;
    auto row = wire::CreateTaskRow(builder, 1, 1, 1, 1, static_cast<wire::TaskRowState>(4));
    auto table = wire::CreateTaskListing(builder, builder.CreateVector(&row, 1));
    ExpectInvalid(Envelope(builder, 1, 0, wire::ClientMessage::TaskListing, table.Union()),
                  "TaskListing: unknown task row state 4");
  }
  {
    FlatBufferBuilder builder;
    auto row = wire::CreateCheckpointRow(builder, 0, 1, 1, 1, false, 0, 0, 0,
                                         static_cast<wire::CheckpointCondition>(4));
    auto listing = wire::CreateCheckpointListing(builder, builder.CreateVector(&row, 1));
    ExpectInvalid(Envelope(builder, 1, 0, wire::ClientMessage::CheckpointListing, listing.Union()),
                  "CheckpointListing: unknown checkpoint condition 4");
  }
  {
    FlatBufferBuilder builder;
    auto error = wire::CreateClientError(builder, static_cast<wire::ClientErrorCode>(99));
    const uint16_t newer = kClientProtocolMinor + 1;
    ExpectInvalid(
        Envelope(builder, 1, newer, wire::ClientMessage::ClientError, error.Union()),
        absl::StrCat("ClientError: unknown error code 99 (the sender speaks protocol 1.", newer));
  }
}

// The generated builders refuse to omit a required field, so these tables are built by hand.
TEST(ClientMessagesTest, RefusesTablesWithoutTheirRequiredFields) {
  {
    FlatBufferBuilder builder;
    auto ack = wire::CreateClientAck(builder);
    const auto start = builder.StartTable();
    builder.AddElement<uint16_t>(wire::ClientEnvelope::VT_PROTOCOL_MAJOR, 1, 0);
    builder.AddElement<uint64_t>(wire::ClientEnvelope::VT_MESSAGE_ID, 5, 0);
    builder.AddElement<uint8_t>(wire::ClientEnvelope::VT_MESSAGE_TYPE,
                                static_cast<uint8_t>(wire::ClientMessage::ClientAck), 0);
    builder.AddOffset(wire::ClientEnvelope::VT_MESSAGE, ack);
    builder.Finish(Offset<wire::ClientEnvelope>(builder.EndTable(start)),
                   wire::ClientEnvelopeIdentifier());
    ExpectInvalid(Finished(builder), "failed verification");
  }
  {
    FlatBufferBuilder builder;
    const auto start = builder.StartTable();
    builder.AddElement<uint8_t>(wire::ExperimentDescription::VT_SMALLER_IS_BETTER, 0, 1);
    const Offset<void> summaryless(builder.EndTable(start));
    ExpectInvalid(Envelope(builder, 1, 0, wire::ClientMessage::ExperimentDescription, summaryless),
                  "failed verification");
  }
  {
    FlatBufferBuilder builder;
    const auto start = builder.StartTable();
    builder.AddElement<double>(wire::NamedValue::VT_VALUE, 1.5, 0);
    const Offset<wire::NamedValue> nameless(builder.EndTable(start));
    auto trial = wire::CreateTrialSummary(builder, 1, 1, wire::TrialState::Running, 0, 0, 0, 0, 0,
                                          builder.CreateVector(&nameless, 1));
    auto description =
        wire::CreateExperimentDescription(builder, wire::CreateExperimentSummary(builder), 0, 0,
                                          true, builder.CreateVector(&trial, 1));
    ExpectInvalid(
        Envelope(builder, 1, 0, wire::ClientMessage::ExperimentDescription, description.Union()),
        "failed verification");
  }
}

// The Verifier checks a vector for 4-byte alignment only; a [ulong] whose values are not 8-byte
// aligned (here a [uint] posing as one, depending on padding) must be refused, not read.
TEST(ClientMessagesTest, RefusesAMisalignedVectorOfEightByteValues) {
  int misaligned = 0, aligned = 0;
  for (int padding = 0; padding < 4; ++padding) {
    FlatBufferBuilder builder;
    auto agent = builder.CreateString("agent-1");
    for (int i = 0; i < padding; ++i) builder.PushElement<uint32_t>(0);
    const uint32_t halves[] = {7, 0};
    auto ids = builder.CreateVector(halves, 2);
    auto row = wire::CreateAgentRow(builder, agent, 0, 0, 0, false, 0,
                                    Offset<flatbuffers::Vector<uint64_t>>(ids.o));
    auto table = wire::CreateAgentTable(builder, builder.CreateVector(&row, 1));
    const std::string bytes =
        Envelope(builder, 1, 0, wire::ClientMessage::AgentTable, table.Union());
    const auto* start = reinterpret_cast<const uint8_t*>(bytes.data());
    const uint8_t* values = wire::GetClientEnvelope(start)
                                ->message_as_AgentTable()
                                ->agents()
                                ->Get(0)
                                ->task_ids()
                                ->Data();
    if ((values - start) % 8 != 0) {
      ++misaligned;
      ExpectInvalid(bytes, "AgentTable: a vector of 8-byte values is not 8-byte aligned");
    } else {
      ++aligned;
      absl::StatusOr<DecodedClient> decoded = DecodeClientMessage(bytes);
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      EXPECT_EQ(std::get<AgentTable>(decoded->message).agents.at(0).task_ids.size(), 2u);
    }
  }
  EXPECT_GT(misaligned, 0);
  EXPECT_GT(aligned, 0);
}

TEST(ClientMessagesTest, RefusesAMessageIdOfZeroAndAnEmptySender) {
  ExpectInvalid(EncodeClientMessage({0, 0, "cohort-cli"}, ListTasks{}),
                "malformed client message: message_id is 0");
  ExpectInvalid(EncodeClientMessage({1, 0, ""}, ListTasks{}),
                "malformed client message: empty sender");
}

TEST(ClientMessagesTest, IsClientRequestForEveryRequestAndNoReply) {
  const std::vector<bool> expected = {true,  true,  true,  true,  true,  true,  true,  false,
                                      false, false, false, false, false, false, false, true,
                                      true,  true,  true,  false, false, true,  false};
  const std::vector<ClientMessage> messages = EveryMessageFullySet();
  ASSERT_EQ(messages.size(), expected.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_EQ(IsClientRequest(messages[i]), expected[i]) << ClientMessageName(messages[i]);
  }
}

TEST(ClientMessagesTest, NamesEveryMessageAsTheSchemaDoes) {
  const std::vector<ClientMessage> messages = EveryMessageFullySet();
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto type = static_cast<wire::ClientMessage>(i + 1);
    EXPECT_EQ(ClientMessageName(messages[i]), wire::EnumNameClientMessage(type));
  }
}

TEST(ClientMessagesTest, NamesEveryState) {
  EXPECT_EQ(ExperimentStateName(ExperimentState::kActive), "active");
  EXPECT_EQ(ExperimentStateName(ExperimentState::kStopping), "stopping");
  EXPECT_EQ(ExperimentStateName(ExperimentState::kCompleted), "completed");
  EXPECT_EQ(ExperimentStateName(ExperimentState::kStopped), "stopped");
  EXPECT_EQ(ExperimentStateName(ExperimentState::kError), "error");
  EXPECT_EQ(ExperimentStateName(ExperimentState::kPaused), "paused");
  EXPECT_EQ(ExperimentChangeName(ExperimentChangeKind::kPause), "pause");
  EXPECT_EQ(ExperimentChangeName(ExperimentChangeKind::kActivate), "activate");
  EXPECT_EQ(ExperimentChangeName(ExperimentChangeKind::kArchive), "archive");
  EXPECT_EQ(ExperimentChangeName(ExperimentChangeKind::kUnarchive), "unarchive");
  EXPECT_EQ(ExperimentChangeName(ExperimentChangeKind::kDelete), "delete");
  EXPECT_EQ(TrialStateName(TrialState::kQueued), "queued");
  EXPECT_EQ(TrialStateName(TrialState::kRunning), "running");
  EXPECT_EQ(TrialStateName(TrialState::kPaused), "paused");
  EXPECT_EQ(TrialStateName(TrialState::kCompleted), "completed");
  EXPECT_EQ(TrialStateName(TrialState::kStopped), "stopped");
  EXPECT_EQ(TrialStateName(TrialState::kError), "error");
  EXPECT_EQ(TaskRowStateName(TaskRowState::kQueued), "queued");
  EXPECT_EQ(TaskRowStateName(TaskRowState::kStarting), "starting");
  EXPECT_EQ(TaskRowStateName(TaskRowState::kRunning), "running");
  EXPECT_EQ(TaskRowStateName(TaskRowState::kStopping), "stopping");
  EXPECT_EQ(CheckpointConditionName(CheckpointCondition::kUnchecked), "-");
  EXPECT_EQ(CheckpointConditionName(CheckpointCondition::kWhole), "whole");
  EXPECT_EQ(CheckpointConditionName(CheckpointCondition::kDamaged), "damaged");
  EXPECT_EQ(CheckpointConditionName(CheckpointCondition::kMissing), "missing");
}

// A client of minor 3 does not know kPaused: it is told kActive, in lists and descriptions; a
// client of minor 4 sees it as it is.
TEST(ClientMessagesTest, AnOlderClientIsToldAPausedExperimentIsActive) {
  ExperimentSummary paused = FullSummary();
  paused.state = ExperimentState::kPaused;
  ExperimentSummary stopped = FullSummary();
  stopped.state = ExperimentState::kStopped;
  ClientMessage list = ExperimentList{{paused, stopped}};
  AdaptReplyForClientMinor(3, list);
  EXPECT_EQ(std::get<ExperimentList>(list).experiments[0].state, ExperimentState::kActive);
  EXPECT_EQ(std::get<ExperimentList>(list).experiments[1].state, ExperimentState::kStopped);
  ClientMessage description = ExperimentDescription{paused, "", "", true, {}};
  ClientMessage same = description;
  AdaptReplyForClientMinor(4, same);
  EXPECT_EQ(same, description);
  AdaptReplyForClientMinor(3, description);
  EXPECT_EQ(std::get<ExperimentDescription>(description).summary.state, ExperimentState::kActive);
}

// ---- bytes no honest peer would send

// Whatever decodes must be a value the codec writes and reads back unchanged: its encoding
// decodes, and encodes again to the same bytes (compared as bytes, so a NaN compares too).
void ExpectErrorOrWellFormed(const std::string& bytes) {
  absl::StatusOr<DecodedClient> decoded = DecodeClientMessage(bytes);
  if (!decoded.ok()) {
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
    return;
  }
  const std::string encoded = EncodeClientMessage(decoded->header, decoded->message);
  absl::StatusOr<DecodedClient> again = DecodeClientMessage(encoded);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(EncodeClientMessage(again->header, again->message), encoded);
}

TEST(ClientMessagesHostileBytesTest, RandomBuffersAreRefused) {
  ExpectRandomBuffersRefused(DecodeClientMessage);
  EXPECT_FALSE(DecodeClientMessage("CCLI").ok());
}

TEST(ClientMessagesHostileBytesTest, RandomBuffersWithTheIdentifierNeverCrash) {
  ForEachRandomBodyBehindTheIdentifier(EveryMessageEncoded()[0], 300, ExpectErrorOrWellFormed);
}

TEST(ClientMessagesHostileBytesTest, EveryTruncationIsRefusedOrExact) {
  for (const std::string& valid : EveryMessageEncoded()) {
    const absl::StatusOr<DecodedClient> whole = DecodeClientMessage(valid);
    ASSERT_TRUE(whole.ok()) << whole.status();
    ExpectEveryTruncationRefusedOrExact(valid, DecodeClientMessage);
  }
}

TEST(ClientMessagesHostileBytesTest, EveryFlippedBitAndSmashedByteIsHandled) {
  size_t refused = 0, accepted = 0;
  for (const std::string& valid : EveryMessageEncoded()) {
    ForEachFlippedBitAndSmashedByte(valid, [&](const std::string& bytes) {
      (DecodeClientMessage(bytes).ok() ? accepted : refused) += 1;
      ExpectErrorOrWellFormed(bytes);
    });
  }
  // Both outcomes happen: flips in values still decode, flips in offsets and the header do not.
  EXPECT_GT(refused, 1000u);
  EXPECT_GT(accepted, 1000u);
}

}  // namespace
}  // namespace cohort
