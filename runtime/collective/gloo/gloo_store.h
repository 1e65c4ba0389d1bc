// GlooStore: Gloo's rendezvous store (`gloo::rendezvous::Store`) over a Cohort RendezvousStore,
// so Gloo's full-mesh setup can exchange addresses through the agent's rendezvous service.
//
//   GlooStore store(rendezvous, std::chrono::seconds(30));
//   gloo::rendezvous::PrefixStore prefixed("trial-1/attempt-0/gloo", store);
//   context->connectFullMesh(prefixed, device);   // may throw GlooStoreError
//
// Gloo's interface reports failures by throwing: a failed or timed-out store call throws
// GlooStoreError, which carries the RendezvousStore's status (DEADLINE_EXCEEDED naming the key
// when nobody sets it in time). Callers catch it at the backend boundary.
//
// Thread-safety: as thread-safe as the RendezvousStore it wraps; the store must outlive this.
#ifndef COHORT_RUNTIME_COLLECTIVE_GLOO_GLOO_STORE_H_
#define COHORT_RUNTIME_COLLECTIVE_GLOO_GLOO_STORE_H_

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gloo/common/error.h"
#include "gloo/rendezvous/store.h"
#include "runtime/collective/rendezvous_store.h"

namespace cohort {

// Thrown by GlooStore when the underlying RendezvousStore fails.
class GlooStoreError : public gloo::Exception {
 public:
  explicit GlooStoreError(absl::Status status)
      : gloo::Exception(std::string(status.message())), status_(std::move(status)) {}
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

class GlooStore final : public gloo::rendezvous::Store {
 public:
  // `get_timeout` bounds get() and the timeout-less wait().
  GlooStore(RendezvousStore& store, std::chrono::milliseconds get_timeout)
      : store_(store), get_timeout_(get_timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  // The value of `key`, waiting up to the get timeout for it to be set.
  std::vector<char> get(const std::string& key) override;
  // Returns once every key is set; throws if any is still missing after `timeout` in all.
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  RendezvousStore& store_;
  std::chrono::milliseconds get_timeout_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_COLLECTIVE_GLOO_GLOO_STORE_H_
