// WorkerLink <-> WorkerHub in one process, over ipc in a temporary folder and tcp on loopback:
// ordering, peers and commands, hostile peers, delivery at close, and the failure paths; a hub
// bound in a given context and a link, each prepared by a setup before it binds or connects.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/control/worker_hub.h"
#include "runtime/control/worker_link.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using namespace std::chrono_literals;

constexpr auto kPatience = 10s;

// A fresh folder for ipc socket files, removed with everything in it.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "cohort-control-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Waits until `count` messages have arrived (or kPatience has passed) and returns them all.
std::vector<WorkerHub::Received> Collect(WorkerHub& hub, size_t count) {
  std::vector<WorkerHub::Received> all;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (all.size() < count && std::chrono::steady_clock::now() < deadline) {
    for (WorkerHub::Received& r : hub.Wait(100ms)) all.push_back(std::move(r));
  }
  return all;
}

std::optional<WorkerCommand> AwaitCommand(WorkerLink& link) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::optional<WorkerCommand> command = link.PollCommand()) return command;
    std::this_thread::sleep_for(1ms);
  }
  return std::nullopt;
}

class WorkerChannelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(folder_.path().empty());
    const std::string endpoint =
        GetParam() == "ipc" ? "ipc://" + folder_.path() + "/hub" : "tcp://127.0.0.1:*";
    auto hub =
        WorkerHub::Bind(endpoint, [this](absl::string_view why) { dropped_.emplace_back(why); });
    ASSERT_TRUE(hub.ok()) << hub.status();
    hub_ = *std::move(hub);
  }

  std::unique_ptr<WorkerLink> Connect(WorkerLinkOptions options = {}) {
    auto link = WorkerLink::Connect(hub_->endpoint(), options);
    EXPECT_TRUE(link.ok()) << link.status();
    return link.ok() ? *std::move(link) : nullptr;
  }

  TempFolder folder_;
  std::vector<std::string> dropped_;
  std::unique_ptr<WorkerHub> hub_;
};

TEST_P(WorkerChannelTest, EndpointIsResolved) {
  EXPECT_THAT(hub_->endpoint(), HasSubstr(GetParam() + "://"));
  EXPECT_THAT(hub_->endpoint(), ::testing::Not(HasSubstr("*")));
}

TEST_P(WorkerChannelTest, MessagesArriveInOrderFromOnePeer) {
  std::unique_ptr<WorkerLink> link = Connect();
  ASSERT_NE(link, nullptr);
  const WorkerHello hello{42, 1234, 0, 0, 300};
  ASSERT_TRUE(link->Send(hello).ok());
  for (uint64_t batch = 1; batch <= 300; ++batch) {
    ASSERT_TRUE(link->Send(ProgressReport{42, batch, 300, batch * 32, 1.0 / batch, 99.5}).ok());
  }
  const MetricsReport metrics{42, ReportKind::kValidation, 300, 9600, 1.7e9, {{"accuracy", 0.9}}};
  ASSERT_TRUE(link->Send(metrics).ok());
  ASSERT_TRUE(link->Send(CheckpointReport{42, "ckpt-300", 300, 9600, 1 << 20}).ok());
  ASSERT_TRUE(link->Send(TrialFinished{42, TrialExit::kCompleted, 300, ""}).ok());

  std::vector<WorkerHub::Received> received = Collect(*hub_, 304);
  ASSERT_THAT(received, SizeIs(304));
  EXPECT_EQ(received[0].message, WorkerMessage(hello));
  for (uint64_t batch = 1; batch <= 300; ++batch) {
    ASSERT_TRUE(std::holds_alternative<ProgressReport>(received[batch].message));
    EXPECT_EQ(std::get<ProgressReport>(received[batch].message).batches, batch);
  }
  EXPECT_EQ(received[301].message, WorkerMessage(metrics));
  EXPECT_TRUE(std::holds_alternative<CheckpointReport>(received[302].message));
  EXPECT_TRUE(std::holds_alternative<TrialFinished>(received[303].message));
  for (const WorkerHub::Received& r : received) EXPECT_EQ(r.peer, received[0].peer);
  EXPECT_FALSE(received[0].peer.empty());
  EXPECT_THAT(dropped_, SizeIs(0));
}

