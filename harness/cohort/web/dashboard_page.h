// The web dashboard's one page: HTML, its script and dygraphs (Debian's libjs-dygraphs) inlined,
// so the page needs nothing beyond the orchestrator. It reads the dashboard's JSON (dashboard.h)
// and draws every metric of a trial, or of an experiment's trials overlaid, with hover, zoom,
// log scale and smoothing.
//
//   absl::StatusOr<ChartLibrary> charts = LoadChartLibrary();   // chart_script.h
//   std::string html = DashboardPage(*charts);
//
// Thread-safety: a pure function.
#ifndef COHORT_HARNESS_COHORT_WEB_DASHBOARD_PAGE_H_
#define COHORT_HARNESS_COHORT_WEB_DASHBOARD_PAGE_H_

#include <string>

#include "harness/cohort/web/chart_script.h"

namespace cohort {

// The page, `charts` inlined.
std::string DashboardPage(const ChartLibrary& charts);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_WEB_DASHBOARD_PAGE_H_
