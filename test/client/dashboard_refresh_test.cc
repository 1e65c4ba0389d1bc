// Dashboard::Refresh asks the orchestrator for an active experiment's checkpoint listing (which
// reads every kept checkpoint's manifest) only when its trials' checkpoints changed or
// kCheckpointListingSeconds passed, not every second; an ended experiment's views are taken once.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <variant>

#include "gtest/gtest.h"
#include "harness/cohort/web/dashboard.h"
#include "test/common/manual_clock.h"

namespace cohort {
namespace {

class DashboardRefreshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cohort-dashboard-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    // The page inlines the chart library; any files do for what is tested here.
    for (const char* name : {"dygraph.min.js", "dygraph.min.css"}) {
      std::ofstream(dir_ + "/" + name) << "/* charts */\n";
    }
    ::setenv("COHORT_DYGRAPHS_DIR", dir_.c_str(), 1);
    DashboardOptions options;
    options.address = ListenAddress{"127.0.0.1", 0};
    options.state_dir = dir_;
    options.clock = &clock_;
    absl::StatusOr<std::unique_ptr<Dashboard>> started = Dashboard::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    dashboard_ = *std::move(started);
    trial_.trial_id = 7;
    trial_.state = TrialState::kRunning;
    trial_.latest_checkpoint_id = "trial-7-batch-100";
  }

  void TearDown() override {
    dashboard_.reset();
    ::unsetenv("COHORT_DYGRAPHS_DIR");
    std::filesystem::remove_all(dir_);
  }

  // The orchestrator as the dashboard sees it: one experiment of trial_, in `state_`.
  ClientMessage Answer(const ClientMessage& request) {
    if (std::holds_alternative<ListExperiments>(request)) {
      ExperimentSummary summary;
      summary.experiment_id = 3;
      summary.state = state_;
      return ExperimentList{{summary}};
    }
    if (std::holds_alternative<DescribeExperiment>(request)) {
      ExperimentDescription description;
      description.summary.experiment_id = 3;
      description.summary.state = state_;
      description.trials = {trial_};
      return description;
    }
    if (std::holds_alternative<ListCheckpoints>(request)) {
      ++listings_;
      return CheckpointListing{};
    }
    return ClientError{ClientErrorCode::kNotFound, "not asked of here"};
  }

  void Refresh() {
    dashboard_->Refresh([this](const ClientMessage& request) { return Answer(request); });
  }

  std::string dir_;
  ManualClock clock_;
  std::unique_ptr<Dashboard> dashboard_;
  TrialSummary trial_;
  ExperimentState state_ = ExperimentState::kActive;
  int listings_ = 0;
};

TEST_F(DashboardRefreshTest, ListsAnActiveExperimentsCheckpointsWhenTheyChange) {
  Refresh();
  EXPECT_EQ(listings_, 1);
  for (int second = 0; second < 5; ++second) {
    clock_.Advance(1);
    Refresh();
  }
  EXPECT_EQ(listings_, 1);  // the same checkpoints: the listing taken before

  trial_.latest_checkpoint_id = "trial-7-batch-200";
  clock_.Advance(1);
  Refresh();
  EXPECT_EQ(listings_, 2);
  trial_.best_checkpoint_id = "trial-7-batch-200";
  Refresh();
  EXPECT_EQ(listings_, 3);

  clock_.Advance(kCheckpointListingSeconds);  // what storage holds may have changed meanwhile
  Refresh();
  EXPECT_EQ(listings_, 4);

  state_ = ExperimentState::kCompleted;  // taken once more, then kept with its other views
  Refresh();
  clock_.Advance(kCheckpointListingSeconds);
  Refresh();
  EXPECT_EQ(listings_, 5);
}

}  // namespace
}  // namespace cohort