TEST_P(WorkerChannelTest, HubStopsTheWorkerThatSaidHello) {
  std::unique_ptr<WorkerLink> first = Connect();
  std::unique_ptr<WorkerLink> second = Connect();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(first->PollCommand().has_value());
  ASSERT_TRUE(first->Send(WorkerHello{1, 100, 0, 0, 10}).ok());
  ASSERT_TRUE(second->Send(WorkerHello{2, 200, 0, 0, 10}).ok());

  std::vector<WorkerHub::Received> hellos = Collect(*hub_, 2);
  ASSERT_THAT(hellos, SizeIs(2));
  EXPECT_NE(hellos[0].peer, hellos[1].peer);
  std::string second_peer;
  for (const WorkerHub::Received& r : hellos) {
    if (std::get<WorkerHello>(r.message).trial_id == 2) second_peer = r.peer;
  }
  ASSERT_FALSE(second_peer.empty());

  ASSERT_TRUE(hub_->Send(second_peer, StopCommand{"searcher closed trial 2"}).ok());
  std::optional<WorkerCommand> command = AwaitCommand(*second);
  ASSERT_TRUE(command.has_value());
  EXPECT_EQ(std::get<StopCommand>(*command).reason, "searcher closed trial 2");
  EXPECT_FALSE(first->PollCommand().has_value());
}

TEST_P(WorkerChannelTest, GarbageIsDroppedAndTheHubKeepsWorking) {
  zmq::context_t context;
  zmq::socket_t rogue(context, zmq::socket_type::dealer);
  rogue.set(zmq::sockopt::linger, 0);
  rogue.connect(hub_->endpoint());
  std::mt19937_64 rng(5);
  std::string noise(64, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  const std::string command = EncodeWorkerCommand(StopCommand{"not yours to send"});
  const std::string hello = EncodeWorkerMessage(WorkerHello{7, 70, 0, 0, 1});
  ASSERT_TRUE(rogue.send(zmq::buffer(noise), zmq::send_flags::none));
  ASSERT_TRUE(rogue.send(zmq::str_buffer(""), zmq::send_flags::none));
  ASSERT_TRUE(rogue.send(zmq::buffer(hello), zmq::send_flags::sndmore));
  ASSERT_TRUE(rogue.send(zmq::buffer(hello), zmq::send_flags::none));
  ASSERT_TRUE(rogue.send(zmq::buffer(command), zmq::send_flags::none));
  ASSERT_TRUE(rogue.send(zmq::buffer(hello.substr(0, hello.size() / 2)), zmq::send_flags::none));
  // A valid message behind the garbage: once it is out, all of the garbage has been looked at.
  ASSERT_TRUE(rogue.send(zmq::buffer(hello), zmq::send_flags::none));

  std::vector<WorkerHub::Received> received = Collect(*hub_, 1);
  ASSERT_THAT(received, SizeIs(1));
  EXPECT_EQ(received[0].message, WorkerMessage(WorkerHello{7, 70, 0, 0, 1}));
  ASSERT_THAT(dropped_, SizeIs(5));
  EXPECT_THAT(dropped_[0], HasSubstr("verification"));
  EXPECT_THAT(dropped_[2], HasSubstr("2 frames"));
  EXPECT_THAT(dropped_[3], HasSubstr("not a worker message"));

  std::unique_ptr<WorkerLink> link = Connect();
  ASSERT_NE(link, nullptr);
  ASSERT_TRUE(link->Send(ProgressReport{8, 1, 2, 3, 0.5, 1.0}).ok());
  received = Collect(*hub_, 1);
  ASSERT_THAT(received, SizeIs(1));
  EXPECT_TRUE(std::holds_alternative<ProgressReport>(received[0].message));
}

TEST_P(WorkerChannelTest, MessagesSentJustBeforeCloseArrive) {
  {
    std::unique_ptr<WorkerLink> link = Connect();
    ASSERT_NE(link, nullptr);
    for (uint64_t batch = 1; batch <= 500; ++batch) {
      ASSERT_TRUE(link->Send(ProgressReport{3, batch, 500, batch, 0.1, 1.0}).ok());
    }
    ASSERT_TRUE(link->Send(TrialFinished{3, TrialExit::kStopped, 500, "stopped"}).ok());
  }
  std::vector<WorkerHub::Received> received = Collect(*hub_, 501);
  ASSERT_THAT(received, SizeIs(501));
  EXPECT_EQ(received.back().message,
            WorkerMessage(TrialFinished{3, TrialExit::kStopped, 500, "stopped"}));
}

// As a worker ends: the process exits as soon as the link is gone, with nothing else to flush.
TEST_P(WorkerChannelTest, AWorkerThatExitsRightAfterClosingLosesNothing) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    {
      auto link = WorkerLink::Connect(hub_->endpoint());
      if (!link.ok()) _exit(2);
      for (uint64_t batch = 1; batch <= 200 && code == 0; ++batch) {
        if (!(*link)->Send(ProgressReport{4, batch, 200, batch, 0.1, 1.0}).ok()) code = 3;
      }
      if (!(*link)->Send(TrialFinished{4, TrialExit::kCompleted, 200, ""}).ok()) code = 3;
    }
    _exit(code);
  }
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFEXITED(wait_status));
  ASSERT_EQ(WEXITSTATUS(wait_status), 0);
  std::vector<WorkerHub::Received> received = Collect(*hub_, 201);
  ASSERT_THAT(received, SizeIs(201));
  EXPECT_TRUE(std::holds_alternative<TrialFinished>(received.back().message));
}

