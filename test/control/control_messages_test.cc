// The control protocol codec: round trips of every message with every field set, version rules,
// the rules a verified buffer must still keep, and bytes no honest peer would send (random,
// truncated, bit-flipped), which must give an error or a well-formed message, never a crash.
#include "runtime/control/control_messages.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "control_generated.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/common/hostile_bytes.h"

namespace cohort {
namespace {

namespace wire = fbs::control;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr uint64_t kLargestU64 = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kMaxU32 = std::numeric_limits<uint32_t>::max();

// Text that C strings would cut short: an embedded NUL, UTF-8, a quote and a newline.
const std::string kOddControlText = std::string("a\0b", 3) + " \xC3\xA9t\xC3\xA9 \"x\"\n";

const ControlHeader kAgentHeader{kLargestU64, 41, "agent-7"};
const ControlHeader kOrchestratorHeader{12, 0, std::string(kOrchestratorSender)};

TaskEntry FullTaskEntry() {
  return {kLargestU64, 3, 9, TaskState::kStopping, {0, 1, kMaxU32}, {4, 5, 6}};
}

// One of each message, every field set to a value other than its default.
std::vector<ControlMessage> EveryMessageFullySet() {
  return {
      AgentHello{"agent-7",
                 "0.1.0",
                 "gpu-node-3",
                 {{0, SlotKind::kGpu, 0, "NVIDIA H100 80GB HBM3"},
                  {kMaxU32, SlotKind::kCpu, -1, kOddControlText}},
                 {FullTaskEntry(), {1, 2, 3, TaskState::kExited, {}, {}}}},
      AgentHeartbeat{"agent-7",
                     1.7e9 + 0.25,
                     8,
                     {1, kLargestU64},
                     {{kLargestU64, {{3, 1, kOddControlText, 55.5, 1, kLargestU64}}}, {2, {}}}},
      StartTask{7,
                3,
                kLargestU64,
                2,
                {"/opt/plugins/libmlp.so", "/runs/mlp/config.yaml", "name: mlp\n", "/ckpt",
                 "trial-3-batch-100", true, kLargestU64},
                {{0, 0, 2}, {1, 1, 3}},
                4,
                1,
                2,
                {"tcp://10.0.0.5:29500", "trial-3-attempt-2/"},
                {{"NCCL_DEBUG", "INFO"}, {"EMPTY", ""}, {kOddControlText, kOddControlText}}},
      KillTask{7, kOddControlText, kMaxU32},
      TaskStatus{7, TaskState::kRunning, {{0, 4242}, {1, std::numeric_limits<int64_t>::max()}}},
      TaskExit{7, 1, -3, 9, "killed after the grace period", true, true, true},
      TaskMetricsReport{7,
                        {3,
                         ReportKind::kValidation,
                         kLargestU64,
                         12800,
                         1.7e9,
                         {{"loss", 0.25}, {"accuracy", -0.0}, {kOddControlText, 1e308}},
                         {{"compute", 0.5}, {"optimizer", 0.125}},
                         4096.5,
                         kLargestU64,
                         std::nullopt,
                         {{0, 3, "NVIDIA H100 80GB HBM3", 97.5, 40ull << 30, 80ull << 30},
                          {1, 0, kOddControlText, 0.0, 0, kLargestU64}},
                         {{0, 0.004, 0.005, 1.0, 0.98}, {kMaxU32, 0.25, 0.5, 0.01, 0.5}}}},
      TaskCheckpointReport{7,
                           3,
                           "trial-3-batch-100",
                           100,
                           3200,
                           1 << 20,
                           {{"framework", "cohort"}, {"note", kOddControlText}}},
      TaskCheckpointReport{7, 3, "trial-3-batch-50", 50, 1600, 0, {}, true},
      TaskCheckpointReport{7, 3, "", 0, 0, 0, {}, true},
      LogBatch{7,
               {{0, LogStream::kStdout, 1.7e9, "epoch 1"},
                {kMaxU32, LogStream::kStderr, 1.7e9 + 1, kOddControlText},
                {1, LogStream::kStdout, 0.5, ""},
                {2, LogStream::kAgent, 1.7e9 + 2, "rank 2 sent no heartbeat for 30 s"}}},
      TaskListRequest{},
      TaskList{{FullTaskEntry(), {8, 4, 1, TaskState::kPending, {2}, {0}}}},
      Ack{},
      ErrorReply{ControlErrorCode::kSlotUnavailable, "slot 3 is busy"},
      TaskProgress{7, {3, kLargestU64, kLargestU64, 12800, -0.0, 5.5e4}},
  };
}

// The header each message is sent with: the agent's or the orchestrator's.
ControlHeader HeaderFor(const ControlMessage& message) {
  return std::holds_alternative<StartTask>(message) || std::holds_alternative<KillTask>(message) ||
                 std::holds_alternative<TaskListRequest>(message)
             ? kOrchestratorHeader
             : kAgentHeader;
}

std::vector<std::string> EveryMessageEncoded() {
  std::vector<std::string> buffers;
  for (const ControlMessage& message : EveryMessageFullySet()) {
    buffers.push_back(EncodeControlMessage(HeaderFor(message), message));
  }
  return buffers;
}

// An envelope as a peer in another language might build it.
std::string Envelope(FlatBufferBuilder& builder, uint16_t major, uint16_t minor,
                     wire::ControlPayload type, Offset<void> payload, uint64_t message_id = 5,
                     const std::string& sender = "orchestrator") {
  auto envelope = wire::CreateControlEnvelope(builder, major, minor, message_id, 0,
                                              builder.CreateString(sender), type, payload);
  builder.Finish(envelope, wire::ControlEnvelopeIdentifier());
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

absl::Status ControlDecodeStatus(const std::string& bytes) {
  return DecodeControlMessage(bytes).status();
}

void ExpectInvalid(const std::string& bytes, const std::string& expected_text) {
  absl::Status status = ControlDecodeStatus(bytes);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(expected_text));
}

TEST(ControlMessagesTest, EveryMessageRoundTripsWithEveryFieldSet) {
  for (const ControlMessage& message : EveryMessageFullySet()) {
    SCOPED_TRACE(ControlMessageName(message));
    const ControlHeader header = HeaderFor(message);
    absl::StatusOr<DecodedControl> decoded =
        DecodeControlMessage(EncodeControlMessage(header, message));
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->version, (ControlVersion{kControlProtocolMajor, kControlProtocolMinor}));
    EXPECT_EQ(decoded->header, header);
    EXPECT_EQ(decoded->message, message);
  }
}

TEST(ControlMessagesTest, MinimalMessagesRoundTripWithTheirDefaults) {
  AgentHello hello;
  hello.agent_id = "agent-7";
  AgentHeartbeat beat;
  beat.agent_id = "agent-7";
  StartTask start;
  start.worker.plugin_path = "p.so";
  TaskCheckpointReport checkpoint;
  checkpoint.checkpoint_id = "c";
  const std::vector<ControlMessage> minimal = {hello,
                                               beat,
                                               start,
                                               KillTask{},
                                               TaskStatus{},
                                               TaskExit{},
                                               TaskMetricsReport{},
                                               checkpoint,
                                               LogBatch{},
                                               TaskList{},
                                               ErrorReply{},
                                               TaskProgress{}};
  for (const ControlMessage& message : minimal) {
    SCOPED_TRACE(ControlMessageName(message));
    absl::StatusOr<DecodedControl> decoded =
        DecodeControlMessage(EncodeControlMessage(kAgentHeader, message));
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->message, message);
  }
  EXPECT_EQ(TaskExit{}.rank, kWholeTask);
  EXPECT_EQ(AgentSlot{}.device_id, -1);
}

