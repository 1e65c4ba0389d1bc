// The page `cohort report` writes: one self-contained HTML file (no network needed to view it)
// holding the report's data as JSON (report_data.h) and the script and style that draw it: per run
// a table of its trials, line charts of training loss, of each validation metric and of
// records/s over batches (one line per trial), where the training time went per phase, and
// across runs a scaling table against a 1-slot baseline.
//
//   std::string html = RenderReportPage(ReportDataJson(runs));
//
// Every chart is an <svg class="chart"> whose data-lines attribute counts the lines drawn in
// it, so a headless browser can check that the charts were drawn.
//
// Thread-safety: pure function.
#ifndef COHORT_HARNESS_COHORT_REPORT_REPORT_PAGE_H_
#define COHORT_HARNESS_COHORT_REPORT_REPORT_PAGE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cohort {

std::string RenderReportPage(absl::string_view data_json);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_REPORT_REPORT_PAGE_H_
