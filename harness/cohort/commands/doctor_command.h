// `cohort doctor`: checks whether this host can run GPU trials and explains what stands in the
// way, each finding with what to do (doctor_findings.h). Exits 0 when it can, 1 when it cannot
// (a machine without a GPU says so plainly), 2 on a usage error.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_DOCTOR_COMMAND_H_
#define COHORT_HARNESS_COHORT_COMMANDS_DOCTOR_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

int RunDoctorCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_DOCTOR_COMMAND_H_
