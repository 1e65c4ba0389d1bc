// RunRanks: runs one thread per rank of a collective group inside a test process, the way Gloo's
// own tests do, and collects each rank's status.
//
//   std::vector<absl::Status> results = RunRanks(4, [&](uint32_t rank) -> absl::Status { ... });
//
// Thread-safety: `body` runs concurrently, once per rank.
#ifndef COHORT_TEST_COLLECTIVE_RANK_THREADS_H_
#define COHORT_TEST_COLLECTIVE_RANK_THREADS_H_

#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/status/status.h"

// In a rank's body: returns the status of `expr` when it is an error.
#define RETURN_IF_ERROR(expr)               \
  do {                                      \
    if (absl::Status s = (expr); !s.ok()) { \
      return s;                             \
    }                                       \
  } while (0)

namespace cohort {

inline std::vector<absl::Status> RunRanks(uint32_t size,
                                          const std::function<absl::Status(uint32_t)>& body) {
  std::vector<absl::Status> results(size);
  std::vector<std::thread> threads;
  for (uint32_t rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] { results[rank] = body(rank); });
  }
  for (std::thread& thread : threads) thread.join();
  return results;
}

}  // namespace cohort

#endif  // COHORT_TEST_COLLECTIVE_RANK_THREADS_H_
