// The rendezvous store over the worker channel, in one process: RendezvousService behind a
// WorkerHub, and workers (threads, each with its own WorkerLink and ChannelRendezvousStore) that
// meet through it; also WorkerLink::WaitCommand, which the store's gets wait with.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/control/channel_rendezvous_store.h"
#include "runtime/control/rendezvous_service.h"
#include "runtime/control/worker_hub.h"
#include "runtime/control/worker_link.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using namespace std::chrono_literals;

constexpr auto kStorePatience = 10s;

template <typename Predicate>
bool Eventually(Predicate done) {
  const auto deadline = std::chrono::steady_clock::now() + kStorePatience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

std::unique_ptr<WorkerLink> Connect(const std::string& endpoint) {
  auto link = WorkerLink::Connect(endpoint);
  EXPECT_TRUE(link.ok()) << link.status();
  return link.ok() ? *std::move(link) : nullptr;
}

// A supervisor on its own thread: a hub whose rendezvous messages go to a RendezvousService and
// every other message to `on_other` (on that thread). It counts the gets it has answered.
class Supervisor {
 public:
  using OtherHandler = std::function<void(WorkerHub&, const WorkerHub::Received&)>;

  explicit Supervisor(OtherHandler on_other = {}) : on_other_(std::move(on_other)) {
    auto hub = WorkerHub::Bind("tcp://127.0.0.1:*", [this](absl::string_view why) {
      std::lock_guard<std::mutex> lock(mutex_);
      dropped_.emplace_back(why);
    });
    EXPECT_TRUE(hub.ok()) << hub.status();
    if (!hub.ok()) return;
    hub_ = *std::move(hub);
    endpoint_ = hub_->endpoint();
    thread_ = std::thread([this] { Serve(); });
  }

  ~Supervisor() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  const std::string& endpoint() const { return endpoint_; }
  int gets_answered() const { return gets_answered_; }
  std::vector<std::string> dropped() {
    std::lock_guard<std::mutex> lock(mutex_);
    return dropped_;
  }

 private:
  void Serve() {
    while (!stop_) {
      for (const WorkerHub::Received& r : hub_->Wait(5ms)) {
        if (service_.Handle(*hub_, r.peer, r.message)) {
          if (std::holds_alternative<RendezvousGet>(r.message)) ++gets_answered_;
        } else if (on_other_) {
          on_other_(*hub_, r);
        }
      }
    }
  }

  OtherHandler on_other_;
  std::unique_ptr<WorkerHub> hub_;
  std::string endpoint_;
  RendezvousService service_;
  std::atomic<bool> stop_{false};
  std::atomic<int> gets_answered_{0};
  std::mutex mutex_;
  std::vector<std::string> dropped_;
  std::thread thread_;
};

TEST(RendezvousServiceTest, StoresSetsAnswersGetsAndForgetsOnClear) {
  auto hub = WorkerHub::Bind("tcp://127.0.0.1:*");
  ASSERT_TRUE(hub.ok()) << hub.status();
  std::unique_ptr<WorkerLink> link = Connect((*hub)->endpoint());
  ASSERT_NE(link, nullptr);
  RendezvousService service;
  // Passes each message that arrives to the service; true if all of them were rendezvous ones.
  auto serve = [&](size_t count) {
    bool all_handled = true;
    size_t seen = 0;
    const auto deadline = std::chrono::steady_clock::now() + kStorePatience;
    while (seen < count && std::chrono::steady_clock::now() < deadline) {
      for (const WorkerHub::Received& r : (*hub)->Wait(100ms)) {
        all_handled = service.Handle(**hub, r.peer, r.message) && all_handled;
        ++seen;
      }
    }
    EXPECT_EQ(seen, count);
    return all_handled;
  };
  const std::string id("\0nccl\xff", 6);

  ASSERT_TRUE(link->Send(RendezvousGet{"nccl/id", 1}).ok());
  ASSERT_TRUE(link->Send(RendezvousSet{"nccl/id", "old"}).ok());
  ASSERT_TRUE(link->Send(RendezvousSet{"nccl/id", id}).ok());
  ASSERT_TRUE(link->Send(RendezvousGet{"nccl/id", 2}).ok());
  EXPECT_TRUE(serve(4));
  EXPECT_EQ(service.size(), 1u);
  std::optional<WorkerCommand> missing = link->WaitCommand(kStorePatience);
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(*missing, WorkerCommand(RendezvousValue{1, "nccl/id", false, ""}));
  std::optional<WorkerCommand> found = link->WaitCommand(kStorePatience);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, WorkerCommand(RendezvousValue{2, "nccl/id", true, id}));

  service.Clear();
  EXPECT_EQ(service.size(), 0u);
  ASSERT_TRUE(link->Send(RendezvousGet{"nccl/id", 3}).ok());
  EXPECT_TRUE(serve(1));
  std::optional<WorkerCommand> forgotten = link->WaitCommand(kStorePatience);
  ASSERT_TRUE(forgotten.has_value());
  EXPECT_EQ(*forgotten, WorkerCommand(RendezvousValue{3, "nccl/id", false, ""}));

  // Other messages are left to the caller and answered by nobody.
  ASSERT_TRUE(link->Send(Heartbeat{7, 0, 1.7e9}).ok());
  ASSERT_TRUE(link->Send(WorkerHello{7, 1, 0, 0, 10}).ok());
  EXPECT_FALSE(serve(2));
  EXPECT_EQ(service.size(), 0u);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(link->WaitCommand(50ms).has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 45ms);
}

