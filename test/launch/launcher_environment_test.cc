// ReadLauncherEnvironment over environments built by hand, as torchrun, srun and mpirun set them.
#include "runtime/launch/launcher_environment.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

Environment Of(std::map<std::string, std::string> variables) {
  return [variables](const char* name) -> std::optional<std::string> {
    auto found = variables.find(name);
    if (found == variables.end()) return std::nullopt;
    return found->second;
  };
}

std::string ErrorOf(const std::map<std::string, std::string>& variables) {
  absl::StatusOr<LaunchPlacement> placement = ReadLauncherEnvironment(Of(variables));
  EXPECT_FALSE(placement.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(placement.status())) << placement.status();
  return std::string(placement.status().message());
}

TEST(LauncherEnvironmentTest, TorchrunsVariables) {
  absl::StatusOr<LaunchPlacement> placement =
      ReadLauncherEnvironment(Of({{"RANK", "3"},
                                  {"WORLD_SIZE", "4"},
                                  {"LOCAL_RANK", "1"},
                                  {"MASTER_ADDR", "trainer-0"},
                                  {"MASTER_PORT", "29400"}}));
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_EQ(*placement, (LaunchPlacement{"torchrun", 3, 4, 1, "trainer-0", 29400}));
}

// torchrun's agent holds MASTER_PORT for its own store: rank 0 serves at the next port, unless
// COHORT_LAUNCH_PORT names one.
TEST(LauncherEnvironmentTest, UnderTorchrunsAgentRankZeroServesAtTheNextPort) {
  std::map<std::string, std::string> variables = {{"RANK", "0"},
                                                  {"WORLD_SIZE", "2"},
                                                  {"LOCAL_RANK", "0"},
                                                  {"MASTER_ADDR", "127.0.0.1"},
                                                  {"MASTER_PORT", "29500"},
                                                  {"TORCHELASTIC_USE_AGENT_STORE", "True"}};
  EXPECT_EQ(ReadLauncherEnvironment(Of(variables))->master_port, 29501);
  variables["COHORT_LAUNCH_PORT"] = "31000";
  EXPECT_EQ(ReadLauncherEnvironment(Of(variables))->master_port, 31000);
  variables["COHORT_LAUNCH_PORT"] = "0";
  EXPECT_THAT(ErrorOf(variables), HasSubstr("COHORT_LAUNCH_PORT=0"));
  variables.erase("COHORT_LAUNCH_PORT");
  variables["MASTER_PORT"] = "65535";
  EXPECT_THAT(ErrorOf(variables), HasSubstr("COHORT_LAUNCH_PORT"));
  variables["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  EXPECT_EQ(ReadLauncherEnvironment(Of(variables))->master_port, 65535);
}

// torchrun under srun: the inner launcher's variables win.
TEST(LauncherEnvironmentTest, TorchrunComesBeforeSlurm) {
  absl::StatusOr<LaunchPlacement> placement = ReadLauncherEnvironment(Of({{"RANK", "0"},
                                                                          {"WORLD_SIZE", "2"},
                                                                          {"LOCAL_RANK", "0"},
                                                                          {"MASTER_ADDR", "a"},
                                                                          {"MASTER_PORT", "1234"},
                                                                          {"SLURM_PROCID", "1"},
                                                                          {"SLURM_NTASKS", "1"},
                                                                          {"SLURM_LOCALID", "0"}}));
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_EQ(placement->launcher, "torchrun");
  EXPECT_EQ(placement->world_size, 2u);
}

TEST(LauncherEnvironmentTest, SlurmsVariablesWithTheFirstNodeAndAPortFromTheJob) {
  absl::StatusOr<LaunchPlacement> placement =
      ReadLauncherEnvironment(Of({{"SLURM_PROCID", "5"},
                                  {"SLURM_NTASKS", "8"},
                                  {"SLURM_LOCALID", "1"},
                                  {"SLURM_JOB_NODELIST", "gpu[07-09,12],login1"},
                                  {"SLURM_JOB_ID", "123456"}}));
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_EQ(*placement, (LaunchPlacement{"slurm", 5, 8, 1, "gpu07", 23456}));
  // MASTER_ADDR and MASTER_PORT, when set, are taken as they are.
  placement = ReadLauncherEnvironment(Of({{"SLURM_PROCID", "0"},
                                          {"SLURM_NTASKS", "1"},
                                          {"SLURM_LOCALID", "0"},
                                          {"MASTER_ADDR", "10.0.0.5"},
                                          {"MASTER_PORT", "29501"},
                                          {"SLURM_JOB_ID", "7"}}));
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_EQ(placement->master_addr, "10.0.0.5");
  EXPECT_EQ(placement->master_port, 29501);
  EXPECT_THAT(ErrorOf({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_LOCALID", "0"}}),
              HasSubstr("SLURM_JOB_NODELIST is not set"));
}

TEST(LauncherEnvironmentTest, OpenMpisVariablesNeedMasterAddr) {
  absl::StatusOr<LaunchPlacement> placement =
      ReadLauncherEnvironment(Of({{"OMPI_COMM_WORLD_RANK", "1"},
                                  {"OMPI_COMM_WORLD_SIZE", "2"},
                                  {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                  {"MASTER_ADDR", "node-1"}}));
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_EQ(*placement, (LaunchPlacement{"mpirun", 1, 2, 1, "node-1", kDefaultMasterPort}));
  EXPECT_THAT(ErrorOf({{"OMPI_COMM_WORLD_RANK", "1"},
                       {"OMPI_COMM_WORLD_SIZE", "2"},
                       {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}),
              HasSubstr("MASTER_ADDR is not set: mpirun ranks need rank 0's host there"));
}

TEST(LauncherEnvironmentTest, MissingAndContradictoryVariablesAreNamed) {
  EXPECT_THAT(ErrorOf({}), HasSubstr("no launcher's variables are set"));
  EXPECT_THAT(ErrorOf({{"RANK", "0"}, {"MASTER_ADDR", "a"}}),
              HasSubstr("RANK is set but WORLD_SIZE, LOCAL_RANK are not: a torchrun launch sets "
                        "all of RANK, WORLD_SIZE and LOCAL_RANK"));
  EXPECT_THAT(ErrorOf({{"RANK", "4"},
                       {"WORLD_SIZE", "4"},
                       {"LOCAL_RANK", "0"},
                       {"MASTER_ADDR", "a"},
                       {"MASTER_PORT", "1"}}),
              HasSubstr("RANK=4: expected a whole number from 0 to 3 (below WORLD_SIZE=4)"));
  EXPECT_THAT(ErrorOf({{"RANK", "0"},
                       {"WORLD_SIZE", "two"},
                       {"LOCAL_RANK", "0"},
                       {"MASTER_ADDR", "a"},
                       {"MASTER_PORT", "1"}}),
              HasSubstr("WORLD_SIZE=two: expected a whole number from 1"));
  EXPECT_THAT(ErrorOf({{"RANK", "0"},
                       {"WORLD_SIZE", "1"},
                       {"LOCAL_RANK", "0"},
                       {"MASTER_ADDR", "a"},
                       {"MASTER_PORT", "70000"}}),
              HasSubstr("MASTER_PORT=70000: expected a whole number from 1 to 65535"));
  EXPECT_THAT(
      ErrorOf({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "0"}, {"MASTER_ADDR", "a"}}),
      HasSubstr("MASTER_PORT is not set"));
}

TEST(LauncherEnvironmentTest, FirstHostOfSlurmHostLists) {
  EXPECT_EQ(*FirstSlurmHost("node1"), "node1");
  EXPECT_EQ(*FirstSlurmHost("a,b"), "a");
  EXPECT_EQ(*FirstSlurmHost("node[07-09,12]"), "node07");
  EXPECT_EQ(*FirstSlurmHost("rack[2-3]-gpu,cpu1"), "rack2-gpu");
  EXPECT_EQ(*FirstSlurmHost("gpu[5,1-2],x"), "gpu5");
  EXPECT_FALSE(FirstSlurmHost("").ok());
  EXPECT_FALSE(FirstSlurmHost("node[1-3").ok());
}

}  // namespace
}  // namespace cohort
