// `cohort keygen --out DIR [--name NAME]`: makes the CURVE key pair that an orchestrator, an
// agent or a client uses on the control channels. Writes DIR/NAME.key (secret, mode 0600) and
// DIR/NAME.pub, and prints the `<public-key> <name>` line that the peers' authorized keys take.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_KEYGEN_COMMAND_H_
#define COHORT_HARNESS_COHORT_COMMANDS_KEYGEN_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

// args are the words after "keygen". Returns the process exit code: 0 when the keys were
// written, 1 when they could not be (or already exist), 2 for a usage error.
int RunKeygenCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_KEYGEN_COMMAND_H_
