#include "runtime/trial/unread_hyperparameters.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/text/closest_name.h"

namespace cohort {

std::vector<std::string> UnreadHyperparameters(const Hyperparameters& set,
                                               const std::set<std::string>& read_by_plugin,
                                               const std::vector<std::string>& read_by_cohort) {
  std::vector<std::string> unread;
  for (const auto& [name, value] : set.values()) {
    if (read_by_plugin.count(name) != 0) continue;
    if (std::find(read_by_cohort.begin(), read_by_cohort.end(), name) != read_by_cohort.end()) {
      continue;
    }
    unread.push_back(name);
  }
  return unread;
}

std::vector<std::string> AskedButNotSet(const Hyperparameters& set,
                                        const std::set<std::string>& read_by_plugin,
                                        const std::vector<std::string>& read_by_cohort) {
  std::set<std::string> asked(read_by_plugin.begin(), read_by_plugin.end());
  asked.insert(read_by_cohort.begin(), read_by_cohort.end());
  std::vector<std::string> missing;
  for (const std::string& name : asked) {
    if (set.values().count(name) == 0) missing.push_back(name);
  }
  return missing;
}

std::string UnreadHyperparametersNotice(const std::vector<std::string>& unread,
                                        const std::vector<std::string>& asked_but_not_set) {
  const std::vector<absl::string_view> known(asked_but_not_set.begin(), asked_but_not_set.end());
  std::vector<std::string> named;
  for (const std::string& name : unread) {
    const std::optional<std::string> meant = ClosestName(name, known);
    named.push_back(meant ? absl::StrCat(name, " (did you mean '", *meant, "'?)") : name);
  }
  const bool one = unread.size() == 1;
  return absl::StrCat(
      "warning: ", one ? "hyperparameter " : "hyperparameters ", absl::StrJoin(named, ", "),
      one ? " was" : " were",
      " not read by the plugin during the first batch, nor by Cohort: check the name",
      one ? "" : "s", " (a --set of a key the plugin does not know adds one)");
}

}  // namespace cohort