TEST(ControlMessagesTest, KeepsTheSignOfZeroAndNaN) {
  const TaskMetricsReport report{
      1,
      {2, ReportKind::kTraining, 3, 4, std::numeric_limits<double>::quiet_NaN(), {{"zero", -0.0}}}};
  absl::StatusOr<DecodedControl> decoded =
      DecodeControlMessage(EncodeControlMessage(kAgentHeader, report));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const auto& back = std::get<TaskMetricsReport>(decoded->message);
  EXPECT_TRUE(std::isnan(back.report.unix_time));
  EXPECT_TRUE(std::signbit(back.report.metrics[0].value));
}

TEST(ControlMessagesTest, DecodesFromAnyAlignment) {
  const std::string bytes = EveryMessageEncoded()[2];
  std::string shifted(bytes.size() + 8, '\0');
  for (size_t offset = 0; offset < 8; ++offset) {
    std::memcpy(shifted.data() + offset, bytes.data(), bytes.size());
    absl::StatusOr<DecodedControl> decoded =
        DecodeControlMessage(absl::string_view(shifted.data() + offset, bytes.size()));
    ASSERT_TRUE(decoded.ok()) << "offset " << offset << ": " << decoded.status();
    EXPECT_EQ(decoded->message, EveryMessageFullySet()[2]);
  }
}

