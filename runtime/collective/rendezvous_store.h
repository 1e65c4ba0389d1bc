// RendezvousStore: the key/value store workers of one trial meet through (Gloo's store keys, the
// NCCL unique id, layout fingerprints). The agent serves it over the control channel; tests use
// InMemoryRendezvousStore. A key is written once; readers wait for it.
//
//   store.Set("nccl/id", id_bytes);
//   absl::StatusOr<std::string> id = store.Get("nccl/id", std::chrono::seconds(30));
//
// Thread-safety: implementations say; InMemoryRendezvousStore may be shared by threads.
#ifndef COHORT_RUNTIME_COLLECTIVE_RENDEZVOUS_STORE_H_
#define COHORT_RUNTIME_COLLECTIVE_RENDEZVOUS_STORE_H_

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"

namespace cohort {

class RendezvousStore {
 public:
  virtual ~RendezvousStore() = default;
  // Stores `value` under `key`, replacing an earlier value.
  virtual absl::Status Set(const std::string& key, const std::string& value) = 0;
  // The value of `key`, waiting up to `timeout` for someone to set it; DEADLINE_EXCEEDED names
  // the key when nobody does.
  virtual absl::StatusOr<std::string> Get(const std::string& key,
                                          std::chrono::milliseconds timeout) = 0;
};

// A process-local store for tests and single-process use.
class InMemoryRendezvousStore final : public RendezvousStore {
 public:
  absl::Status Set(const std::string& key, const std::string& value) override;
  absl::StatusOr<std::string> Get(const std::string& key,
                                  std::chrono::milliseconds timeout) override;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_COLLECTIVE_RENDEZVOUS_STORE_H_