TEST_P(WorkerChannelTest, SendingToAnUnknownPeerIsNotFound) {
  absl::Status status = hub_->Send(std::string("\0\x80\x01", 3), StopCommand{});
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("008001"));
}

TEST_P(WorkerChannelTest, WaitTimesOutWhenNothingArrives) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(hub_->Wait(50ms), SizeIs(0));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 45ms);
  EXPECT_THAT(hub_->Drain(), SizeIs(0));
}

INSTANTIATE_TEST_SUITE_P(Transports, WorkerChannelTest, ::testing::Values("ipc", "tcp"),
                         [](const auto& info) { return info.param; });

TEST(WorkerLinkTest, ConnectsBeforeTheHubIsBound) {
  TempFolder folder;
  const std::string endpoint = "ipc://" + folder.path() + "/late-hub";
  auto link = WorkerLink::Connect(endpoint);
  ASSERT_TRUE(link.ok()) << link.status();
  ASSERT_TRUE((*link)->Send(WorkerHello{5, 50, 1, 0, 0}).ok());

  auto hub = WorkerHub::Bind(endpoint);
  ASSERT_TRUE(hub.ok()) << hub.status();
  std::vector<WorkerHub::Received> received = Collect(**hub, 1);
  ASSERT_THAT(received, SizeIs(1));
  EXPECT_EQ(received[0].message, WorkerMessage(WorkerHello{5, 50, 1, 0, 0}));
}

TEST(WorkerLinkTest, DropsMalformedCommandsAndReturnsTheValidOne) {
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:*");
  auto link = WorkerLink::Connect(router.get(zmq::sockopt::last_endpoint));
  ASSERT_TRUE(link.ok()) << link.status();
  std::vector<std::string> dropped;
  (*link)->SetDroppedHandler([&](absl::string_view why) { dropped.emplace_back(why); });
  ASSERT_TRUE((*link)->Send(WorkerHello{}).ok());

  zmq::message_t peer;
  ASSERT_TRUE(router.recv(peer));
  zmq::message_t payload;
  ASSERT_TRUE(router.recv(payload));
  const std::string hello = EncodeWorkerMessage(WorkerHello{});
  const std::string stop = EncodeWorkerCommand(StopCommand{"now"});
  auto send_to_link = [&](std::vector<std::string> frames) {
    router.send(zmq::buffer(peer.to_string()), zmq::send_flags::sndmore);
    for (size_t i = 0; i < frames.size(); ++i) {
      const bool last = i + 1 == frames.size();
      router.send(zmq::buffer(frames[i]), last ? zmq::send_flags::none : zmq::send_flags::sndmore);
    }
  };
  send_to_link({"garbage"});
  send_to_link({hello});
  send_to_link({stop, stop});
  send_to_link({stop});

  std::optional<WorkerCommand> command = AwaitCommand(**link);
  ASSERT_TRUE(command.has_value());
  EXPECT_EQ(std::get<StopCommand>(*command).reason, "now");
  ASSERT_THAT(dropped, SizeIs(3));
  EXPECT_THAT(dropped[0], HasSubstr("verification"));
  EXPECT_THAT(dropped[1], HasSubstr("not a supervisor command"));
  EXPECT_THAT(dropped[2], HasSubstr("2 frames"));
  EXPECT_FALSE((*link)->PollCommand().has_value());
}

