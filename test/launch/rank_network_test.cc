// The launched ranks' agent ids sort as their ranks, loopback hosts, and the address toward a
// host (loopback here: these machines may have no other route).
#include "runtime/launch/rank_network.h"

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

}  // namespace
}  // namespace cohort
