// Worker: one rank of one trial, assembled. Create builds, in this order, what the rank trains
// with: the plugin's model on the slot's device, the built-in optimizer (unless the plugin steps
// with its own), the checkpoint storage, the collectives (Gloo for the host's work and CPU
// gradients, NCCL for gradients on a GPU), the gradient exchange, the watchdog, the timeline and
// the trial runner; given a checkpoint to resume, it restores it (or the newest whole one before
// it). Run trains to the end or to a stop.
//
// Whoever starts a worker turns its flags, environment and files into its options (`cohort worker`
// in harness/cohort/commands/worker_command.cc; tests and benchmarks directly) and owns what the
// worker talks to: the events it reports to and the rendezvous store its ranks meet through. Rank 0
// writes a line to stdout (the rank's log) for the exchange's plan and for a plan cut again;
// every rank writes one line saying where it starts.
//
//   WorkerOptions options;
//   options.config = *LoadExperimentConfig(run_dir + "/config.yaml");
//   options.plugin = plugin_path;  options.checkpoint_root = root;  options.trial_id = 3;
//   options.rank = rank;  options.size = 2;  options.rendezvous = &store;
//   options.group_prefix = "trial-3/";
//   options.events = &events;
//   absl::StatusOr<std::unique_ptr<Worker>> worker = Worker::Create(std::move(options));
//   absl::StatusOr<TrialExit> exit = (*worker)->Run();
//
// Thread-safety: one thread creates, runs and destroys a worker. The ranks of a trial wait for one
// another in Create and Run, so ranks in one process each need a thread of their own.
#ifndef COHORT_RUNTIME_WORKER_WORKER_H_
#define COHORT_RUNTIME_WORKER_WORKER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/arena/default_memory_provider.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/collective/rendezvous_store.h"
#include "runtime/config/experiment_config.h"
#include "runtime/exchange/gradient_exchange.h"
#include "runtime/observe/flight_record.h"
#include "runtime/observe/trace_writer.h"
#include "runtime/optim/optimizer.h"
#include "runtime/plugin/loaded_model.h"
#include "runtime/plugin/plugin_library.h"
#include "runtime/trial/trial_events.h"
#include "runtime/trial/trial_phase.h"
#include "runtime/trial/trial_runner.h"
#include "runtime/worker/rank_watchdog.h"
#include "runtime/worker/worker_device.h"

namespace cohort {

struct WorkerOptions {
  // The experiment's configuration; reproducibility.experiment_seed must be set.
  ExperimentConfig config;
  std::string plugin;           // the plugin library's path
  std::string checkpoint_root;  // shared_fs checkpoints; timelines go there too
  std::string resume;           // a checkpoint id to continue from; empty: from the beginning
  // Validate at `resume` before training when it is at the trial's end (StartTask's
  // validate_at_resume: the orchestrator has no validation there).
  bool validate_at_resume = false;
  uint64_t trial_id = 0;
  // The trial's number within its experiment (WorkerSpec.trial_number), which its seed derives
  // from, so that an experiment trains the same on any orchestrator; 0: the trial id.
  uint64_t trial_number = 0;
  uint64_t task_id = 0;  // names this attempt's flight records (observe/flight_files.h)
  uint32_t rank = 0;
  uint32_t size = 1;     // the trial's slots; rank < size
  uint32_t attempt = 0;  // restarts of the trial before this one
  std::string device;    // as COHORT_DEVICE: "cuda:0", "cpu"; empty is the CPU
  // With size > 1: where the ranks meet, and the prefix their groups' keys take there; each
  // attempt needs a prefix of its own, so that a restart never reads a stale address.
  RendezvousStore* rendezvous = nullptr;
  std::string group_prefix;
  std::string gloo_hostname;  // the address Gloo binds; empty: this host's name
  // At one slot: exchange the gradients anyway, in a group of one rank (one_slot_exchange.h).
  bool exchange_at_one_slot = false;
  TrialEvents* events = nullptr;  // required; outlives the worker
  // Whether the process was asked to stop; the watchdog calls it from its own thread.
  std::function<bool()> stop_signalled = [] { return false; };
};

class Worker {
 public:
  // Everything above, built in order; the first failure is returned.
  static absl::StatusOr<std::unique_ptr<Worker>> Create(WorkerOptions options);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Trains from where Create left the trial: to the end (kCompleted) or to a stop (kStopped).
  absl::StatusOr<TrialExit> Run() { return runner_->Run(); }

  TrialRunner& runner() { return *runner_; }
  LoadedModel& model() { return *model_; }
  Optimizer* optimizer() { return optimizer_.get(); }       // nullptr: the plugin's own optimizer
  GradientExchange* exchange() { return exchange_.get(); }  // nullptr at one slot, unless asked
  // The group the gradients move through (NCCL on a GPU, else the host group); nullptr when the
  // worker exchanges none.
  CollectiveBackend* gradient_collective() {
    return gradient_collective_ ? gradient_collective_.get() : collective_.get();
  }

 private:
  explicit Worker(WorkerOptions options) : options_(std::move(options)) {}

  absl::Status BuildModel();
  absl::Status BuildOptimizer();
  absl::Status FormGroups();
  std::unique_ptr<CollectiveBackend> Recorded(std::unique_ptr<CollectiveBackend> group,
                                              uint8_t flight_group);
  absl::Status BuildExchange();
  absl::Status OpenTimeline();
  absl::Status BuildRunner();
  absl::Status Resume();
  // Whether the plugin put its tensors on the slot's GPU (a plugin may keep them on the host).
  bool on_gpu() const;

  // Members are destroyed bottom up: the runner first, then the exchange (its reducers use the
  // collectives, the arena and the device), the device last but for the plugin's library.
  const WorkerOptions options_;
  uint64_t trial_seed_ = 0;
  std::shared_ptr<const PluginLibrary> plugin_;
  WorkerDevice device_;
  DefaultMemoryProvider memory_;
  std::unique_ptr<LoadedModel> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<CheckpointStorage> storage_;
  // size > 1: this rank's flight record, which the groups below write every collective to.
  std::unique_ptr<FlightRecorder> flight_;
  std::unique_ptr<CollectiveBackend> collective_;           // the host group (size > 1)
  std::unique_ptr<CollectiveBackend> gradient_collective_;  // NCCL, or a group of one rank
  // ZeRO with asynchronous checkpoints: the optimizer shards' way to rank 0 (size > 1).
  std::unique_ptr<CollectiveBackend> checkpoint_collective_;
  PhaseBoard phases_;
  std::optional<RankWatchdog> watchdog_;
  std::unique_ptr<TraceWriter> trace_;
  std::unique_ptr<GradientExchange> exchange_;
  std::unique_ptr<TrialRunner> runner_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_WORKER_WORKER_H_
