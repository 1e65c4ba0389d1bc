#include "runtime/trial/trial_phase.h"

namespace cohort {

const char* TrialPhaseName(TrialPhase phase) {
  switch (phase) {
    case TrialPhase::kStarting:
      return "starting (forming the group of ranks)";
    case TrialPhase::kPreparing:
      return "choosing the batch's records";
    case TrialPhase::kTraining:
      return "inside the plugin's train_batch";
    case TrialPhase::kExchanging:
      return "waiting for the gradient exchange";
    case TrialPhase::kStepping:
      return "in the optimizer step";
    case TrialPhase::kReporting:
      return "merging training metrics";
    case TrialPhase::kValidating:
      return "validating";
    case TrialPhase::kCheckpointing:
      return "taking a checkpoint";
    case TrialPhase::kDone:
      return "done";
  }
  return "in an unknown phase";
}

const char* TrialPhaseTimingKey(TrialPhase phase) {
  switch (phase) {
    case TrialPhase::kPreparing:
      return "data";
    case TrialPhase::kTraining:
      return "compute";
    case TrialPhase::kExchanging:
      return "exchange_wait";
    case TrialPhase::kStepping:
      return "optimizer";
    case TrialPhase::kReporting:
      return "metrics";
    case TrialPhase::kValidating:
      return "validation";
    case TrialPhase::kCheckpointing:
      return "checkpoint";
    case TrialPhase::kStarting:
    case TrialPhase::kDone:
      return "";
  }
  return "";
}

bool IsOwnWork(TrialPhase phase) {
  return phase == TrialPhase::kPreparing || phase == TrialPhase::kTraining ||
         phase == TrialPhase::kStepping || phase == TrialPhase::kCheckpointing;
}

}  // namespace cohort
