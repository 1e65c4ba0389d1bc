// What the Slurm resource manager says to Slurm and reads back (slurm_job.h), and the provisioner
// over a scripted Slurm (its commands answered by the test, each call recorded).
#include "runtime/slurm/slurm_job.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/slurm/slurm_provisioner.h"

namespace cohort {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Phase = JobState::Phase;

SlurmSettings Settings() {
  SlurmSettings settings;
  settings.slots_per_node = 4;
  settings.orchestrator_endpoint = "tcp://head:29400";
  settings.cohort_executable = "/opt/cohort dir/bin/cohort";
  settings.log_dir = "/shared/state/slurm-jobs";
  return settings;
}

TEST(SlurmJobTest, ATaskTakesOneNodeOrWholeNodes) {
  EXPECT_EQ(*SlurmNodesFor(1, 4), 1u);
  EXPECT_EQ(*SlurmNodesFor(4, 4), 1u);
  EXPECT_EQ(*SlurmNodesFor(12, 4), 3u);
  absl::StatusOr<uint32_t> uneven = SlurmNodesFor(6, 4);
  ASSERT_FALSE(uneven.ok());
  EXPECT_EQ(uneven.status().message(),
            "needs 6 slots; Slurm nodes have 4 slots each and 6 is not a multiple of 4: use 4 "
            "or 8");
  EXPECT_FALSE(SlurmNodesFor(0, 4).ok());
}

TEST(SlurmJobTest, SbatchAsksForTheNodesCpusAndTheUsersOptions) {
  SlurmSettings settings = Settings();
  settings.partition = "batch";
  settings.account = "ml";
  settings.sbatch_options = {"--time=04:00:00", "--qos=high"};
  EXPECT_THAT(SbatchArgv(settings, {.task_id = 7, .slots = 8}, 2),
              ElementsAre("sbatch", "--parsable", "--job-name=cohort-task-7", "--nodes=2",
                          "--ntasks-per-node=1", "--output=/shared/state/slurm-jobs/%j.out",
                          "--cpus-per-task=4", "--partition=batch", "--account=ml",
                          "--time=04:00:00", "--qos=high"));
  // The experiment's partition and options (resources.resource_pool, slurm.sbatch_args).
  EXPECT_THAT(
      SbatchArgv(settings,
                 {.task_id = 7, .slots = 1, .partition = "a100", .options = {"--qos=low"}}, 1),
      ElementsAre("sbatch", "--parsable", "--job-name=cohort-task-7", "--nodes=1",
                  "--ntasks-per-node=1", "--output=/shared/state/slurm-jobs/%j.out",
                  "--cpus-per-task=1", "--partition=a100", "--account=ml", "--time=04:00:00",
                  "--qos=high", "--qos=low"));
  settings.gpus = true;
  const std::vector<std::string> gpus = SbatchArgv(settings, {.task_id = 7, .slots = 8}, 2);
  EXPECT_THAT(gpus, Contains("--gpus-per-node=4"));
  EXPECT_THAT(gpus, Contains("--exclusive"));
}

TEST(SlurmJobTest, TheScriptStartsOneNamedAgentPerNode) {
  SlurmSettings settings = Settings();
  const std::string script =
      SlurmBatchScript(settings, {.task_id = 7, .trial_id = 3, .experiment_id = 2, .slots = 8}, 2);
  EXPECT_THAT(script, HasSubstr("#!/bin/sh\n"));
  EXPECT_THAT(script, HasSubstr("task 7 (trial 3, experiment 2): one per node, 4 CPU slots"));
  EXPECT_THAT(script, HasSubstr("exec srun --ntasks-per-node=1"));
  EXPECT_THAT(script, HasSubstr("--id \"slurm-$SLURM_JOB_ID-$SLURM_NODEID\""));
  EXPECT_THAT(script, HasSubstr("'/opt/cohort dir/bin/cohort' --orchestrator tcp://head:29400 "
                                "--slots 4\n"));
  settings.gpus = true;
  settings.agent_key_file = "/keys/slurm.key";
  settings.orchestrator_public_key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
  EXPECT_THAT(SlurmBatchScript(settings, {.slots = 4}, 1),
              HasSubstr("--slots auto --key /keys/slurm.key --orchestrator-key "
                        "'rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7'\n"));
}

TEST(SlurmJobTest, ReadsSbatchsJobId) {
  EXPECT_EQ(*ParseSbatchJobId("4711\n"), "4711");
  EXPECT_EQ(*ParseSbatchJobId("4711;cluster-a\n"), "4711");
  absl::StatusOr<std::string> none = ParseSbatchJobId("Submitted batch job\n");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("'Submitted batch job'"));
}

TEST(SlurmJobTest, ReadsSqueuesStatesAndReasons) {
  const std::string listed =
      "11|PENDING|Resources\n12|PENDING|None\n13|RUNNING|None\n14|CANCELLED|None\n"
      "15|CONFIGURING|None\n16|COMPLETING|None\n99|RUNNING|None\n";
  const std::map<std::string, JobState> states =
      ParseSqueueStates(listed, {"11", "12", "13", "14", "15", "16", "17"});
  EXPECT_EQ(states.size(), 7u);
  EXPECT_EQ(states.at("11"), (JobState{Phase::kPending, "Resources"}));
  EXPECT_EQ(states.at("12"), (JobState{Phase::kPending, ""}));
  EXPECT_EQ(states.at("13"), (JobState{Phase::kRunning, ""}));
  EXPECT_EQ(states.at("14"), (JobState{Phase::kEnded, "CANCELLED"}));
  EXPECT_EQ(states.at("15"), (JobState{Phase::kPending, "configuring"}));
  EXPECT_EQ(states.at("16"), (JobState{Phase::kEnded, "COMPLETING"}));
  EXPECT_EQ(states.at("17"), (JobState{Phase::kEnded, "gone"}));
}