TEST(RendezvousServiceTest, AnAnswerToAWorkerThatLeftIsDropped) {
  auto hub = WorkerHub::Bind("tcp://127.0.0.1:*");
  ASSERT_TRUE(hub.ok()) << hub.status();
  RendezvousService service;
  EXPECT_TRUE(service.Handle(**hub, "no such peer", RendezvousGet{"k", 1}));
  EXPECT_TRUE(service.Handle(**hub, "no such peer", RendezvousSet{"k", "v"}));
  EXPECT_EQ(service.size(), 1u);
}

TEST(RendezvousServiceTest, ClearPrefixForgetsOneGroupsKeysAndKeepsTheOthers) {
  auto hub = WorkerHub::Bind("tcp://127.0.0.1:*");
  ASSERT_TRUE(hub.ok()) << hub.status();
  std::unique_ptr<WorkerLink> link = Connect((*hub)->endpoint());
  ASSERT_NE(link, nullptr);
  RendezvousService service;
  for (const char* key : {"task-1/attempt-0/rank/0", "task-1/attempt-0/rank/1", "task-1",
                          "task-10/attempt-0/rank/0", "task-2/attempt-0/rank/0"}) {
    ASSERT_TRUE(service.Handle(**hub, "a worker", RendezvousSet{key, "address"}));
  }
  EXPECT_EQ(service.ClearPrefix("task-1/"), 2u);
  EXPECT_EQ(service.size(), 3u);
  EXPECT_EQ(service.ClearPrefix("task-9/"), 0u);
  EXPECT_EQ(service.size(), 3u);

  // What a worker asking now is told.
  auto found = [&](const std::string& key, uint64_t request_id) {
    EXPECT_TRUE(link->Send(RendezvousGet{key, request_id}).ok());
    bool handled = false;
    const auto deadline = std::chrono::steady_clock::now() + kStorePatience;
    while (!handled && std::chrono::steady_clock::now() < deadline) {
      for (const WorkerHub::Received& r : (*hub)->Wait(100ms)) {
        handled = service.Handle(**hub, r.peer, r.message) || handled;
      }
    }
    std::optional<WorkerCommand> answer = link->WaitCommand(kStorePatience);
    EXPECT_TRUE(answer.has_value()) << key;
    const auto* value = answer ? std::get_if<RendezvousValue>(&*answer) : nullptr;
    return value != nullptr && value->request_id == request_id && value->found;
  };
  EXPECT_FALSE(found("task-1/attempt-0/rank/0", 1));
  EXPECT_TRUE(found("task-1", 2)) << "a key that only starts like the prefix's task id stays";
  EXPECT_TRUE(found("task-10/attempt-0/rank/0", 3)) << "task 10 is not task 1";
  EXPECT_TRUE(found("task-2/attempt-0/rank/0", 4));

  EXPECT_EQ(service.ClearPrefix(""), 3u);
  EXPECT_EQ(service.size(), 0u);
}

