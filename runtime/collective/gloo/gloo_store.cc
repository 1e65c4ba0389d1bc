#include "runtime/collective/gloo/gloo_store.h"

#include <algorithm>

namespace cohort {

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
  absl::Status status = store_.Set(key, std::string(data.begin(), data.end()));
  if (!status.ok()) throw GlooStoreError(std::move(status));
}

std::vector<char> GlooStore::get(const std::string& key) {
  absl::StatusOr<std::string> value = store_.Get(key, get_timeout_);
  if (!value.ok()) throw GlooStoreError(value.status());
  return std::vector<char>(value->begin(), value->end());
}

void GlooStore::wait(const std::vector<std::string>& keys) { wait(keys, get_timeout_); }

void GlooStore::wait(const std::vector<std::string>& keys,
                     const std::chrono::milliseconds& timeout) {
  // Gloo passes kNoTimeout (zero) for "no limit"; ours is the get timeout then.
  const std::chrono::milliseconds limit = timeout.count() > 0 ? timeout : get_timeout_;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (const std::string& key : keys) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    absl::StatusOr<std::string> value =
        store_.Get(key, std::max(left, std::chrono::milliseconds(0)));
    if (!value.ok()) throw GlooStoreError(value.status());
  }
}

}  // namespace cohort
