#include "runtime/control/rendezvous_service.h"

#include "absl/strings/match.h"

namespace cohort {

bool RendezvousService::Handle(WorkerHub& hub, const std::string& peer,
                               const WorkerMessage& message) {
  if (const auto* set = std::get_if<RendezvousSet>(&message)) {
    values_[set->key] = set->value;
    return true;
  }
  if (const auto* get = std::get_if<RendezvousGet>(&message)) {
    RendezvousValue answer{get->request_id, get->key, false, std::string()};
    if (auto it = values_.find(get->key); it != values_.end()) {
      answer.found = true;
      answer.value = it->second;
    }
    hub.Send(peer, answer).IgnoreError();
    return true;
  }
  return false;
}

std::optional<size_t> RendezvousService::ValueBytes(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second.size();
}

void RendezvousService::Clear() { values_.clear(); }

size_t RendezvousService::ClearPrefix(absl::string_view prefix) {
  // The keys with `prefix` are one contiguous run of the ordered map, starting at the prefix.
  auto first = values_.lower_bound(std::string(prefix));
  auto last = first;
  size_t count = 0;
  while (last != values_.end() && absl::StartsWith(last->first, prefix)) {
    ++last;
    ++count;
  }
  values_.erase(first, last);
  return count;
}

}  // namespace cohort
