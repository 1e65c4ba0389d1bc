// Fuzz target: the experiment config loader (Determined's YAML), as `cohort run`, `cohort
// experiment create` and the orchestrator run it on a file a person wrote. The input is the YAML
// text, then optionally `--set` overrides, each after a NUL byte.
// Contract checked: any text either parses or is refused with INVALID_ARGUMENT, never crash or
// throw; a config that parses re-emits YAML (effective_yaml) that parses again to the same
// effective_yaml and training fingerprint.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "runtime/config/experiment_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts = absl::StrSplit(input, '\0');
  const std::string yaml = parts.front();
  const std::vector<std::string> overrides(parts.begin() + 1, parts.end());

  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(yaml, overrides);
  if (!config.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(config.status()), config.status().ToString());
    return 0;
  }
  absl::StatusOr<ExperimentConfig> again = ParseExperimentConfig(config->effective_yaml);
  FUZZ_CHECK(again.ok(), again.status().ToString() + "\nin:\n" + config->effective_yaml);
  FUZZ_CHECK(again->effective_yaml == config->effective_yaml,
             "effective_yaml changed when parsed again:\n" + config->effective_yaml +
                 "\nbecame:\n" + again->effective_yaml);
  FUZZ_CHECK(TrainingFingerprint(*again) == TrainingFingerprint(*config),
             "the fingerprint changed when parsed again:\n" + config->effective_yaml);
  return 0;
}
