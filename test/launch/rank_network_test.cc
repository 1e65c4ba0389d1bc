// The launched ranks' agent ids sort as their ranks, loopback hosts, the address toward a host
// (loopback here: these machines may have no other route), and the probe of a listening port.
#include "runtime/launch/rank_network.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(RankNetworkTest, AgentIdsSortAsTheirRanks) {
  EXPECT_EQ(LaunchedAgentId(0, 1), "rank-0");
  EXPECT_EQ(LaunchedAgentId(3, 8), "rank-3");
  EXPECT_EQ(LaunchedAgentId(3, 11), "rank-03");
  EXPECT_EQ(LaunchedAgentId(10, 11), "rank-10");
  EXPECT_EQ(LaunchedAgentId(7, 1001), "rank-0007");
  std::vector<std::string> ids;
  for (uint32_t rank = 0; rank < 120; ++rank) ids.push_back(LaunchedAgentId(rank, 120));
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
}

TEST(RankNetworkTest, LoopbackHosts) {
  EXPECT_TRUE(IsLoopbackName("localhost"));
  EXPECT_TRUE(IsLoopbackName("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackName("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackName("::1"));
  EXPECT_FALSE(IsLoopbackName("10.0.0.5"));
  EXPECT_FALSE(IsLoopbackName("node07"));
  EXPECT_FALSE(IsLoopbackName("1270.0.0.1.example"));
}

TEST(RankNetworkTest, AddressTowardALoopbackHostIsLoopback) {
  EXPECT_EQ(AddressToward("localhost").value_or(""), "127.0.0.1");
  EXPECT_EQ(AddressToward("127.0.0.2").value_or(""), "127.0.0.1");
}

TEST(RankNetworkTest, AnUnresolvableHostIsNamed) {
  absl::StatusOr<std::string> address = AddressToward("no-such-host.invalid");
  ASSERT_FALSE(address.ok());
  EXPECT_TRUE(absl::IsUnavailable(address.status())) << address.status();
  EXPECT_THAT(std::string(address.status().message()),
              ::testing::HasSubstr("no-such-host.invalid"));
}

TEST(RankNetworkTest, AcceptsConnectionsWhileSomethingListens) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const uint16_t port = ntohs(address.sin_port);
  EXPECT_TRUE(AcceptsConnections("127.0.0.1", port, 1.0));
  EXPECT_TRUE(AcceptsConnections("localhost", port, 1.0));
  close(listener);
  EXPECT_FALSE(AcceptsConnections("127.0.0.1", port, 1.0));
  EXPECT_FALSE(AcceptsConnections("no-such-host.invalid", port, 1.0));
}

}  // namespace
}  // namespace cohort
