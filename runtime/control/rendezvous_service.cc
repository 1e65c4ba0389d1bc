#include "runtime/control/rendezvous_service.h"

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

void RendezvousService::Clear() { values_.clear(); }

}  // namespace cohort
