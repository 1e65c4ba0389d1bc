// Which listeners must use CURVE: every one but loopback, ipc and inproc, unless forced on.
#include "runtime/security/listen_policy.h"

#include <string>

#include "gtest/gtest.h"

namespace cohort {
namespace {

struct Row {
  const char* endpoint;
  bool local;
};

constexpr Row kTable[] = {
    {"tcp://127.0.0.1:5555", true},
    {"tcp://127.0.0.1:*", true},
    {"tcp://127.1.2.3:5555", true},
    {"tcp://[::1]:5555", true},
    {"tcp://localhost:5555", true},
    {"ipc:///run/cohort/agent.sock", true},
    {"ipc://@abstract", true},
    {"inproc://workers", true},
    {"tcp://*:5555", false},
    {"tcp://0.0.0.0:5555", false},
    {"tcp://[::]:5555", false},
    {"tcp://10.0.0.5:5555", false},
    {"tcp://eth0:5555", false},
    {"tcp://orchestrator.example.com:5555", false},
    {"tcp://128.0.0.1:5555", false},
    {"tcp://127.0.0.256:5555", false},
    {"tcp://127.0.0:5555", false},
    {"tcp://127.0.0.1.5:5555", false},
    {"tcp://[::ffff:127.0.0.1]:5555", false},
    {"tcp://127.0.0.1", false},
    {"tcp://localhost.evil.com:5555", false},
    {"ws://127.0.0.1:5555", false},
    {"pgm://eth0;239.192.1.1:5555", false},
    {"127.0.0.1:5555", false},
    {"", false},
};

TEST(ListenPolicyTest, OnlyLoopbackIpcAndInprocAreLocal) {
  for (const Row& row : kTable) {
    EXPECT_EQ(IsLocalEndpoint(row.endpoint), row.local) << row.endpoint;
    EXPECT_EQ(CurveRequired(row.endpoint), !row.local) << row.endpoint;
    EXPECT_EQ(CurveRequired(row.endpoint, CurvePolicy::kUnlessLocal), !row.local) << row.endpoint;
  }
}

TEST(ListenPolicyTest, AlwaysForcesCurveOnLocalListenersToo) {
  for (const Row& row : kTable)
    EXPECT_TRUE(CurveRequired(row.endpoint, CurvePolicy::kAlways)) << row.endpoint;
}

}  // namespace
}  // namespace cohort
