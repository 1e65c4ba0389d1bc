#include "runtime/trial/unread_hyperparameters.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

std::string UnreadHyperparametersNotice(const std::vector<std::string>& unread) {
  const bool one = unread.size() == 1;
  return absl::StrCat(
      "warning: ", one ? "hyperparameter " : "hyperparameters ", absl::StrJoin(unread, ", "),
      one ? " was" : " were",
      " not read by the plugin during the first batch, nor by Cohort: check the name",
      one ? "" : "s", " (a --set of a key the plugin does not know adds one)");
}

}  // namespace cohort