// What a peer of protocol 1.7 sends: a KillTask and an envelope each with a field appended.
TEST(ControlMessagesTest, AcceptsANewerMinorAndIgnoresItsNewFields) {
  FlatBufferBuilder builder;
  auto reason = builder.CreateString("preempted");
  auto start = builder.StartTable();
  builder.AddElement<uint64_t>(wire::KillTask::VT_TASK_ID, 7, 0);
  builder.AddOffset(wire::KillTask::VT_REASON, reason);
  builder.AddElement<uint32_t>(wire::KillTask::VT_GRACE_SECONDS, 30, 0);
  builder.AddElement<uint64_t>(
      static_cast<flatbuffers::voffset_t>(wire::KillTask::VT_GRACE_SECONDS + 2), 123, 0);
  const Offset<void> kill(builder.EndTable(start));
  auto sender = builder.CreateString("orchestrator");
  auto future_text = builder.CreateString("a field of 1.7");
  start = builder.StartTable();
  builder.AddElement<uint16_t>(wire::ControlEnvelope::VT_PROTOCOL_MAJOR, 1, 0);
  builder.AddElement<uint16_t>(wire::ControlEnvelope::VT_PROTOCOL_MINOR, 7, 0);
  builder.AddElement<uint64_t>(wire::ControlEnvelope::VT_MESSAGE_ID, 99, 0);
  builder.AddElement<uint64_t>(wire::ControlEnvelope::VT_CORRELATION_ID, 98, 0);
  builder.AddOffset(wire::ControlEnvelope::VT_SENDER, sender);
  builder.AddElement<uint8_t>(wire::ControlEnvelope::VT_PAYLOAD_TYPE,
                              static_cast<uint8_t>(wire::ControlPayload::KillTask), 0);
  builder.AddOffset(wire::ControlEnvelope::VT_PAYLOAD, kill);
  builder.AddOffset(static_cast<flatbuffers::voffset_t>(wire::ControlEnvelope::VT_PAYLOAD + 2),
                    future_text);
  builder.Finish(Offset<wire::ControlEnvelope>(builder.EndTable(start)),
                 wire::ControlEnvelopeIdentifier());
  const std::string bytes(reinterpret_cast<const char*>(builder.GetBufferPointer()),
                          builder.GetSize());

  absl::StatusOr<DecodedControl> decoded = DecodeControlMessage(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->version, (ControlVersion{1, 7}));
  EXPECT_EQ(decoded->header, (ControlHeader{99, 98, "orchestrator"}));
  EXPECT_EQ(decoded->message, ControlMessage(KillTask{7, "preempted", 30}));
}

TEST(ControlMessagesTest, RefusesAnotherMajorNamingBothVersions) {
  for (uint16_t major : {uint16_t{0}, uint16_t{2}, uint16_t{65535}}) {
    FlatBufferBuilder builder;
    const std::string bytes =
        Envelope(builder, major, 3, wire::ControlPayload::Ack, wire::CreateAck(builder).Union());
    ExpectInvalid(bytes, absl::StrCat("control protocol ", major,
                                      ".3 is not supported: this "
                                      "build speaks ",
                                      kControlProtocolMajor, ".", kControlProtocolMinor));
  }
}

