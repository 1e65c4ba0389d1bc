// ConnectionWatch over real TCP sockets on loopback: a connection refused is told before any
// handshake, a handshake is seen, a peer that closes is lost and seen again when it is back, and
// a peer that stops answering ZeroMQ's heartbeats (SIGSTOP) is lost too.
#include "runtime/control/connection_watch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "gtest/gtest.h"

namespace cohort {
namespace {

using std::chrono::milliseconds;

// Calls watch.Update() until `done` holds or 20 s pass; whether it held.
bool WaitUntil(ConnectionWatch& watch, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    watch.Update();
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return false;
}

// A free TCP port on loopback, as the endpoint ZeroMQ picked for a socket bound to it.
std::string BindAnywhere(zmq::socket_t& socket) {
  socket.bind("tcp://127.0.0.1:*");
  return socket.get(zmq::sockopt::last_endpoint);
}

TEST(ConnectionWatch, TellsThatNothingListens) {
  std::string endpoint;
  {
    zmq::context_t probe_context;
    zmq::socket_t probe(probe_context, zmq::socket_type::router);
    endpoint = BindAnywhere(probe);
  }  // closed for good once its context has ended (a socket alone closes in the background)
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::reconnect_ivl, 20);
  ConnectionWatch watch(context, dealer.handle());
  dealer.connect(endpoint);
  std::optional<std::string> failure;
  ASSERT_TRUE(WaitUntil(watch, [&] { return (failure = watch.Failure()).has_value(); }));
  EXPECT_EQ(*failure, "nothing listens there (the connection was refused)");
  EXPECT_FALSE(watch.connected());
  EXPECT_FALSE(watch.ever_connected());
}

TEST(ConnectionWatch, SeesAPeerCloseAndComeBack) {
  zmq::context_t context;
  auto router = std::make_unique<zmq::socket_t>(context, zmq::socket_type::router);
  router->set(zmq::sockopt::linger, 0);
  const std::string endpoint = BindAnywhere(*router);
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::reconnect_ivl, 20);
  ConnectionWatch watch(context, dealer.handle());
  dealer.connect(endpoint);
  ASSERT_TRUE(WaitUntil(watch, [&] { return watch.connected(); }));
  EXPECT_EQ(watch.losses(), 0u);

  router.reset();  // the peer goes away
  ASSERT_TRUE(WaitUntil(watch, [&] { return !watch.connected(); }));
  EXPECT_EQ(watch.losses(), 1u);
  EXPECT_TRUE(watch.ever_connected());
  EXPECT_EQ(watch.Failure(), std::nullopt) << "a failure is only told before any handshake";

  router = std::make_unique<zmq::socket_t>(context, zmq::socket_type::router);
  router->set(zmq::sockopt::linger, 0);
  router->bind(endpoint);  // back at the same endpoint: ZeroMQ reconnects by itself
  ASSERT_TRUE(WaitUntil(watch, [&] { return watch.connected(); }));
  EXPECT_EQ(watch.losses(), 1u);
}

TEST(ConnectionWatch, SeesAStoppedPeerLostThroughHeartbeats) {
  // The peer lives in a child process, so that SIGSTOP silences its ZeroMQ I/O thread too. It is
  // forked before this process makes a context of its own.
  int port_pipe[2];
  ASSERT_EQ(pipe(port_pipe), 0);
  const pid_t peer = fork();
  ASSERT_GE(peer, 0);
  if (peer == 0) {
    zmq::context_t context;
    zmq::socket_t router(context, zmq::socket_type::router);
    const std::string endpoint = BindAnywhere(router);
    const ssize_t written = write(port_pipe[1], endpoint.data(), endpoint.size());
    if (written != static_cast<ssize_t>(endpoint.size())) _exit(1);
    close(port_pipe[1]);
    while (true) pause();  // ZeroMQ's I/O thread answers the pings until stopped
  }
  close(port_pipe[1]);
  char buffer[128] = {};
  const ssize_t length = read(port_pipe[0], buffer, sizeof buffer - 1);
  close(port_pipe[0]);
  ASSERT_GT(length, 0);
  const std::string endpoint(buffer, static_cast<size_t>(length));

  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::heartbeat_ivl, 100);
  dealer.set(zmq::sockopt::heartbeat_timeout, 500);
  ConnectionWatch watch(context, dealer.handle());
  dealer.connect(endpoint);
  const bool connected = WaitUntil(watch, [&] { return watch.connected(); });
  // Answered pings keep it up.
  std::this_thread::sleep_for(milliseconds(800));
  watch.Update();
  const bool kept = watch.connected();
  kill(peer, SIGSTOP);
  const bool lost = WaitUntil(watch, [&] { return !watch.connected(); });
  kill(peer, SIGKILL);
  waitpid(peer, nullptr, 0);
  EXPECT_TRUE(connected);
  EXPECT_TRUE(kept) << "a peer answering the pings was taken as lost";
  EXPECT_TRUE(lost) << "a stopped peer was not taken as lost";
  EXPECT_EQ(watch.losses(), 1u);
}

}  // namespace
}  // namespace cohort
