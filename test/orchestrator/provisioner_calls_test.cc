// ProvisionerCalls: in the background a request returns at once and its answer comes later, in
// the order asked; in the foreground it is answered before it returns; and destroying it never
// leaves a job that was asked for running unknown.
#include "runtime/orchestrator/provisioner_calls.h"

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/common/gate.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Records every command; Submit waits at a gate (at most 10 s) until the test opens it.
class GatedProvisioner : public AgentProvisioner {
 public:
  std::string name() const override { return "Batch"; }
  absl::Status CheckCanEverFit(uint32_t) const override { return absl::OkStatus(); }
  absl::StatusOr<ProvisionedJob> Submit(const ProvisionRequest& request) override {
    Record(absl::StrCat("submit ", request.task_id));
    submitting.Open();
    answer.Pass().IgnoreError();
    return ProvisionedJob{absl::StrCat("job-", request.task_id), 1};
  }
  absl::StatusOr<std::map<std::string, JobState>> States(
      const std::vector<std::string>& job_ids) override {
    Record("states");
    std::map<std::string, JobState> states;
    for (const std::string& id : job_ids) states[id] = JobState{JobState::Phase::kRunning, ""};
    return states;
  }
  absl::Status Cancel(const std::string& job_id) override {
    Record("cancel " + job_id);
    return absl::OkStatus();
  }
  std::optional<std::string> JobOfAgent(absl::string_view) const override { return std::nullopt; }

  std::vector<std::string> log() {
    std::lock_guard lock(mutex_);
    return log_;
  }

  testing::Gate submitting;  // opened as the first sbatch begins
  testing::Gate answer;      // sbatch answers once the test opens it

 private:
  void Record(std::string line) {
    std::lock_guard lock(mutex_);
    log_.push_back(std::move(line));
  }

  std::mutex mutex_;
  std::vector<std::string> log_;
};

// Takes answers until `count` have come; what came after 10 s otherwise.
std::vector<ProvisionerCalls::Answer> AnswersOf(ProvisionerCalls& calls, size_t count) {
  std::vector<ProvisionerCalls::Answer> all;
  for (int i = 0; i < 1000 && all.size() < count; ++i) {
    for (ProvisionerCalls::Answer& answer : calls.TakeAnswers()) all.push_back(std::move(answer));
    if (all.size() < count) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return all;
}

TEST(ProvisionerCallsTest, InTheBackgroundRequestsReturnAtOnceAndAreAnsweredInOrder) {
  GatedProvisioner provisioner;
  ProvisionerCalls calls(provisioner, /*background=*/true);
  calls.Submit({.task_id = 1});
  calls.Poll({"job-1"});
  calls.Cancel("job-0");
  EXPECT_TRUE(calls.polling());
  ASSERT_TRUE(provisioner.submitting.Pass().ok());
  EXPECT_THAT(calls.TakeAnswers(), IsEmpty()) << "sbatch is still running";
  provisioner.answer.Open();
  const std::vector<ProvisionerCalls::Answer> answers = AnswersOf(calls, 3);
  ASSERT_EQ(answers.size(), 3u);
  const auto& submitted = std::get<ProvisionerCalls::Submitted>(answers[0]);
  EXPECT_EQ(submitted.task_id, 1u);
  ASSERT_TRUE(submitted.job.ok());
  EXPECT_EQ(submitted.job->id, "job-1");
  const auto& polled = std::get<ProvisionerCalls::Polled>(answers[1]);
  ASSERT_TRUE(polled.states.ok());
  EXPECT_EQ(polled.states->at("job-1").phase, JobState::Phase::kRunning);
  EXPECT_EQ(std::get<ProvisionerCalls::Cancelled>(answers[2]).job_id, "job-0");
  EXPECT_FALSE(calls.polling());
  EXPECT_THAT(provisioner.log(), ElementsAre("submit 1", "states", "cancel job-0"));
}

TEST(ProvisionerCallsTest, InTheForegroundEachRequestIsAnsweredBeforeItReturns) {
  GatedProvisioner provisioner;
  provisioner.answer.Open();
  ProvisionerCalls calls(provisioner, /*background=*/false);
  calls.Submit({.task_id = 4});
  EXPECT_THAT(provisioner.log(), ElementsAre("submit 4"));
  const std::vector<ProvisionerCalls::Answer> answers = calls.TakeAnswers();
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(std::get<ProvisionerCalls::Submitted>(answers[0]).job->id, "job-4");
}

// Destroyed while sbatch runs for task 1, with task 2's submission, a poll and a cancel queued:
// the cancel runs, and every job submitted, whose answer nobody took, is cancelled. (Task 2's
// submission and the poll are dropped when the destruction begins before task 1's sbatch ends,
// as it does unless this thread stalls for the 300 ms the gate stays shut; either way no job is
// left.)
TEST(ProvisionerCallsTest, DestroyingItLeavesNoJobItAskedForRunningUnknown) {
  GatedProvisioner provisioner;
  std::thread opener;
  {
    ProvisionerCalls calls(provisioner, /*background=*/true);
    calls.Submit({.task_id = 1});
    ASSERT_TRUE(provisioner.submitting.Pass().ok());
    calls.Submit({.task_id = 2});
    calls.Poll({"job-1"});
    calls.Cancel("job-0");
    opener = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      provisioner.answer.Open();
    });
  }
  opener.join();
  const std::vector<std::string> log = provisioner.log();
  EXPECT_THAT(log, ::testing::Contains("cancel job-0"));
  for (const std::string& line : log) {
    if (!absl::StartsWith(line, "submit ")) continue;
    const std::string job = "job-" + line.substr(7);
    EXPECT_THAT(log, ::testing::Contains("cancel " + job)) << "job " << job << " left running";
  }
  EXPECT_EQ(log.front(), "submit 1");
}

}  // namespace
}  // namespace cohort
