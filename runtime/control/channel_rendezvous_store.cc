#include "runtime/control/channel_rendezvous_store.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kFirstBackoff{1};
constexpr std::chrono::milliseconds kLongestBackoff{50};
// How long a get waits for its answer before asking again (the hub drops answers it cannot
// queue).
constexpr std::chrono::milliseconds kAnswerPatience{1000};
// Request ids start at 1, so no answer carries this one.
constexpr uint64_t kNoRequest = 0;

std::chrono::milliseconds Until(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds::zero(),
                  std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()));
}

}  // namespace

ChannelRendezvousStore::ChannelRendezvousStore(WorkerLink& link) : link_(link) {}

absl::Status ChannelRendezvousStore::Set(const std::string& key, const std::string& value) {
  if (value.size() > kMaxRendezvousValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat("rendezvous: the value for '", key, "' has ",
                                                   value.size(), " bytes; at most ",
                                                   kMaxRendezvousValueBytes, " are allowed"));
  }
  return link_.Send(RendezvousSet{key, value});
}

absl::StatusOr<std::string> ChannelRendezvousStore::Get(const std::string& key,
                                                        std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  std::chrono::milliseconds backoff = kFirstBackoff;
  while (true) {
    const uint64_t request_id = next_request_id_++;
    if (absl::Status sent = link_.Send(RendezvousGet{key, request_id}); !sent.ok()) return sent;
    std::optional<RendezvousValue> answer =
        AwaitAnswer(request_id, std::min(deadline, Clock::now() + kAnswerPatience));
    if (answer && answer->found) return std::move(answer->value);
    if (answer) {
      Pause(std::min(deadline, Clock::now() + backoff));
      backoff = std::min(backoff * 2, kLongestBackoff);
    }
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("rendezvous: nobody set '", key, "' within ", timeout.count(), " ms"));
    }
  }
}

std::vector<WorkerCommand> ChannelRendezvousStore::TakePendingCommands() {
  return std::exchange(pending_, {});
}

std::optional<RendezvousValue> ChannelRendezvousStore::AwaitAnswer(uint64_t request_id,
                                                                   Clock::time_point deadline) {
  while (std::optional<WorkerCommand> command = link_.WaitCommand(Until(deadline))) {
    if (auto* answer = std::get_if<RendezvousValue>(&*command)) {
      if (answer->request_id == request_id) return std::move(*answer);
    } else {
      pending_.push_back(*std::move(command));
    }
  }
  return std::nullopt;
}

void ChannelRendezvousStore::Pause(Clock::time_point until) { AwaitAnswer(kNoRequest, until); }

}  // namespace cohort