TEST(WorkerLinkTest, SendFailsWhenNobodyReadsAndCloseIsBounded) {
  TempFolder folder;
  WorkerLinkOptions options;
  options.send_timeout = 20ms;
  options.close_timeout = 200ms;
  auto link = WorkerLink::Connect("ipc://" + folder.path() + "/nobody", options);
  ASSERT_TRUE(link.ok()) << link.status();
  absl::Status status;
  for (int i = 0; i < 100000 && status.ok(); ++i) status = (*link)->Send(ProgressReport{});
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("ProgressReport"));

  const auto start = std::chrono::steady_clock::now();
  link->reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(WorkerLinkTest, SetupPreparesTheSocketBeforeItConnects) {
  auto hub = WorkerHub::Bind("tcp://127.0.0.1:*");
  ASSERT_TRUE(hub.ok()) << hub.status();
  WorkerLinkOptions options;
  options.setup_socket = [](zmq::socket_t& socket) {
    // A routing id counts only when set before the connection is made.
    socket.set(zmq::sockopt::routing_id, "rank-3");
    return absl::OkStatus();
  };
  auto link = WorkerLink::Connect((*hub)->endpoint(), options);
  ASSERT_TRUE(link.ok()) << link.status();
  ASSERT_TRUE((*link)->Send(WorkerHello{5, 50, 3, 0, 0}).ok());
  std::vector<WorkerHub::Received> received = Collect(**hub, 1);
  ASSERT_THAT(received, SizeIs(1));
  EXPECT_EQ(received[0].peer, "rank-3");

  options.setup_socket = [](zmq::socket_t&) { return absl::FailedPreconditionError("no keys"); };
  EXPECT_EQ(WorkerLink::Connect((*hub)->endpoint(), options).status(),
            absl::FailedPreconditionError("no keys"));
}

TEST(WorkerLinkTest, RejectsMalformedEndpoints) {
  EXPECT_EQ(WorkerLink::Connect("nonsense://here").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WorkerLink::Connect("tcp://").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WorkerHubTest, BindsInAGivenContextPreparedBeforeItBinds) {
  zmq::context_t context;  // outlives the hubs
  bool bound_during_setup = true;
  auto hub = WorkerHub::Bind(context, "inproc://given-context-hub", [&](zmq::socket_t& socket) {
    bound_during_setup = !socket.get(zmq::sockopt::last_endpoint).empty();
    return absl::OkStatus();
  });
  ASSERT_TRUE(hub.ok()) << hub.status();
  EXPECT_FALSE(bound_during_setup);
  EXPECT_EQ((*hub)->endpoint(), "inproc://given-context-hub");

  // inproc reaches only sockets of the same context.
  zmq::socket_t peer(context, zmq::socket_type::dealer);
  peer.set(zmq::sockopt::linger, 0);
  peer.set(zmq::sockopt::rcvtimeo, 10000);
  peer.connect("inproc://given-context-hub");
  ASSERT_TRUE(peer.send(zmq::buffer(EncodeWorkerMessage(WorkerHello{6, 60, 0, 0, 0})),
                        zmq::send_flags::none));
  std::vector<WorkerHub::Received> received = Collect(**hub, 1);
  ASSERT_THAT(received, SizeIs(1));
  EXPECT_EQ(received[0].message, WorkerMessage(WorkerHello{6, 60, 0, 0, 0}));
  ASSERT_TRUE((*hub)->Send(received[0].peer, StopCommand{"done"}).ok());
  zmq::message_t reply;
  ASSERT_TRUE(peer.recv(reply));
  EXPECT_EQ(reply.to_string(), EncodeWorkerCommand(StopCommand{"done"}));

  auto refused = WorkerHub::Bind(context, "inproc://refused-hub", [](zmq::socket_t&) {
    return absl::PermissionDeniedError("not this one");
  });
  EXPECT_EQ(refused.status(), absl::PermissionDeniedError("not this one"));
  EXPECT_TRUE(WorkerHub::Bind(context, "inproc://refused-hub", {}).ok())
      << "a refused setup leaves the endpoint unbound";
}

TEST(WorkerHubTest, BindFailuresAreStatuses) {
  EXPECT_EQ(WorkerHub::Bind("nonsense://here").status().code(), absl::StatusCode::kInvalidArgument);
  auto missing_folder = WorkerHub::Bind("ipc:///nonexistent-cohort-folder/hub");
  EXPECT_EQ(missing_folder.status().code(), absl::StatusCode::kUnavailable);

  auto first = WorkerHub::Bind("tcp://127.0.0.1:*");
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = WorkerHub::Bind((*first)->endpoint());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr((*first)->endpoint()));
}

}  // namespace
}  // namespace cohort
