#include "runtime/observe/prometheus_text.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(PrometheusTextTest, WritesHelpAndTypeOncePerFamily) {
  PrometheusText page;
  page.Gauge("cohort_agent_slots", "Slots this agent offers.", 8);
  page.Gauge("cohort_task_records_per_second", "Records per second.", 1234.5,
             {{"task", "17"}, {"trial", "3"}});
  page.Gauge("cohort_task_records_per_second", "Records per second.", 0.25,
             {{"task", "18"}, {"trial", "4"}});
  page.Counter("cohort_trial_restarts_total", "Restarts.", 2, {{"trial", "3"}});
  EXPECT_EQ(page.Text(),
            "# HELP cohort_agent_slots Slots this agent offers.\n"
            "# TYPE cohort_agent_slots gauge\n"
            "cohort_agent_slots 8\n"
            "# HELP cohort_task_records_per_second Records per second.\n"
            "# TYPE cohort_task_records_per_second gauge\n"
            "cohort_task_records_per_second{task=\"17\",trial=\"3\"} 1234.5\n"
            "cohort_task_records_per_second{task=\"18\",trial=\"4\"} 0.25\n"
            "# HELP cohort_trial_restarts_total Restarts.\n"
            "# TYPE cohort_trial_restarts_total counter\n"
            "cohort_trial_restarts_total{trial=\"3\"} 2\n");
}

TEST(PrometheusTextTest, EscapesLabelValuesAndHelp) {
  PrometheusText page;
  page.Gauge("x", "a \\ b\nc", 1, {{"name", "say \"hi\"\\\n"}});
  EXPECT_EQ(page.Text(),
            "# HELP x a \\\\ b\\nc\n"
            "# TYPE x gauge\n"
            "x{name=\"say \\\"hi\\\"\\\\\\n\"} 1\n");
}

TEST(PrometheusTextTest, WritesNonFiniteValuesAsPrometheusReadsThem) {
  PrometheusText page;
  page.Gauge("a", "h", std::numeric_limits<double>::quiet_NaN());
  page.Gauge("b", "h", std::numeric_limits<double>::infinity());
  page.Gauge("c", "h", -std::numeric_limits<double>::infinity());
  EXPECT_NE(page.Text().find("a NaN\n"), std::string::npos);
  EXPECT_NE(page.Text().find("b +Inf\n"), std::string::npos);
  EXPECT_NE(page.Text().find("c -Inf\n"), std::string::npos);
}

}  // namespace
}  // namespace cohort
