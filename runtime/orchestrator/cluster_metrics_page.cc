// ClusterMetricsPage: the orchestrator's Prometheus page (see cluster_queries.h).
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/observe/prometheus_text.h"
#include "runtime/orchestrator/cluster_queries.h"

namespace cohort::orchestration {

std::string ClusterMetricsPage(const Cluster& cluster, double now) {
  PrometheusText page;
  uint32_t connected = 0;
  for (const auto& [id, agent] : cluster.agents) connected += agent->connected ? 1 : 0;
  page.Gauge("cohort_orchestrator_agents", "Agents by connection state.", connected,
             {{"state", "connected"}});
  page.Gauge("cohort_orchestrator_agents", "Agents by connection state.",
             static_cast<double>(cluster.agents.size() - connected), {{"state", "disconnected"}});
  for (const auto& [id, agent] : cluster.agents) {
    page.Gauge("cohort_orchestrator_agent_slots", "Slots an agent offers.",
               static_cast<double>(agent->slots.size()), {{"agent", id}});
  }
  for (const auto& [id, agent] : cluster.agents) {
    page.Gauge("cohort_orchestrator_agent_slots_busy", "Slots of an agent held by tasks.",
               static_cast<double>(agent->busy.size()), {{"agent", id}});
  }
  for (const auto& [id, agent] : cluster.agents) {
    if (!agent->connected) continue;
    page.Gauge("cohort_orchestrator_agent_heartbeat_age_seconds",
               "Seconds since a connected agent's last message.", now - agent->last_seen,
               {{"agent", id}});
  }

  std::map<std::string, uint32_t> experiments;
  for (ExperimentState state :
       {ExperimentState::kActive, ExperimentState::kStopping, ExperimentState::kCompleted,
        ExperimentState::kStopped, ExperimentState::kError, ExperimentState::kPaused}) {
    experiments[std::string(ExperimentStateName(state))] = 0;
  }
  for (const auto& [id, experiment] : cluster.experiments) {
    ++experiments[std::string(ExperimentStateName(experiment->state))];
  }
  for (const auto& [state, count] : experiments) {
    page.Gauge("cohort_orchestrator_experiments", "Experiments by state.", count,
               {{"state", state}});
  }
  std::map<std::string, uint32_t> trials;
  for (TrialState state : {TrialState::kQueued, TrialState::kRunning, TrialState::kPaused,
                           TrialState::kCompleted, TrialState::kStopped, TrialState::kError}) {
    trials[std::string(TrialStateName(state))] = 0;
  }
  for (const auto& [id, trial] : cluster.trials)
    ++trials[std::string(TrialStateName(trial->state()))];
  for (const auto& [state, count] : trials) {
    page.Gauge("cohort_orchestrator_trials", "Trials by state.", count, {{"state", state}});
  }
  page.Gauge("cohort_orchestrator_tasks", "Tasks queued or placed on agents.",
             static_cast<double>(cluster.tasks.size()));

  // Per trial, while it has not ended: a finished trial's series go away with it.
  std::vector<const Trial*> live;
  for (const auto& [id, trial] : cluster.trials) {
    if (!trial->ended()) live.push_back(trial.get());
  }
  const auto labels = [](const Trial& trial) {
    return PrometheusText::Labels{{"experiment", absl::StrCat(trial.experiment_id)},
                                  {"trial", absl::StrCat(trial.id)}};
  };
  for (const Trial* trial : live) {
    page.Counter("cohort_orchestrator_trial_restarts_total",
                 "Restarts of a trial from its checkpoint after a failure.", trial->restarts,
                 labels(*trial));
  }
  for (const Trial* trial : live) {
    page.Counter("cohort_orchestrator_trial_exchanged_bytes_total",
                 "Bytes a trial's reporting rank handed to its gradient collectives.",
                 static_cast<double>(trial->exchanged_bytes), labels(*trial));
  }
  for (const Trial* trial : live) {
    page.Gauge("cohort_orchestrator_trial_batches_trained", "Batches a trial has trained.",
               static_cast<double>(trial->batches_trained), labels(*trial));
  }
  for (const Trial* trial : live) {
    page.Counter("cohort_orchestrator_trial_records_total",
                 "Records a trial has trained, from its latest progress (rate() gives records "
                 "per second; a rewind to a checkpoint reads as a counter reset).",
                 static_cast<double>(trial->records_trained), labels(*trial));
  }
  // Straggler scores of a live trial of several ranks, from its latest training report.
  std::vector<std::pair<const Trial*, RankPace>> paces;
  for (const Trial* trial : live) {
    const Experiment& experiment = *cluster.experiments.at(trial->experiment_id);
    for (const TrialRecord& record : experiment.record.trials) {
      if (record.id != trial->id || !record.latest_training) continue;
      for (const RankPace& pace : record.latest_training->ranks) paces.push_back({trial, pace});
    }
  }
  const auto rank_labels = [&labels](const Trial& trial, const RankPace& pace) {
    PrometheusText::Labels with_rank = labels(trial);
    with_rank.push_back({"rank", absl::StrCat(pace.rank)});
    return with_rank;
  };
  for (const auto& [trial, pace] : paces) {
    page.Gauge("cohort_orchestrator_trial_rank_step_seconds",
               "A rank's own work per batch (data, compute, optimizer step; waiting for the "
               "other ranks left out) over the latest training report.",
               pace.step_seconds, rank_labels(*trial, pace));
  }
  for (const auto& [trial, pace] : paces) {
    page.Gauge("cohort_orchestrator_trial_rank_vs_fastest",
               "The fastest rank's step time over this rank's (1: the fastest; a straggler is "
               "well below 1).",
               pace.vs_fastest, rank_labels(*trial, pace));
  }
  for (const auto& [trial, pace] : paces) {
    page.Gauge("cohort_orchestrator_trial_rank_vs_best",
               "A rank's best step time in its attempt over its latest one (1: at its best).",
               pace.vs_best, rank_labels(*trial, pace));
  }
  return page.Text();
}

}  // namespace cohort::orchestration