// A major-2 envelope need not verify as a major-1 one (here it lacks the sender 1.0 requires):
// the version is still what the error names.
TEST(ControlMessagesTest, NamesAnotherMajorEvenWhenTheRestDoesNotVerify) {
  FlatBufferBuilder builder;
  const auto start = builder.StartTable();
  builder.AddElement<uint16_t>(wire::ControlEnvelope::VT_PROTOCOL_MAJOR, 2, 0);
  builder.AddElement<uint16_t>(wire::ControlEnvelope::VT_PROTOCOL_MINOR, 1, 0);
  builder.Finish(Offset<wire::ControlEnvelope>(builder.EndTable(start)),
                 wire::ControlEnvelopeIdentifier());
  const std::string bytes(reinterpret_cast<const char*>(builder.GetBufferPointer()),
                          builder.GetSize());
  ExpectInvalid(bytes, "control protocol 2.1 is not supported");
}

TEST(ControlMessagesTest, RefusesAnUnknownMessageTypeNamingIt) {
  // From this build's minor, or from a newer one, which the error then names.
  const uint16_t newer = kControlProtocolMinor + 1;
  for (uint16_t minor : {uint16_t{0}, newer}) {
    FlatBufferBuilder builder;
    const std::string bytes = Envelope(builder, 1, minor, static_cast<wire::ControlPayload>(200),
                                       wire::CreateAck(builder).Union());
    ExpectInvalid(bytes, "unknown message type 200");
    if (minor > 0) {
      ExpectInvalid(bytes, absl::StrCat("the sender speaks protocol 1.", newer, ", this build 1.",
                                        kControlProtocolMinor));
    }
  }
}

TEST(ControlMessagesTest, RefusesAMissingPayload) {
  for (wire::ControlPayload type : {wire::ControlPayload::NONE, wire::ControlPayload::Ack}) {
    FlatBufferBuilder builder;
    ExpectInvalid(Envelope(builder, 1, 0, type, 0), "no payload");
  }
}

TEST(ControlMessagesTest, RefusesEnumValuesItDoesNotKnowNamingThem) {
  {
    FlatBufferBuilder builder;
    auto status = wire::CreateTaskStatus(builder, 7, static_cast<wire::TaskState>(9));
    ExpectInvalid(
        Envelope(builder, 1, 0, wire::ControlPayload::TaskStatus, status.Union(), 5, "agent-7"),
        "TaskStatus: unknown task state 9");
  }
  {
    FlatBufferBuilder builder;
    auto slot = wire::CreateAgentSlot(builder, 0, static_cast<wire::SlotKind>(5));
    auto hello = wire::CreateAgentHello(builder, builder.CreateString("agent-7"), 0, 0,
                                        builder.CreateVector(&slot, 1));
    ExpectInvalid(
        Envelope(builder, 1, 0, wire::ControlPayload::AgentHello, hello.Union(), 5, "agent-7"),
        "AgentHello: unknown slot kind 5");
  }
  {
    FlatBufferBuilder builder;
    auto line = wire::CreateLogLine(builder, 0, static_cast<wire::LogStream>(3));
    auto batch = wire::CreateLogBatch(builder, 7, builder.CreateVector(&line, 1));
    ExpectInvalid(Envelope(builder, 1, 0, wire::ControlPayload::LogBatch, batch.Union()),
                  "LogBatch: unknown log stream 3");
  }
  {
    FlatBufferBuilder builder;
    auto report = wire::CreateTaskMetricsReport(builder, 7, 3, static_cast<wire::ReportKind>(7));
    ExpectInvalid(Envelope(builder, 1, 0, wire::ControlPayload::TaskMetricsReport, report.Union()),
                  "TaskMetricsReport: unknown report kind 7");
  }
  {
    FlatBufferBuilder builder;
    auto reply = wire::CreateErrorReply(builder, static_cast<wire::ErrorCode>(99));
    const uint16_t newer = kControlProtocolMinor + 1;
    ExpectInvalid(
        Envelope(builder, 1, newer, wire::ControlPayload::ErrorReply, reply.Union()),
        absl::StrCat("ErrorReply: unknown error code 99 (the sender speaks protocol 1.", newer));
  }
}

