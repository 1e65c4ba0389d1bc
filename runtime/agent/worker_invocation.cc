#include "runtime/agent/worker_invocation.h"

#include <unistd.h>

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/security/rendezvous_key_variables.h"

namespace cohort {

WorkerInvocation WorkerInvocationFor(const StartTask& task, const RankAssignment& rank,
                                     const AgentSlot& slot, const TaskPlaces& places,
                                     const std::vector<std::string>& base_environment) {
  WorkerInvocation invocation;
  invocation.argv = {places.executable,
                     "worker",
                     "--run-dir",
                     places.run_dir,
                     "--plugin",
                     task.worker.plugin_path,
                     "--trial-id",
                     absl::StrCat(task.trial_id),
                     "--rank",
                     absl::StrCat(rank.rank),
                     "--size",
                     absl::StrCat(task.world_size),
                     "--attempt",
                     absl::StrCat(task.attempt),
                     "--endpoint",
                     places.endpoint,
                     "--checkpoint-root",
                     places.checkpoint_root};
  if (task.worker.trial_number != 0) {
    invocation.argv.insert(invocation.argv.end(),
                           {"--trial-number", absl::StrCat(task.worker.trial_number)});
  }
  if (!task.rendezvous.endpoint.empty()) {
    invocation.argv.insert(invocation.argv.end(), {"--rendezvous", task.rendezvous.endpoint,
                                                   "--rendezvous-prefix", task.rendezvous.prefix});
  }
  if (!task.worker.resume_checkpoint_id.empty()) {
    invocation.argv.insert(invocation.argv.end(), {"--resume", task.worker.resume_checkpoint_id});
    if (task.worker.validate_at_resume) {
      invocation.argv.insert(invocation.argv.end(), {"--validate-at-resume", "1"});
    }
  }

  std::map<std::string, std::string> variables;
  for (const std::string& entry : base_environment) {
    const size_t equals = entry.find('=');
    if (equals != std::string::npos) variables[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  variables["COHORT_RANK"] = absl::StrCat(rank.rank);
  variables["COHORT_LOCAL_RANK"] = absl::StrCat(rank.local_rank);
  variables["COHORT_SIZE"] = absl::StrCat(task.world_size);
  variables["COHORT_TASK_ID"] = absl::StrCat(task.task_id);
  for (const char* name :
       {kRendezvousServerKeyVariable, kRendezvousPublicKeyVariable, kRendezvousSecretKeyVariable}) {
    variables.erase(name);
  }
  if (!task.rendezvous.endpoint.empty() && places.agent_curve) {
    for (auto& [name, value] : RendezvousKeyVariables(*places.agent_curve)) {
      variables[name] = std::move(value);
    }
  }
  if (!places.gloo_hostname.empty()) variables["COHORT_GLOO_HOSTNAME"] = places.gloo_hostname;
  if (slot.kind == SlotKind::kGpu) {
    // device_id counts GPUs in PCI bus order (gpu_slots.h); CUDA counts them that way only when
    // told to. The worker sees its one device as cuda:0.
    variables["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    variables["CUDA_VISIBLE_DEVICES"] = absl::StrCat(slot.device_id);
    variables["COHORT_DEVICE"] = "cuda:0";
  } else {
    variables["COHORT_DEVICE"] = "cpu";
  }
  for (const KeyValue& extra : task.environment) variables[extra.key] = extra.value;
  // The worker dies with this process; it checks it was not orphaned before it could ask to.
  variables["COHORT_SUPERVISOR_PID"] = absl::StrCat(::getpid());
  for (const auto& [key, value] : variables) {
    invocation.environment.push_back(absl::StrCat(key, "=", value));
  }
  return invocation;
}

}  // namespace cohort