TEST(ChannelRendezvousStoreTest, ThreeWorkersMeet) {
  Supervisor supervisor;
  ASSERT_FALSE(supervisor.endpoint().empty());
  constexpr int kWorkers = 3;
  auto address = [](int rank) {
    return "10.0.0." + std::to_string(rank) + std::string(":\0\xff", 3);
  };
  std::vector<std::vector<absl::StatusOr<std::string>>> seen(kWorkers);
  std::vector<std::thread> workers;
  for (int rank = 0; rank < kWorkers; ++rank) {
    workers.emplace_back([&, rank] {
      std::unique_ptr<WorkerLink> link = Connect(supervisor.endpoint());
      if (link == nullptr) return;
      ChannelRendezvousStore store(*link);
      // The last rank arrives late: the others' gets for its key wait for it.
      if (rank == kWorkers - 1) std::this_thread::sleep_for(100ms);
      EXPECT_TRUE(store.Set("rank/" + std::to_string(rank), address(rank)).ok());
      for (int other = 0; other < kWorkers; ++other) {
        seen[rank].push_back(store.Get("rank/" + std::to_string(other), kStorePatience));
      }
      EXPECT_THAT(store.TakePendingCommands(), SizeIs(0));
    });
  }
  for (std::thread& worker : workers) worker.join();
  for (int rank = 0; rank < kWorkers; ++rank) {
    ASSERT_THAT(seen[rank], SizeIs(kWorkers));
    for (int other = 0; other < kWorkers; ++other) {
      ASSERT_TRUE(seen[rank][other].ok()) << seen[rank][other].status();
      EXPECT_EQ(*seen[rank][other], address(other));
    }
  }
  EXPECT_THAT(supervisor.dropped(), SizeIs(0));
}

TEST(ChannelRendezvousStoreTest, AGetIssuedBeforeTheSetWaitsForIt) {
  Supervisor supervisor;
  ASSERT_FALSE(supervisor.endpoint().empty());
  absl::StatusOr<std::string> got = absl::UnknownError("not run");
  std::thread waiter([&] {
    std::unique_ptr<WorkerLink> link = Connect(supervisor.endpoint());
    if (link == nullptr) return;
    ChannelRendezvousStore store(*link);
    got = store.Get("gloo/rank/1", kStorePatience);
  });
  // Two answered gets: the first found nothing and the waiter asked again.
  ASSERT_TRUE(Eventually([&] { return supervisor.gets_answered() >= 2; }));
  std::unique_ptr<WorkerLink> link = Connect(supervisor.endpoint());
  ASSERT_NE(link, nullptr);
  ChannelRendezvousStore store(*link);
  ASSERT_TRUE(store.Set("gloo/rank/1", "127.0.0.1:4242").ok());
  waiter.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "127.0.0.1:4242");
}

TEST(ChannelRendezvousStoreTest, AGetForAKeyNobodySetsTimesOutNamingIt) {
  Supervisor supervisor;
  ASSERT_FALSE(supervisor.endpoint().empty());
  std::unique_ptr<WorkerLink> link = Connect(supervisor.endpoint());
  ASSERT_NE(link, nullptr);
  ChannelRendezvousStore store(*link);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> got = store.Get("nccl/unique-id", 150ms);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(got.status().message(), HasSubstr("'nccl/unique-id'"));
  EXPECT_GE(elapsed, 150ms);
  EXPECT_LT(elapsed, 2s);
  // It kept asking, with a backoff: more than once, far fewer than once per millisecond.
  EXPECT_GE(supervisor.gets_answered(), 3);
  EXPECT_LT(supervisor.gets_answered(), 100);
}

TEST(ChannelRendezvousStoreTest, AStopCommandThatArrivesDuringAGetIsKept) {
  // The supervisor stops a worker as soon as it says hello: the stop reaches the worker while it
  // waits in Get, before any answer.
  Supervisor supervisor([](WorkerHub& hub, const WorkerHub::Received& r) {
    if (std::holds_alternative<WorkerHello>(r.message)) {
      EXPECT_TRUE(hub.Send(r.peer, StopCommand{"searcher closed the trial"}).ok());
    }
  });
  ASSERT_FALSE(supervisor.endpoint().empty());
  absl::StatusOr<std::string> got = absl::UnknownError("not run");
  std::vector<WorkerCommand> pending;
  std::vector<WorkerCommand> pending_again;
  std::thread worker([&] {
    std::unique_ptr<WorkerLink> link = Connect(supervisor.endpoint());
    if (link == nullptr) return;
    ChannelRendezvousStore store(*link);
    EXPECT_TRUE(link->Send(WorkerHello{1, 100, 0, 0, 10}).ok());
    got = store.Get("layout/fingerprint", kStorePatience);
    pending = store.TakePendingCommands();
    pending_again = store.TakePendingCommands();
    EXPECT_FALSE(link->PollCommand().has_value());
  });
  ASSERT_TRUE(Eventually([&] { return supervisor.gets_answered() >= 2; }));
  std::unique_ptr<WorkerLink> link = Connect(supervisor.endpoint());
  ASSERT_NE(link, nullptr);
  ChannelRendezvousStore store(*link);
  ASSERT_TRUE(store.Set("layout/fingerprint", "f00d").ok());
  worker.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "f00d");
  EXPECT_THAT(pending, ElementsAre(WorkerCommand(StopCommand{"searcher closed the trial"})));
  EXPECT_THAT(pending_again, SizeIs(0));
}