// The generated builders refuse to omit a required field, so these tables are built by hand.
TEST(ControlMessagesTest, RefusesTablesWithoutTheirRequiredFields) {
  {
    FlatBufferBuilder builder;
    const auto start = builder.StartTable();
    builder.AddElement<uint64_t>(wire::StartTask::VT_TASK_ID, 7, 0);
    const Offset<void> start_task(builder.EndTable(start));
    ExpectInvalid(Envelope(builder, 1, 0, wire::ControlPayload::StartTask, start_task),
                  "failed verification");
  }
  {
    FlatBufferBuilder builder;
    const auto start = builder.StartTable();
    builder.AddElement<uint32_t>(wire::AgentHeartbeat::VT_BUSY_SLOTS, 2, 0);
    const Offset<void> beat(builder.EndTable(start));
    ExpectInvalid(Envelope(builder, 1, 0, wire::ControlPayload::AgentHeartbeat, beat),
                  "failed verification");
  }
  {
    FlatBufferBuilder builder;
    const auto start = builder.StartTable();
    builder.AddElement<double>(wire::NamedValue::VT_VALUE, 1.5, 0);
    const Offset<wire::NamedValue> nameless(builder.EndTable(start));
    auto report = wire::CreateTaskMetricsReport(builder, 7, 3, wire::ReportKind::Training, 0, 0, 0,
                                                builder.CreateVector(&nameless, 1));
    ExpectInvalid(Envelope(builder, 1, 0, wire::ControlPayload::TaskMetricsReport, report.Union()),
                  "failed verification");
  }
  {
    FlatBufferBuilder builder;
    auto ack = wire::CreateAck(builder);
    const auto start = builder.StartTable();
    builder.AddElement<uint16_t>(wire::ControlEnvelope::VT_PROTOCOL_MAJOR, 1, 0);
    builder.AddElement<uint64_t>(wire::ControlEnvelope::VT_MESSAGE_ID, 5, 0);
    builder.AddElement<uint8_t>(wire::ControlEnvelope::VT_PAYLOAD_TYPE,
                                static_cast<uint8_t>(wire::ControlPayload::Ack), 0);
    builder.AddOffset(wire::ControlEnvelope::VT_PAYLOAD, ack);
    builder.Finish(Offset<wire::ControlEnvelope>(builder.EndTable(start)),
                   wire::ControlEnvelopeIdentifier());
    const std::string senderless(reinterpret_cast<const char*>(builder.GetBufferPointer()),
                                 builder.GetSize());
    ExpectInvalid(senderless, "failed verification");
  }
}

// An AgentHeartbeat whose running_task_ids hold `halves` as 4-byte values (the 8-byte ids they
// pose as), laid out after `padding` words of padding, and whether those values lie 8-byte
// aligned in the message.
struct PaddedHeartbeat {
  std::string bytes;
  bool aligned = false;
};
PaddedHeartbeat HeartbeatWithPaddedIds(int padding, const std::vector<uint32_t>& halves) {
  FlatBufferBuilder builder;
  auto agent = builder.CreateString("agent-7");
  for (int i = 0; i < padding; ++i) builder.PushElement<uint32_t>(0);
  auto ids = builder.CreateVector(halves);
  auto beat = wire::CreateAgentHeartbeat(builder, agent, 0, 0,
                                         Offset<flatbuffers::Vector<uint64_t>>(ids.o));
  PaddedHeartbeat heartbeat;
  heartbeat.bytes =
      Envelope(builder, 1, 0, wire::ControlPayload::AgentHeartbeat, beat.Union(), 5, "agent-7");
  const auto* start = reinterpret_cast<const uint8_t*>(heartbeat.bytes.data());
  const uint8_t* values =
      wire::GetControlEnvelope(start)->payload_as_AgentHeartbeat()->running_task_ids()->Data();
  heartbeat.aligned = (values - start) % 8 == 0;
  return heartbeat;
}

