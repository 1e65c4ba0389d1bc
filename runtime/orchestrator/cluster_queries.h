// What the orchestrator answers without changing anything: the client protocol's read-only
// requests (describe, the experiment, task, agent and checkpoint lists, a trial's description and
// logs), the scaling
// comparison with a 1-slot experiment, and the Prometheus page, each a function of the Cluster
// (orchestrator_state.h), so each is tested on a cluster built by hand.
//
//   ClientMessage reply = DescribeExperimentReply(cluster, DescribeExperiment{3});
//
// Thread-safety: pure functions of their arguments.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_CLUSTER_QUERIES_H_
#define COHORT_RUNTIME_ORCHESTRATOR_CLUSTER_QUERIES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/client/client_messages.h"
#include "runtime/orchestrator/orchestrator_state.h"

namespace cohort::orchestration {

// The reply to a read-only request (DescribeExperiment, ListExperiments, ListTasks, ListAgents,
// TrialLogsRequest, DescribeTrial, ListCheckpoints); nullopt for a request that changes something.
std::optional<ClientMessage> QueryReply(const Cluster& cluster, const ClientMessage& request);

// The experiment's row: its state, progress and trials by outcome. Progress is the searcher's, or,
// where the search's batches are known from the start (single, grid, random), the batches its
// trials trained over them when that is further (so it moves while a trial trains).
ExperimentSummary SummarizeExperiment(const Cluster& cluster, const Experiment& experiment);

// ExperimentDescription (its trials in id order, with their latest metrics, best searcher metric
// and scaling efficiency), or ClientError kNotFound for an unknown id.
ClientMessage DescribeExperimentReply(const Cluster& cluster, const DescribeExperiment& request);

// The trial's row: state (queued trials of a paused experiment show as paused), progress, latest
// metrics, best searcher metric and scaling efficiency.
TrialSummary SummarizeTrial(const Cluster& cluster, const Experiment& experiment,
                            const Trial& trial);

// Every experiment, archived ones only when the request includes them.
ExperimentList ListExperimentsReply(const Cluster& cluster, const ListExperiments& request);

// TrialDescription: the trial's summary, every validation in its metrics.jsonl and its
// checkpoints; ClientError kNotFound for an unknown trial (trial_queries.cc).
ClientMessage DescribeTrialReply(const Cluster& cluster, const DescribeTrial& request);

// The checkpoints kept of an experiment's trials, or of one trial, each with its folder and size
// (read from its experiment's storage); ClientError kNotFound for an unknown experiment or trial
// (trial_queries.cc).
ClientMessage ListCheckpointsReply(const Cluster& cluster, const ListCheckpoints& request);

// Every task, queued ones with the reason they wait.
TaskListing ListTasksReply(const Cluster& cluster);

// Every agent with its slots, busy slots and the tasks holding them.
AgentTable ListAgentsReply(const Cluster& cluster);

// The trial's lines after request.after_sequence (at most request.max_lines, 1,000 when 0, never
// more than 10,000), with trial_ended once it has ended, has no task and every kept line was
// sent; ClientError kNotFound for an unknown trial, kInvalidRequest for a rank below -1.
ClientMessage TrialLogsReply(const Cluster& cluster, const TrialLogsRequest& request);

// The 1-slot experiment of the same training config as `experiment` (same OneSlotFingerprint:
// hyperparameters, global batch, seed and maths), the newest with a training throughput: its id
// and the median of its trials' latest records/s. nullopt for a 1-slot experiment, or when the
// cluster knows no such experiment.
struct ScalingBaseline {
  uint64_t experiment_id = 0;
  double records_per_second = 0;
};
std::optional<ScalingBaseline> ScalingBaselineOf(const Cluster& cluster,
                                                 const Experiment& experiment);

// records_per_second / (slots_per_trial x the baseline's records/s), naming the baseline in
// *baseline_id when given; nullopt without a baseline or a throughput.
std::optional<double> ScalingEfficiency(const Cluster& cluster, const Experiment& experiment,
                                        double records_per_second, uint64_t* baseline_id = nullptr);

// The orchestrator's Prometheus page at monotonic time `now` (see Orchestrator::MetricsPage).
std::string ClusterMetricsPage(const Cluster& cluster, double now);

}  // namespace cohort::orchestration

#endif  // COHORT_RUNTIME_ORCHESTRATOR_CLUSTER_QUERIES_H_
