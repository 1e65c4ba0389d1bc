#include "harness/cohort/commands/report_command.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/command_exit.h"
#include "harness/cohort/report/report_data.h"
#include "harness/cohort/report/report_page.h"
#include "runtime/record/run_folder.h"

namespace cohort {
namespace {

constexpr char kReportUsage[] =
    "usage: cohort report RUN_DIR... [--output FILE]\n"
    "\n"
    "Writes one HTML page about the run folders of `cohort run` (or an orchestrator's\n"
    "experiments/<id> folders): a chart per metric with every trial of every run overlaid\n"
    "(hover, zoom, log scale, smoothing; drawn by Debian's libjs-dygraphs, inlined), each\n"
    "run's trials and where the training time went, and a scaling table of the runs against a\n"
    "1-slot run. The page holds everything it shows: it opens without a network.\n"
    "\n"
    "  --output FILE   where to write it (default: the first RUN_DIR's report.html)\n";

int ReportUsage(absl::string_view problem) {
  return UsageError("cohort report", problem, kReportUsage);
}

}  // namespace

int RunReportCommand(const std::vector<std::string>& args) {
  std::vector<std::string> folders;
  std::string output;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs(kReportUsage, stdout);
      return 0;
    }
    if (args[i] == "--output") {
      if (i + 1 == args.size()) return ReportUsage("--output needs a file");
      output = args[++i];
    } else if (!args[i].empty() && args[i][0] == '-') {
      return ReportUsage(absl::StrCat("unexpected argument '", args[i], "'"));
    } else {
      folders.push_back(args[i]);
    }
  }
  if (folders.empty()) return ReportUsage("name at least one run folder");
  std::vector<RunReportData> runs;
  for (const std::string& folder : folders) {
    absl::StatusOr<RunReportData> run = ReadRunForReport(folder);
    if (!run.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", folder.c_str(),
                   std::string(run.status().message()).c_str());
      return 1;
    }
    runs.push_back(*std::move(run));
  }
  absl::StatusOr<ChartLibrary> charts = LoadChartLibrary();
  if (!charts.ok()) return CommandError(charts.status());
  if (output.empty()) output = folders.front() + "/report.html";
  if (absl::Status written =
          WriteFileAtomically(output, RenderReportPage(ReportDataJson(runs), *charts));
      !written.ok()) {
    return CommandError(written);
  }
  std::printf("report: %s\n", output.c_str());
  return 0;
}

}  // namespace cohort
