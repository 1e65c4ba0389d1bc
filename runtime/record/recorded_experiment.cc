#include "runtime/record/recorded_experiment.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cohort {

absl::StatusOr<RecordedExperiment> ReadRecordedExperiment(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  }
  auto invalid = [&path](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", why));
  };
  try {
    const YAML::Node root = YAML::LoadFile(path);  // JSON is YAML
    if (!root.IsMap() || !root["state"] || !root["trials"] || !root["trials"].IsSequence()) {
      return invalid("not an experiment record (expected \"state\" and \"trials\")");
    }
    RecordedExperiment recorded;
    const std::string state = root["state"].as<std::string>();
    bool known = false;
    for (RunState candidate :
         {RunState::kActive, RunState::kCompleted, RunState::kStopped, RunState::kError}) {
      if (state == RunStateName(candidate)) {
        recorded.state = candidate;
        known = true;
      }
    }
    if (!known) return invalid(absl::StrCat("unknown state '", state, "'"));
    for (const YAML::Node& trial : root["trials"]) {
      if (!trial["id"]) return invalid("a trial without an \"id\"");
      recorded.trial_ids.push_back(trial["id"].as<uint64_t>());
    }
    return recorded;
  } catch (const YAML::Exception& e) {
    return invalid(e.what());
  }
}

}  // namespace cohort
