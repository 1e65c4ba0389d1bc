// The orchestrator's answer to a client naming an experiment or a trial it does not know: the
// id, and the command that lists the ones it knows.
//
//   if (found == cluster.experiments.end()) return UnknownExperiment(request.experiment_id);
//
// Thread-safety: pure functions.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_UNKNOWN_IDS_H_
#define COHORT_RUNTIME_ORCHESTRATOR_UNKNOWN_IDS_H_

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "runtime/client/client_messages.h"

namespace cohort {

inline ClientError UnknownExperiment(uint64_t experiment_id) {
  return ClientError{ClientErrorCode::kNotFound,
                     absl::StrCat("no experiment ", experiment_id,
                                  " (`cohort experiment list --all` lists the experiments)")};
}

inline ClientError UnknownTrial(uint64_t trial_id) {
  return ClientError{ClientErrorCode::kNotFound,
                     absl::StrCat("no trial ", trial_id,
                                  " (`cohort experiment describe EXPERIMENT_ID` lists an "
                                  "experiment's trials)")};
}

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_UNKNOWN_IDS_H_
