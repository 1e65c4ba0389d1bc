// A writer killed in the middle of Write: the previous checkpoint stays whole and latest, the
// half-written one is never listed, a live writer's temporary folder survives other processes
// opening the store, and the dead writer's folder is removed by the next open.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "temp_folder.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;

constexpr size_t kLargeFileBytes = size_t{64} << 20;  // written in one call: long enough to catch

CheckpointInfo Info(const std::string& id, uint64_t batches) {
  CheckpointInfo info;
  info.id = id;
  info.trial_id = 1;
  info.batches_trained = batches;
  return info;
}

// In a child process: writes a checkpoint with one large file, exits 0 if that succeeded.
[[noreturn]] void WriteLargeCheckpoint(const std::string& root) {
  const std::string parameters(kLargeFileBytes, 'w');
  auto storage = OpenSharedFsStorage(root);
  const bool ok =
      storage.ok() &&
      (*storage)->Write(Info("trial-1-batch-200", 200), {{"parameters", parameters}}).ok();
  _exit(ok ? 0 : 1);
}

// The staging folder in `root` once it holds a file named `name`; empty if `child` exits or ten
// seconds pass first.
std::string WaitForStagedFile(const std::string& root, const std::string& name, pid_t child) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const std::string& entry : NamesIn(root)) {
      if (!absl::StartsWith(entry, ".partial-") || absl::EndsWith(entry, ".lock")) continue;
      if (::access((root + "/" + entry + "/" + name).c_str(), F_OK) == 0) return root + "/" + entry;
    }
    if (::waitpid(child, nullptr, WNOHANG) == child) return {};
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return {};
}

// Kills and reaps the child if a failed assertion leaves the test early.
struct ChildReaper {
  pid_t pid;
  ~ChildReaper() {
    if (::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
  }
};

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

TEST(InterruptedWriteTest, KilledWriterLeavesThePreviousCheckpointLatestAndWhole) {
  TempFolder root;
  auto storage = OpenSharedFsStorage(root.path());
  ASSERT_TRUE(storage.ok()) << storage.status();
  ASSERT_TRUE((*storage)->Write(Info("trial-1-batch-100", 100), {{"parameters", "previous"}}).ok());

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) WriteLargeCheckpoint(root.path());
  ChildReaper reaper{child};

  // Freeze the writer while its large file is being written, so what follows sees it mid-Write.
  const std::string staging = WaitForStagedFile(root.path(), "parameters", child);
  ASSERT_FALSE(staging.empty()) << "the writer finished or failed before it could be interrupted";
  ASSERT_EQ(::kill(child, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  ASSERT_TRUE(Exists(staging)) << "the write completed before the writer stopped";

  // Another process opening the store (which cleans) spares a write whose writer is alive.
  auto bystander = OpenSharedFsStorage(root.path());
  ASSERT_TRUE(bystander.ok()) << bystander.status();
  EXPECT_TRUE(Exists(staging + "/parameters"));

  ASSERT_EQ(::kill(child, SIGKILL), 0);
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  // The half-written checkpoint is invisible; the previous one is whole and still the latest.
  auto listed = (*storage)->List();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front().id, "trial-1-batch-100");
  auto latest = LatestCheckpoint(**storage, 1);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->id, "trial-1-batch-100");
  auto previous = (*storage)->Read("trial-1-batch-100");
  ASSERT_TRUE(previous.ok()) << previous.status();
  EXPECT_EQ(previous->files.at("parameters"), "previous");
  EXPECT_EQ((*storage)->Read("trial-1-batch-200").status().code(), absl::StatusCode::kNotFound);

  // The dead writer's temporary entries remain until the store is opened again.
  EXPECT_TRUE(Exists(staging));
  auto reopened = OpenSharedFsStorage(root.path());
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_THAT(NamesIn(root.path()), ElementsAre("trial-1-batch-100"));
  latest = LatestCheckpoint(**reopened, 1);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->id, "trial-1-batch-100");

  // The interrupted checkpoint can then be written again under its id.
  EXPECT_TRUE((*reopened)->Write(Info("trial-1-batch-200", 200), {{"parameters", "retry"}}).ok());
}

}  // namespace
}  // namespace cohort
