// LocalRun: the orchestrator `cohort run` embeds for one experiment on this machine.
//
// It runs the experiment's trial (the single searcher's one trial) as N worker processes, serves
// their rendezvous, records what they report (experiment.json, metrics.jsonl), applies checkpoint
// retention, restarts a failed trial from its latest checkpoint up to max_restarts times, and
// shows progress. A rank that sends no heartbeat for kSilentWarningSeconds is named in a warning
// on stderr and in the trial log (and again when it resumes); nothing is killed for it.
//
//   LocalRun run(config, folder, plugin_path, std::move(storage), checkpoint_root);
//   if (resuming) run.Rewind();
//   int exit_code = run.Run();   // 0 completed, 1 error, 130 stopped
//
// Thread-safety: not thread-safe.
#ifndef COHORT_HARNESS_COHORT_LOCAL_RUN_H_
#define COHORT_HARNESS_COHORT_LOCAL_RUN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/record/experiment_record.h"
#include "harness/cohort/progress_display.h"
#include "runtime/record/run_folder.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/config/experiment_config.h"
#include "runtime/control/heartbeat_monitor.h"
#include "runtime/control/rendezvous_service.h"
#include "runtime/control/worker_hub.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

// The single searcher runs one trial, with id 1.
inline constexpr uint64_t kSingleTrialId = 1;

// The embedded orchestrator for one experiment.
class LocalRun {
 public:
  LocalRun(ExperimentConfig config, RunFolder folder, std::string plugin,
           std::unique_ptr<CheckpointStorage> storage, std::string checkpoint_root)
      : config_(std::move(config)),
        folder_(std::move(folder)),
        plugin_(std::move(plugin)),
        storage_(std::move(storage)),
        checkpoint_root_(std::move(checkpoint_root)),
        record_(ExperimentRecord::For(config_)),
        display_(stderr) {}

  // Brings the record back to the trial's latest checkpoint (metrics after it are dropped:
  // the trial trains those batches again).
  absl::Status Rewind();
  int Run();

 private:
  void OnMessage(WorkerHub& hub, const std::string& peer, const WorkerMessage& message);
  // Warns about ranks that just fell silent.
  void OnTick();
  // `line` on stderr and in the trial log.
  void Announce(absl::string_view line);
  void ApplyRetention(bool trial_active);
  void Save();
  void ShowLogTail();

  ExperimentConfig config_;
  RunFolder folder_;
  std::string plugin_;
  std::unique_ptr<CheckpointStorage> storage_;
  std::string checkpoint_root_;
  ExperimentRecord record_;
  ProgressDisplay display_;
  RendezvousService rendezvous_;
  std::vector<TrialFinished> finished_;  // one per rank that finished this attempt
  size_t hellos_ = 0;
  HeartbeatMonitor heartbeats_;                 // of this attempt's ranks
  bool record_dirty_ = false;   // metrics applied to record_ since the last Save
  double last_save_ = 0;        // SystemClock().MonotonicSeconds() of the last Save
  static constexpr double kMetricsSaveInterval = 1.0;
  std::map<std::string, uint32_t> peer_ranks_;  // the rank each peer said hello as
  std::string resume_from_;
};

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_LOCAL_RUN_H_