TEST(SlurmJobTest, ReadsSlotsPerNodeFromSinfo) {
  EXPECT_EQ(*ParseSinfoSlotsPerNode("64|gpu:8\n32|gpu:a100:4(S:0-1)\n", true), 4u);
  EXPECT_EQ(*ParseSinfoSlotsPerNode("64|gpu:8\n32|(null)\n", false), 32u);
  EXPECT_EQ(*ParseSinfoSlotsPerNode("64|gpu:2,shard:8\n", true), 2u);
  absl::StatusOr<uint32_t> no_gpus = ParseSinfoSlotsPerNode("2|(null)\n", true);
  ASSERT_FALSE(no_gpus.ok());
  EXPECT_THAT(no_gpus.status().message(), HasSubstr("no node with GPUs"));
}

TEST(SlurmJobTest, TellsTheJobOfAnAgentFromItsId) {
  EXPECT_EQ(SlurmJobOfAgent("slurm-4711-0"), "4711");
  EXPECT_EQ(SlurmJobOfAgent("slurm-4711-12"), "4711");
  EXPECT_EQ(SlurmJobOfAgent("slurm-4711"), std::nullopt);
  EXPECT_EQ(SlurmJobOfAgent("slurm-x-0"), std::nullopt);
  EXPECT_EQ(SlurmJobOfAgent("node-1"), std::nullopt);
}

TEST(SlurmJobTest, QuotesForTheShell) {
  EXPECT_EQ(ShellQuote("/usr/bin/cohort"), "/usr/bin/cohort");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
}

// A Slurm whose commands the test answers; every call is kept.
struct ScriptedSlurm {
  std::vector<std::vector<std::string>> calls;
  std::vector<std::string> inputs;
  std::map<std::string, CommandOutput> answers;  // by program

  CommandRunner Runner() {
    return [this](const std::vector<std::string>& argv, const std::string& input) {
      calls.push_back(argv);
      inputs.push_back(input);
      return answers.at(argv[0]);
    };
  }
};

TEST(SlurmProvisionerTest, AsksSinfoForTheSlotsOfANode) {
  ScriptedSlurm slurm;
  slurm.answers["sinfo"] = {0, "2|(null)\n", ""};
  SlurmSettings settings = Settings();
  settings.slots_per_node = 0;
  settings.partition = "debug";
  settings.log_dir = ::testing::TempDir() + "/slurm-jobs";
  absl::StatusOr<std::unique_ptr<SlurmProvisioner>> provisioner =
      SlurmProvisioner::Create(settings, slurm.Runner());
  ASSERT_TRUE(provisioner.ok()) << provisioner.status();
  EXPECT_EQ((*provisioner)->settings().slots_per_node, 2u);
  EXPECT_THAT(slurm.calls[0], ElementsAre("sinfo", "-h", "-o", "%c|%G", "--partition=debug"));
  EXPECT_TRUE((*provisioner)->CheckCanEverFit(2).ok());
  EXPECT_FALSE((*provisioner)->CheckCanEverFit(3).ok());
}

TEST(SlurmProvisionerTest, SubmitsFollowsAndCancelsJobs) {
  ScriptedSlurm slurm;
  slurm.answers["sbatch"] = {0, "31\n", ""};
  slurm.answers["squeue"] = {0, "31|PENDING|Priority\n", ""};
  slurm.answers["scancel"] = {
      1, "",
      "scancel: error: Kill job error on job id 31: Job/step already completing or "
      "completed\n"};
  SlurmSettings settings = Settings();
  settings.log_dir = ::testing::TempDir() + "/slurm-jobs";
  auto provisioner = SlurmProvisioner::Create(settings, slurm.Runner());
  ASSERT_TRUE(provisioner.ok()) << provisioner.status();
  absl::StatusOr<ProvisionedJob> job = (*provisioner)->Submit({.task_id = 5, .slots = 8});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->id, "31");
  EXPECT_EQ(job->agents, 2u);
  EXPECT_THAT(slurm.inputs.back(), HasSubstr("exec srun"));
  auto states = (*provisioner)->States({"31"});
  ASSERT_TRUE(states.ok());
  EXPECT_EQ(states->at("31"), (JobState{Phase::kPending, "Priority"}));
  EXPECT_THAT(slurm.calls.back(),
              ElementsAre("squeue", "-h", "--me", "--states=all", "-o", "%i|%T|%r"));
  // A job already ending is cancelled as far as the caller is concerned.
  EXPECT_TRUE((*provisioner)->Cancel("31").ok());
  EXPECT_THAT(slurm.calls.back(), ElementsAre("scancel", "31"));

  slurm.answers["sbatch"] = {1, "", "sbatch: error: invalid partition specified: gpu\n"};
  absl::StatusOr<ProvisionedJob> refused = (*provisioner)->Submit({.task_id = 6, .slots = 1});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("exited 1: sbatch: error: invalid partition"));
}

}  // namespace
}  // namespace cohort
