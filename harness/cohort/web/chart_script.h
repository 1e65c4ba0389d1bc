// What the dashboard and `cohort report` draw their charts with: dygraphs (Debian's
// libjs-dygraphs, read once and inlined into each page, so a page needs nothing else), and the
// script and style both pages share on top of it: `series(trials)` turns trials' reports (their
// metrics.jsonl lines) into one chart per metric with the trials overlaid, `drawCharts` draws or
// updates them (hover for values, drag to zoom, double-click to zoom out), and `controls()` /
// `bindControls()` add the log-scale box and the smoothing slider (a rolling mean over that many
// reports) for every chart of the page.
//
//   absl::StatusOr<ChartLibrary> charts = LoadChartLibrary();
//   page = "<style>" + charts->css + kChartStyle + "</style><script>" + charts->js +
//          "</script><script>" + kChartScript + "...</script>";
//
// Thread-safety: constants, and a function reading two files.
#ifndef COHORT_HARNESS_COHORT_WEB_CHART_SCRIPT_H_
#define COHORT_HARNESS_COHORT_WEB_CHART_SCRIPT_H_

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

extern const char kChartScript[];  // JavaScript, after the library's
extern const char kChartStyle[];   // CSS of the chart boxes and controls

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_WEB_CHART_SCRIPT_H_
