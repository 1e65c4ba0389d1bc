#include "runtime/checkpoint/checkpoint_names.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cohort {
namespace {

// Empty when `name` is acceptable, else why not.
std::string Problem(absl::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxCheckpointNameLength) {
    return absl::StrCat("is longer than ", kMaxCheckpointNameLength, " characters");
  }
  if (name.front() == '.') return "starts with '.'";
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return "has a character outside [A-Za-z0-9._-]";
    }
  }
  return {};
}

}  // namespace

absl::Status ValidateCheckpointId(absl::string_view id) {
  const std::string problem = Problem(id);
  if (problem.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("checkpoint id '", absl::CHexEscape(id), "' ", problem));
}

absl::Status ValidateCheckpointFileName(absl::string_view name) {
  std::string problem = Problem(name);
  if (problem.empty() && name == kManifestFileName) problem = "is reserved for the manifest";
  if (problem.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("checkpoint file name '", absl::CHexEscape(name), "' ", problem));
}

std::string CheckpointId(uint64_t trial_id, uint64_t batches) {
  return absl::StrCat("trial-", trial_id, "-batch-", batches);
}

std::optional<CheckpointIdParts> ParseCheckpointId(absl::string_view id) {
  CheckpointIdParts parts;
  const std::vector<absl::string_view> fields = absl::StrSplit(id, '-');
  if (fields.size() != 4 || fields[0] != "trial" || fields[2] != "batch" ||
      !absl::SimpleAtoi(fields[1], &parts.trial_id) ||
      !absl::SimpleAtoi(fields[3], &parts.batches) ||
      CheckpointId(parts.trial_id, parts.batches) != id) {
    return std::nullopt;
  }
  return parts;
}

}  // namespace cohort