TEST(ChannelRendezvousStoreTest, ALaterSetReplacesTheValue) {
  Supervisor supervisor;
  ASSERT_FALSE(supervisor.endpoint().empty());
  std::unique_ptr<WorkerLink> link = Connect(supervisor.endpoint());
  ASSERT_NE(link, nullptr);
  ChannelRendezvousStore store(*link);
  ASSERT_TRUE(store.Set("epoch", "1").ok());
  ASSERT_TRUE(store.Set("epoch", "2").ok());
  absl::StatusOr<std::string> got = store.Get("epoch", kStorePatience);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "2");
}

TEST(ChannelRendezvousStoreTest, ValuesUpToTheLimitTravelAndLargerOnesAreRefused) {
  Supervisor supervisor;
  ASSERT_FALSE(supervisor.endpoint().empty());
  std::unique_ptr<WorkerLink> link = Connect(supervisor.endpoint());
  ASSERT_NE(link, nullptr);
  ChannelRendezvousStore store(*link);
  std::string largest(kMaxRendezvousValueBytes, '\0');
  for (size_t i = 0; i < largest.size(); ++i) largest[i] = static_cast<char>(i * 31);
  ASSERT_TRUE(store.Set("big", largest).ok());
  absl::Status refused = store.Set("bigger", largest + "!");
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("'bigger'"));
  absl::StatusOr<std::string> got = store.Get("big", kStorePatience);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, largest);
  EXPECT_EQ(store.Get("bigger", 20ms).status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(ChannelRendezvousStoreTest, MalformedBytesToTheHubAreDropped) {
  Supervisor supervisor;
  ASSERT_FALSE(supervisor.endpoint().empty());
  zmq::context_t context;
  zmq::socket_t rogue(context, zmq::socket_type::dealer);
  rogue.set(zmq::sockopt::linger, 0);
  rogue.connect(supervisor.endpoint());
  const std::string set = EncodeWorkerMessage(RendezvousSet{"rogue", "accepted"});
  const std::string answer = EncodeWorkerCommand(RendezvousValue{1, "rogue", true, "forged"});
  const std::string oversized =
      EncodeWorkerMessage(RendezvousSet{"rogue", std::string(kMaxRendezvousValueBytes + 1, 'x')});
  ASSERT_TRUE(rogue.send(zmq::str_buffer("\x13\x37 not a flatbuffer"), zmq::send_flags::none));
  ASSERT_TRUE(rogue.send(zmq::buffer(answer), zmq::send_flags::none));
  ASSERT_TRUE(rogue.send(zmq::buffer(set.substr(0, set.size() - 3)), zmq::send_flags::none));
  ASSERT_TRUE(rogue.send(zmq::buffer(oversized), zmq::send_flags::none));
  // Behind the garbage: once this value can be read, all of the garbage has been looked at.
  ASSERT_TRUE(rogue.send(zmq::buffer(set), zmq::send_flags::none));

  std::unique_ptr<WorkerLink> link = Connect(supervisor.endpoint());
  ASSERT_NE(link, nullptr);
  ChannelRendezvousStore store(*link);
  absl::StatusOr<std::string> got = store.Get("rogue", kStorePatience);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "accepted");
  std::vector<std::string> dropped = supervisor.dropped();
  ASSERT_THAT(dropped, SizeIs(4));
  EXPECT_THAT(dropped[0], HasSubstr("verification"));
  EXPECT_THAT(dropped[1], HasSubstr("RendezvousValue is a supervisor command"));
  EXPECT_THAT(dropped[2], HasSubstr("verification"));
  EXPECT_THAT(dropped[3], HasSubstr("exceeds"));
}

}  // namespace
}  // namespace cohort