// The Verifier checks a vector for 4-byte alignment only; a [ulong] whose values are not 8-byte
// aligned (here a [uint] posing as one, depending on padding) must be refused, not read.
TEST(ControlMessagesTest, RefusesAMisalignedVectorOfEightByteValues) {
  int misaligned = 0, aligned = 0;
  for (int padding = 0; padding < 4; ++padding) {
    const PaddedHeartbeat heartbeat = HeartbeatWithPaddedIds(padding, {7, 0});
    if (!heartbeat.aligned) {
      ++misaligned;
      ExpectInvalid(heartbeat.bytes,
                    "AgentHeartbeat: a vector of 8-byte values is not 8-byte aligned");
    } else {
      ++aligned;
      absl::StatusOr<DecodedControl> decoded = DecodeControlMessage(heartbeat.bytes);
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      EXPECT_EQ(std::get<AgentHeartbeat>(decoded->message).running_task_ids.size(), 2u);
    }
  }
  EXPECT_GT(misaligned, 0);
  EXPECT_GT(aligned, 0);
}

// FlatBuffers does not align an empty vector, so an empty [ulong] may start 4 bytes off: it
// holds nothing to read and must decode wherever it lies (found by fuzz/control_message_fuzzer:
// clang, which evaluates CreateAgentHeartbeat's arguments in another order than gcc, laid one
// out so).
TEST(ControlMessagesTest, AnEmptyVectorOfEightByteValuesDecodesWhereverItLies) {
  int misaligned = 0;
  for (int padding = 0; padding < 4; ++padding) {
    const PaddedHeartbeat heartbeat = HeartbeatWithPaddedIds(padding, {});
    if (!heartbeat.aligned) ++misaligned;
    absl::StatusOr<DecodedControl> decoded = DecodeControlMessage(heartbeat.bytes);
    ASSERT_TRUE(decoded.ok()) << "padding " << padding << ": " << decoded.status();
    EXPECT_TRUE(std::get<AgentHeartbeat>(decoded->message).running_task_ids.empty());
  }
  EXPECT_GT(misaligned, 0);
}

TEST(ControlMessagesTest, RefusesVerifiedMessagesThatBreakTheRules) {
  ExpectInvalid(EncodeControlMessage({0, 0, "agent-7"}, Ack{}), "message_id is 0");
  ExpectInvalid(EncodeControlMessage({1, 0, ""}, Ack{}), "empty sender");
  ExpectInvalid(EncodeControlMessage({1, 0, "agent-7"}, AgentHello{}),
                "AgentHello: empty agent id");
  // An agent id reaches log lines: a line break in it could forge one.
  AgentHello forger;
  forger.agent_id = "agent-7\norchestrator: experiment 1 completed";
  ExpectInvalid(EncodeControlMessage({1, 0, forger.agent_id}, forger),
                "AgentHello: agent id holds a control character");
  AgentHello long_name;
  long_name.agent_id = std::string(kMaxAgentIdBytes + 1, 'a');
  ExpectInvalid(EncodeControlMessage({1, 0, long_name.agent_id}, long_name),
                "agent id of 256 bytes; at most 255");
  AgentHeartbeat impostor;
  impostor.agent_id = "agent-8";
  ExpectInvalid(EncodeControlMessage({1, 0, "agent-7"}, impostor),
                "AgentHeartbeat names agent 'agent-8' but was sent by 'agent-7'");
  ExpectInvalid(EncodeControlMessage(kOrchestratorHeader, StartTask{}),
                "StartTask: empty plugin path");
  ExpectInvalid(EncodeControlMessage(kAgentHeader, TaskCheckpointReport{}),
                "TaskCheckpointReport: empty checkpoint id");
  ExpectInvalid(
      EncodeControlMessage(kAgentHeader, TaskCheckpointReport{1, 2, "", 50, 0, 0, {}, true}),
      "TaskCheckpointReport: empty checkpoint id");
  TaskExit below_whole_task;
  below_whole_task.rank = -2;
  ExpectInvalid(EncodeControlMessage(kAgentHeader, below_whole_task),
                "TaskExit: rank -2 is below -1");
}

