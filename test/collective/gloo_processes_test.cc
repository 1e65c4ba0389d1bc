// The Gloo backend across real processes: two forked children meet through a shared directory
// (Gloo's FileStore behind a RendezvousStore) and allreduce over loopback TCP.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "gloo/rendezvous/file_store.h"
#include "gtest/gtest.h"
#include "runtime/collective/gloo/gloo_backend.h"

namespace cohort {
namespace {

// A RendezvousStore over a directory, so separate processes on one machine can meet.
class DirectoryRendezvousStore final : public RendezvousStore {
 public:
  explicit DirectoryRendezvousStore(const std::string& directory) : files_(directory) {}

  absl::Status Set(const std::string& key, const std::string& value) override {
    try {
      files_.set(Escaped(key), std::vector<char>(value.begin(), value.end()));
      return absl::OkStatus();
    } catch (const std::exception& e) {
      return absl::InternalError(e.what());
    }
  }

  absl::StatusOr<std::string> Get(const std::string& key,
                                  std::chrono::milliseconds timeout) override {
    try {
      files_.wait({Escaped(key)}, timeout);
      std::vector<char> value = files_.get(Escaped(key));
      return std::string(value.begin(), value.end());
    } catch (const std::exception& e) {
      return absl::DeadlineExceededError(e.what());
    }
  }

 private:
  static std::string Escaped(std::string key) {  // keys become file names
    for (char& c : key) c = c == '/' ? '_' : c;
    return key;
  }

  gloo::rendezvous::FileStore files_;
};

// The child's work: 0 when the allreduce gave the expected sums.
int RunRank(uint32_t rank, const std::string& directory) {
  DirectoryRendezvousStore store(directory);
  GlooOptions options;
  options.timeout = std::chrono::seconds(20);
  options.prefix = "trial-7/attempt-0";
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
      CreateGlooBackend(rank, 2, store, options);
  if (!backend.ok()) {
    std::fprintf(stderr, "rank %u: %s\n", rank, backend.status().ToString().c_str());
    return 1;
  }
  std::vector<double> data(10000, rank + 1.0);
  if (absl::Status s = (*backend)->AllreduceSum(data.data(), data.size(), COHORT_DTYPE_FLOAT64);
      !s.ok()) {
    std::fprintf(stderr, "rank %u: %s\n", rank, s.ToString().c_str());
    return 1;
  }
  for (double value : data) {
    if (value != 3.0) return 2;
  }
  return (*backend)->Barrier().ok() ? 0 : 3;
}

TEST(GlooProcessesTest, TwoProcessesAllreduceOverLoopback) {
  char pattern[] = "/tmp/cohort-gloo-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string directory = pattern;
  std::vector<pid_t> children;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int code = RunRank(rank, directory);
      std::fflush(stderr);
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace cohort
