// WaitReadable over a real pair of inproc sockets: it returns at the deadline when nothing comes,
// at once when a message waits, and at once for a deadline already past.
#include "runtime/control/socket_io.h"

#include <chrono>
#include <zmq.hpp>

#include "gtest/gtest.h"

namespace cohort {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

class SocketIoTest : public ::testing::Test {
 protected:
  SocketIoTest() : in_(context_, zmq::socket_type::pair), out_(context_, zmq::socket_type::pair) {
    in_.bind("inproc://socket-io-test");
    out_.connect("inproc://socket-io-test");
  }

  zmq::context_t context_;
  zmq::socket_t in_;
  zmq::socket_t out_;
};

TEST_F(SocketIoTest, WaitReadableReturnsAtTheDeadlineWhenNothingComes) {
  const auto start = steady_clock::now();
  EXPECT_TRUE(WaitReadable(in_, start + milliseconds(50), "waiting").ok());
  EXPECT_GE(steady_clock::now() - start, milliseconds(40));  // a coarse clock may round down
  absl::StatusOr<std::vector<zmq::message_t>> frames = ReceiveWaiting(in_);
  ASSERT_TRUE(frames.ok());
  EXPECT_TRUE(frames->empty());
}

TEST_F(SocketIoTest, WaitReadableReturnsOnceAMessageWaits) {
  out_.send(zmq::str_buffer("hello"), zmq::send_flags::none);
  EXPECT_TRUE(WaitReadable(in_, steady_clock::now() + std::chrono::seconds(30), "waiting").ok());
  absl::StatusOr<std::vector<zmq::message_t>> frames = ReceiveWaiting(in_);
  ASSERT_TRUE(frames.ok());
  ASSERT_EQ(frames->size(), 1u);
  EXPECT_EQ(frames->front().to_string(), "hello");
}

TEST_F(SocketIoTest, APastDeadlineDoesNotWait) {
  const auto start = steady_clock::now();
  EXPECT_TRUE(WaitReadable(in_, start - milliseconds(1), "waiting").ok());
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(1));
}

}  // namespace
}  // namespace cohort
