// The Orchestrator's tasks on a provisioner's jobs (agent_provisioner.h): each queued task gets a
// job of its own, waits with the job's state as its reason, and is placed on the job's agents
// once they have all registered; its job is cancelled and its agents forgotten when it is over.
// The provisioner's commands run through provisioner_calls_, their answers taken on later turns.
#include <algorithm>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"

namespace cohort {

void Orchestrator::ProvisionQueuedTasks() {
  AgentProvisioner& provisioner = *options_.provisioner;
  for (const uint64_t task_id : queue_) {
    Task& task = *cluster_->tasks.at(task_id);
    if (task.job_asked) continue;
    const ExperimentConfig& config = cluster_->experiments.at(task.experiment_id)->config;
    provisioner_calls_->Submit({.task_id = task.id,
                                .trial_id = task.trial_id,
                                .experiment_id = task.experiment_id,
                                .slots = task.slots,
                                .partition = config.resource_pool,
                                .options = config.slurm_sbatch_args});
    task.job_asked = true;
    SetWaitingReason(task, absl::StrCat("asking ", provisioner.name(), " for a job"));
  }
  std::vector<uint64_t> failed;
  const bool submitted = TakeProvisionerAnswers(failed);
  PollJobStates(/*force=*/submitted);
  TakeProvisionerAnswers(failed);  // the poll's answer, when it came at once
  if (queue_.empty()) return;      // (a task whose job failed is still queued)
  const std::vector<uint64_t> queued(queue_.begin(), queue_.end());

  // Each job's agents serve its task alone: placing one task leaves the others' views as they were.
  const std::vector<AgentView> all_agents = AgentViews(/*with_held=*/true);
  for (const uint64_t task_id : queued) {
    Task* found = FindTask(task_id);
    if (found == nullptr) continue;
    Task& task = *found;
    if (task.job_id.empty()) continue;  // its job not asked for, or its answer still to come
    const std::string job = absl::StrCat(provisioner.name(), " job ", task.job_id);
    if (task.job_state.phase == JobState::Phase::kEnded) {
      task.flags.failure =
          absl::StrCat(job, " ended (", task.job_state.detail, ") before its agents registered");
      task.flags.job_lost = true;
      failed.push_back(task_id);
      continue;
    }
    std::vector<AgentView> views;
    for (const AgentView& view : all_agents) {
      if (provisioner.JobOfAgent(view.id) == task.job_id) views.push_back(view);
    }
    // Its agents having registered, the job runs, whatever the latest poll said.
    if (views.size() < task.job_agents) {
      if (task.job_state.phase == JobState::Phase::kPending) {
        SetWaitingReason(task, task.job_state.detail.empty()
                                   ? absl::StrCat(job, " pending")
                                   : absl::StrCat(job, " pending: ", task.job_state.detail));
      } else {
        SetWaitingReason(task, absl::StrCat(job, " running; ", views.size(), " of ",
                                            task.job_agents, " agents registered"));
      }
      continue;
    }
    if (std::any_of(views.begin(), views.end(),
                    [&](const AgentView& view) { return IsHeldBack(view.id); })) {
      SetWaitingReason(task, absl::StrCat(job, ": its agents take no task now", AwayAgentsNote()));
      continue;
    }
    const PlacementRequest request{task.id, task.trial_id, task.slots};
    const PlacementDecision decision = TryPlace(request, views);
    if (const auto* waiting = std::get_if<Waiting>(&decision)) {
      SetWaitingReason(task, absl::StrCat(job, ": ", waiting->reason));
      continue;
    }
    std::erase(queue_, task.id);
    Launch(task, std::get<Placement>(decision));
  }
  // A task whose job could not be had, or ended first, fails as a task that could not start
  // (as one whose config cannot be written at launch).
  for (const uint64_t task_id : failed) {
    Task* task = FindTask(task_id);
    if (task == nullptr || task->state != TaskRowState::kQueued) continue;
    task->state = TaskRowState::kStarting;
    cluster_->trials.at(task->trial_id)->lifecycle.TaskLaunched();
    Finish(*task);
  }
}

void Orchestrator::PollJobStates(bool force) {
  const double now = clock_.MonotonicSeconds();
  if (provisioner_calls_->polling()) return;
  if (!force && last_job_poll_ >= 0 && now - last_job_poll_ < options_.job_poll_seconds) return;
  std::vector<std::string> jobs;
  for (const uint64_t task_id : queue_) {
    const Task& task = *cluster_->tasks.at(task_id);
    if (!task.job_id.empty()) jobs.push_back(task.job_id);
  }
  if (jobs.empty()) return;
  last_job_poll_ = now;
  provisioner_calls_->Poll(std::move(jobs));
}

bool Orchestrator::TakeProvisionerAnswers(std::vector<uint64_t>& failed) {
  const std::string name = options_.provisioner->name();
  bool submitted = false;
  for (ProvisionerCalls::Answer& answer : provisioner_calls_->TakeAnswers()) {
    if (auto* polled = std::get_if<ProvisionerCalls::Polled>(&answer)) {
      if (!polled->states.ok()) {
        Notice(absl::StrCat("warning: cannot read the ", name,
                            " jobs' states: ", polled->states.status().message()));
        continue;
      }
      for (const uint64_t task_id : queue_) {
        Task& task = *cluster_->tasks.at(task_id);
        if (auto state = polled->states->find(task.job_id); state != polled->states->end()) {
          task.job_state = state->second;
        }
      }
    } else if (auto* cancelled = std::get_if<ProvisionerCalls::Cancelled>(&answer)) {
      if (!cancelled->status.ok()) Notice(absl::StrCat("warning: ", cancelled->status.message()));
    } else {
      auto& [task_id, job] = std::get<ProvisionerCalls::Submitted>(answer);
      Task* task = FindTask(task_id);
      if (task == nullptr) {
        // Dropped (its trial killed, its experiment deleted) while the job was being asked for.
        if (job.ok()) provisioner_calls_->Cancel(job->id);
        continue;
      }
      if (!job.ok()) {
        task->flags.failure = absl::StrCat("cannot get a ", name, " job: ", job.status().message());
        failed.push_back(task_id);
        continue;
      }
      task->job_id = job->id;
      task->job_agents = job->agents;
      task->job_state = JobState{JobState::Phase::kPending, ""};
      submitted = true;
      Event(absl::StrCat("task ", task->id, " (trial ", task->trial_id, "): ", name, " job ",
                         job->id, " submitted for ", task->slots, " slot",
                         task->slots == 1 ? "" : "s", " on ", job->agents, " node",
                         job->agents == 1 ? "" : "s"));
    }
  }
  return submitted;
}

absl::Status Orchestrator::CheckProvisionedAgent(absl::string_view agent_id) const {
  if (options_.provisioner == nullptr) return absl::OkStatus();
  const std::string name = options_.provisioner->name();
  const std::optional<std::string> job = options_.provisioner->JobOfAgent(agent_id);
  if (!job) {
    return absl::InvalidArgumentError(absl::StrCat("this orchestrator places tasks on its ", name,
                                                   " jobs' agents only; agent ", agent_id,
                                                   " is none of them"));
  }
  for (const auto& [id, task] : cluster_->tasks) {
    if (task->job_id == *job) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(name, " job ", *job, " serves no task of this orchestrator"));
}

void Orchestrator::ReleaseJob(Task& task) {
  if (options_.provisioner == nullptr || task.job_id.empty()) return;
  const std::string job = std::exchange(task.job_id, "");
  // A failure is told when its answer comes.
  if (task.job_state.phase != JobState::Phase::kEnded) provisioner_calls_->Cancel(job);
  std::erase_if(cluster_->agents, [&](const auto& entry) {
    return options_.provisioner->JobOfAgent(entry.first) == job;
  });
}

}  // namespace cohort
