// Decoding bytes no honest peer would send: random buffers, random buffers dressed as envelopes,
// truncated and bit-flipped valid messages. Every call must return an error or a well-formed
// value; the asan setup turns any out-of-bounds read into a failure.
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/control/worker_messages.h"
#include "test/common/hostile_bytes.h"

namespace cohort {
namespace {

std::vector<std::string> ValidMessages() {
  MetricsReport metrics{1, ReportKind::kValidation, 2, 3, 4.5, {}};
  for (int i = 0; i < 20; ++i) metrics.metrics.push_back({"metric" + std::to_string(i), i * 1.5});
  return {
      EncodeWorkerMessage(WorkerHello{1, 2, 3, 4, 5}),
      EncodeWorkerMessage(metrics),
      EncodeWorkerMessage(ProgressReport{1, 2, 3, 4, 0.25, 100.0}),
      EncodeWorkerMessage(CheckpointReport{1, "ckpt-0001", 2, 3, 4096}),
      EncodeWorkerMessage(TrialFinished{1, TrialExit::kFailed, 9, "out of memory"}),
      EncodeWorkerMessage(RendezvousSet{"nccl/unique-id", std::string("\0\x01\xfe\xff id", 7)}),
      EncodeWorkerMessage(RendezvousGet{"gloo/rank/2", 42}),
      EncodeWorkerMessage(Heartbeat{1, 3, 1.7e9, 250}),
  };
}

std::vector<std::string> ValidCommands() {
  return {
      EncodeWorkerCommand(StopCommand{"searcher closed the trial"}),
      EncodeWorkerCommand(RendezvousValue{42, "gloo/rank/2", true, std::string("\0addr\0", 6)}),
      EncodeWorkerCommand(RendezvousValue{43, "gloo/rank/5", false, ""}),
  };
}

std::vector<std::string> ValidBuffers() {
  std::vector<std::string> all = ValidMessages();
  for (std::string& command : ValidCommands()) all.push_back(std::move(command));
  return all;
}

// Decodes `bytes` both ways; whatever decodes must survive another round trip unchanged.
void DecodeBothWays(const std::string& bytes) {
  absl::StatusOr<WorkerMessage> message = DecodeWorkerMessage(bytes);
  if (message.ok()) {
    absl::StatusOr<WorkerMessage> again = DecodeWorkerMessage(EncodeWorkerMessage(*message));
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(WorkerMessageName(*again), WorkerMessageName(*message));
  } else {
    EXPECT_EQ(message.status().code(), absl::StatusCode::kInvalidArgument);
  }
  absl::StatusOr<WorkerCommand> command = DecodeWorkerCommand(bytes);
  if (command.ok()) {
    absl::StatusOr<WorkerCommand> again = DecodeWorkerCommand(EncodeWorkerCommand(*command));
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *command);
  } else {
    EXPECT_EQ(command.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(DecodeHostileBytesTest, RandomBuffersAreRejected) {
  ExpectRandomBuffersRefused(DecodeWorkerMessage);
  ExpectRandomBuffersRefused(DecodeWorkerCommand);
}

TEST(DecodeHostileBytesTest, RandomBuffersWithTheIdentifierNeverCrash) {
  ForEachRandomBodyBehindTheIdentifier(ValidBuffers()[0], 200, DecodeBothWays);
}

TEST(DecodeHostileBytesTest, EveryTruncationIsRejectedOrExact) {
  for (const std::string& valid : ValidBuffers()) {
    ASSERT_NE(DecodeWorkerMessage(valid).ok(), DecodeWorkerCommand(valid).ok());
    ExpectEveryTruncationRefusedOrExact(valid, DecodeWorkerMessage);
    ExpectEveryTruncationRefusedOrExact(valid, DecodeWorkerCommand);
  }
}

TEST(DecodeHostileBytesTest, FlippedBitsNeverCrash) {
  std::mt19937_64 rng(99);
  const std::vector<std::string> valid = ValidBuffers();
  for (int i = 0; i < 6000; ++i) {
    std::string bytes = valid[rng() % valid.size()];
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      bytes[rng() % bytes.size()] ^= static_cast<char>(1 << (rng() % 8));
    }
    DecodeBothWays(bytes);
  }
}

TEST(DecodeHostileBytesTest, ACommandIsNotAMessageNorTheReverse) {
  for (const std::string& message : ValidMessages()) {
    EXPECT_TRUE(DecodeWorkerMessage(message).ok());
    EXPECT_EQ(DecodeWorkerCommand(message).status().code(), absl::StatusCode::kInvalidArgument);
  }
  for (const std::string& command : ValidCommands()) {
    EXPECT_EQ(DecodeWorkerMessage(command).status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(DecodeWorkerCommand(command).ok());
  }
}

}  // namespace
}  // namespace cohort