TEST(ControlMessagesTest, NamesAndDescribesEveryMessage) {
  const std::vector<std::string> expected = {
      "AgentHello agent agent-7 on gpu-node-3: 2 slots, 2 tasks",
      "AgentHeartbeat agent agent-7: 8 busy, 2 running tasks",
      "StartTask task 7 trial 3 ranks 0-1",
      "KillTask task 7 grace 4294967295 s",
      "TaskStatus task 7 running",
      "TaskExit task 7 rank 1 signal 9, killed by the agent, stopped before, trial unfinished",
      "TaskMetricsReport task 7 trial 3 validation after 18446744073709551615 batches: 3 metrics",
      "TaskCheckpointReport task 7 trial 3 checkpoint trial-3-batch-100 after 100 batches",
      "TaskCheckpointReport task 7 trial 3 restored checkpoint trial-3-batch-50 after 50 batches",
      "TaskCheckpointReport task 7 trial 3 restored its start after 0 batches",
      "LogBatch task 7: 4 lines",
      "TaskListRequest",
      "TaskList: 2 tasks",
      "Ack",
      "ErrorReply slot unavailable: slot 3 is busy",
      "TaskProgress task 7 trial 3 at 18446744073709551615 of 18446744073709551615 batches",
  };
  const std::vector<ControlMessage> messages = EveryMessageFullySet();
  ASSERT_EQ(messages.size(), expected.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_EQ(DescribeControlMessage(messages[i]), expected[i]);
    EXPECT_THAT(expected[i], testing::StartsWith(std::string(ControlMessageName(messages[i]))));
  }
  StartTask spread;
  for (uint32_t rank : {6u, 0u, 7u, 1u, 4u}) spread.ranks.push_back({rank, 0, 0});
  EXPECT_EQ(DescribeControlMessage(spread), "StartTask task 0 trial 0 ranks 0-1,4,6-7");
  StartTask single;
  single.task_id = 2;
  single.ranks = {{5, 0, 0}};
  EXPECT_EQ(DescribeControlMessage(single), "StartTask task 2 trial 0 rank 5");
  TaskExit whole;
  whole.task_id = 4;
  whole.exit_code = 1;
  EXPECT_EQ(DescribeControlMessage(whole), "TaskExit task 4 as a whole exit code 1");
  EXPECT_EQ(TaskStateName(TaskState::kExited), "exited");
}

// ---- bytes no honest peer would send

// Whatever decodes must encode and decode again to the same value.
void ExpectErrorOrWellFormed(const std::string& bytes) {
  absl::StatusOr<DecodedControl> decoded = DecodeControlMessage(bytes);
  if (!decoded.ok()) {
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
    return;
  }
  absl::StatusOr<DecodedControl> again =
      DecodeControlMessage(EncodeControlMessage(decoded->header, decoded->message));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->header, decoded->header);
  EXPECT_EQ(DescribeControlMessage(again->message), DescribeControlMessage(decoded->message));
}

TEST(ControlMessagesHostileBytesTest, RandomBuffersAreRefused) {
  ExpectRandomBuffersRefused(DecodeControlMessage);
  EXPECT_FALSE(DecodeControlMessage("CCTL").ok());
}

TEST(ControlMessagesHostileBytesTest, RandomBuffersWithTheIdentifierNeverCrash) {
  ForEachRandomBodyBehindTheIdentifier(EveryMessageEncoded()[0], 300, ExpectErrorOrWellFormed);
}

TEST(ControlMessagesHostileBytesTest, EveryTruncationIsRefusedOrExact) {
  for (const std::string& valid : EveryMessageEncoded()) {
    const absl::StatusOr<DecodedControl> whole = DecodeControlMessage(valid);
    ASSERT_TRUE(whole.ok()) << whole.status();
    ExpectEveryTruncationRefusedOrExact(valid, DecodeControlMessage);
  }
}

TEST(ControlMessagesHostileBytesTest, EveryFlippedBitAndSmashedByteIsHandled) {
  size_t refused = 0, accepted = 0;
  for (const std::string& valid : EveryMessageEncoded()) {
    ForEachFlippedBitAndSmashedByte(valid, [&](const std::string& bytes) {
      (DecodeControlMessage(bytes).ok() ? accepted : refused) += 1;
      ExpectErrorOrWellFormed(bytes);
    });
  }
  // Both outcomes happen: flips in values still decode, flips in offsets and the header do not.
  EXPECT_GT(refused, 1000u);
  EXPECT_GT(accepted, 1000u);
}

}  // namespace
}  // namespace cohort
