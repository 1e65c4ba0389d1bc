// `cohort report RUN_DIR... [--output FILE]`: writes one self-contained HTML page about the run
// folders (report_page.h): their trials' curves, throughput, where the time went, and how the
// runs scale against a 1-slot run. Default output: RUN_DIR/report.html of the first folder.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_REPORT_COMMAND_H_
#define COHORT_HARNESS_COHORT_COMMANDS_REPORT_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

// args are the words after "report". Returns the exit code: 0 written, 1 a folder could not be
// read or the page not written, 2 a usage error.
int RunReportCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_REPORT_COMMAND_H_
