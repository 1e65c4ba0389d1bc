// The web dashboard's one page: HTML, its script and dygraphs (Debian's libjs-dygraphs) inlined,
// so the page needs nothing beyond the orchestrator. It reads the dashboard's JSON (dashboard.h)
// and draws every metric of a trial, or of an experiment's trials overlaid, with hover, zoom,
// log scale and smoothing.
//
//   absl::StatusOr<ChartLibrary> charts = LoadChartLibrary();
//   std::string html = DashboardPage(*charts);
//
// Thread-safety: pure functions (LoadChartLibrary reads two files).
#ifndef COHORT_HARNESS_COHORT_WEB_DASHBOARD_PAGE_H_
#define COHORT_HARNESS_COHORT_WEB_DASHBOARD_PAGE_H_

#include <string>

#include "absl/status/statusor.h"

namespace cohort {

struct ChartLibrary {
  std::string js;
  std::string css;
};

// dygraph.min.js and dygraph.min.css from $COHORT_DYGRAPHS_DIR, else
// /usr/share/javascript/dygraphs. FAILED_PRECONDITION naming the package to install when either
// cannot be read.
absl::StatusOr<ChartLibrary> LoadChartLibrary();

// The page, `charts` inlined.
std::string DashboardPage(const ChartLibrary& charts);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_WEB_DASHBOARD_PAGE_H_
