// ProcessState: this process runs, a child stopped with SIGSTOP reads 'T' until SIGCONT, a reaped
// one cannot be read, nor a pid that cannot be one.
#include "runtime/base/process_state.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>

#include "gtest/gtest.h"

namespace cohort {
namespace {

// The child's state once it is `wanted`, or what it was after 5 s.
std::optional<char> WaitForState(pid_t child, char wanted) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::optional<char> state = ProcessState(child);
  while (state != wanted && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    state = ProcessState(child);
  }
  return state;
}

TEST(ProcessStateTest, TellsARunningProcessFromAStoppedOne) {
  EXPECT_EQ(ProcessState(::getpid()), 'R');  // reading its own stat, it runs
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_EQ(WaitForState(child, 'S'), 'S');  // waiting in pause()
  ::kill(child, SIGSTOP);
  EXPECT_EQ(WaitForState(child, 'T'), 'T');
  ::kill(child, SIGCONT);
  EXPECT_EQ(WaitForState(child, 'S'), 'S');
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(ProcessState(child), std::nullopt);
  EXPECT_EQ(ProcessState(0), std::nullopt);
  EXPECT_EQ(ProcessState(-1), std::nullopt);
}

}  // namespace
}  // namespace cohort
