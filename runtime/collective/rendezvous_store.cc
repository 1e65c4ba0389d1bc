#include "runtime/collective/rendezvous_store.h"

#include "absl/strings/str_cat.h"

namespace cohort {

absl::Status InMemoryRendezvousStore::Set(const std::string& key, const std::string& value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    values_[key] = value;
  }
  changed_.notify_all();
  return absl::OkStatus();
}

absl::StatusOr<std::string> InMemoryRendezvousStore::Get(const std::string& key,
                                                         std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!changed_.wait_for(lock, timeout, [&] { return values_.count(key) != 0; })) {
    return absl::DeadlineExceededError(
        absl::StrCat("rendezvous: nobody set '", key, "' within ", timeout.count(), " ms"));
  }
  return values_.at(key);
}

}  // namespace cohort
