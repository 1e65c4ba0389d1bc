// The page `cohort report` writes: one self-contained HTML file (no network needed to view it)
// holding the report's data as JSON (report_data.h), dygraphs and the charts' script shared with
// the web dashboard (chart_script.h), and its own: a chart per metric (every training and
// validation metric, and records/s, over batches) with every trial of every run overlaid, with
// hover, zoom, log scale and smoothing; per run a table of its trials (hyperparameters wrapped)
// and where the training time went per phase; across runs a scaling table against a 1-slot
// baseline.
//
//   std::string html = RenderReportPage(ReportDataJson(runs), *LoadChartLibrary());
//
// Every chart's box (class chart-box) says how many rows and series it drew (data-rows,
// data-series), and the body how many charts (data-rendered), so a headless browser can check.
//
// Thread-safety: pure function.
#ifndef COHORT_HARNESS_COHORT_REPORT_REPORT_PAGE_H_
#define COHORT_HARNESS_COHORT_REPORT_REPORT_PAGE_H_

#include <string>

#include "absl/strings/string_view.h"
#include "harness/cohort/web/chart_script.h"

namespace cohort {

std::string RenderReportPage(absl::string_view data_json, const ChartLibrary& charts);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_REPORT_REPORT_PAGE_H_
