// Elastic trials (resources.min_slots_per_trial below slots_per_trial): a queued task whose
// slots do not fit is placed on the largest count that fits, down to the minimum
// (ElasticSlotCounts: the same records per batch), and a task running on fewer slots than its
// trial's is stopped after a checkpoint and placed again on more once they are free (no restart
// used). Determined has no such trials; torchrun's --nnodes MIN:MAX and Horovod's elastic mode
// continue on the workers that remain in the same way.
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"
#include "runtime/text/counted.h"

namespace cohort {

std::optional<Placement> Orchestrator::PlaceOnFewerSlots(Task& task, absl::string_view waits,
                                                         std::vector<AgentView>* views) {
  const Trial& trial = *cluster_->trials.at(task.trial_id);
  const Experiment& experiment = *cluster_->experiments.at(task.experiment_id);
  for (const uint32_t slots : ElasticSlotCounts(experiment.config, trial.global_batch_size)) {
    if (slots >= task.slots) continue;
    const PlacementRequest request{task.id, task.trial_id, slots};
    PlacementDecision decision = TryPlace(request, *views);
    auto* placement = std::get_if<Placement>(&decision);
    if (placement == nullptr) continue;
    ApplyPlacement(request, *placement, views);
    Notice(absl::StrCat(
        "trial ", trial.id, ": its ", Counted(task.slots, "slot"), " do not fit (", waits,
        "); it trains on ", Counted(slots, "slot"), " (resources.min_slots_per_trial ",
        experiment.config.min_slots_per_trial, ") from ",
        task.resume_checkpoint_id.empty() ? std::string("the start") : task.resume_checkpoint_id,
        ", and grows back when the slots return"));
    task.slots = slots;
    return std::move(*placement);
  }
  return std::nullopt;
}

void Orchestrator::GrowElasticTasks() {
  // Slots that return go to the queue first; a provisioner's jobs have a size of their own.
  if (options_.provisioner != nullptr || !queue_.empty()) return;
  const std::vector<AgentView> views = AgentViews();
  for (auto& [task_id, task] : cluster_->tasks) {
    if (task->state != TaskRowState::kRunning || task->flags.stopping || task->grow_to != 0) {
      continue;
    }
    const Trial& trial = *cluster_->trials.at(task->trial_id);
    const Experiment& experiment = *cluster_->experiments.at(task->experiment_id);
    if (task->slots >= experiment.config.slots_per_trial) continue;
    std::vector<AgentView> freed = views;
    ReleaseTask(task->id, &freed);
    for (const uint32_t slots : ElasticSlotCounts(experiment.config, trial.global_batch_size)) {
      if (slots <= task->slots) break;
      if (!std::holds_alternative<Placement>(TryPlace({task->id, task->trial_id, slots}, freed))) {
        continue;
      }
      task->grow_to = slots;
      Notice(absl::StrCat("trial ", trial.id, ": ", Counted(slots, "slot"),
                          " are free again; it stops "
                          "after a checkpoint and goes on from it on ",
                          Counted(slots, "slot"), " instead of ", task->slots));
      StopTask(*task, absl::StrCat("growing back to ", Counted(slots, "slot")),
               options_.kill_grace_seconds);
      break;
    }
  }
}

}  // namespace cohort
