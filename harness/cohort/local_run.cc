#include "harness/cohort/local_run.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "harness/cohort/worker_process.h"
#include "runtime/record/record_retention.h"
#include "runtime/trial/clock.h"

namespace cohort {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

absl::Status LocalRun::Rewind() {
  TrialRecord& trial = record_.trial(kSingleTrialId);
  trial.checkpoints.clear();
  absl::StatusOr<CheckpointInfo> latest = LatestCheckpoint(*storage_, kSingleTrialId);
  const uint64_t kept_batches = latest.ok() ? latest->batches_trained : 0;
  resume_from_ = latest.ok() ? latest->id : "";
  if (!latest.ok() && !absl::IsNotFound(latest.status())) return latest.status();

  // Replay the metrics up to the checkpoint; drop the rest from metrics.jsonl.
  const ExperimentRecord fresh = ExperimentRecord::For(config_);
  const uint32_t restarts = trial.restarts;
  record_ = fresh;
  record_.trial(kSingleTrialId).restarts = restarts;
  std::map<uint64_t, MetricsReport> validations;
  absl::StatusOr<std::vector<MetricsReport>> kept =
      TrimMetricsFile(folder_.metrics_path(kSingleTrialId), kSingleTrialId, kept_batches);
  if (!kept.ok()) return kept.status();
  for (const MetricsReport& report : *kept) {
    record_.Apply(report);
    if (report.kind == ReportKind::kValidation) validations[report.batches] = report;
  }
  absl::StatusOr<std::vector<CheckpointInfo>> stored = storage_->List();
  if (!stored.ok()) return stored.status();
  for (const CheckpointInfo& info : *stored) {
    if (info.trial_id != kSingleTrialId || info.batches_trained > kept_batches) continue;
    CheckpointEntry entry{info.id, info.batches_trained, std::nullopt};
    if (auto v = validations.find(info.batches_trained); v != validations.end()) {
      entry.metric = record_.SearcherMetricOf(v->second);
    }
    record_.trial(kSingleTrialId).checkpoints.push_back(entry);
  }
  record_.trial(kSingleTrialId).batches_trained = kept_batches;
  return absl::OkStatus();
}

void LocalRun::Save() {
  record_dirty_ = false;
  last_save_ = SystemClock().MonotonicSeconds();
  if (absl::Status status = WriteFileAtomically(folder_.experiment_json_path(), record_.ToJson());
      !status.ok()) {
    display_.Message(absl::StrCat("warning: ", status.message()));
  }
}

void LocalRun::ApplyRetention(bool trial_active) {
  for (const std::string& warning :
       ApplyRecordRetention(config_.checkpoint_storage, config_.searcher.smaller_is_better,
                            trial_active, *storage_, &record_)) {
    display_.Message(warning);
  }
}

void LocalRun::Announce(absl::string_view line) {
  display_.Message(line);
  if (absl::Status status = AppendLine(folder_.log_path(kSingleTrialId),
                                       absl::StrCat("[supervisor] ", line));
      !status.ok()) {
    display_.Message(absl::StrCat("warning: ", status.message()));
  }
}

void LocalRun::OnTick() {
  if (record_dirty_ && SystemClock().MonotonicSeconds() - last_save_ >= kMetricsSaveInterval) Save();
  for (const std::string& line : heartbeats_.Check(SystemClock().MonotonicSeconds())) {
    Announce(absl::StrCat("warning: ", line));
  }
}

void LocalRun::OnMessage(WorkerHub& hub, const std::string& peer, const WorkerMessage& message) {
  if (rendezvous_.Handle(hub, peer, message)) return;
  TrialRecord& trial = record_.trial(kSingleTrialId);
  if (const auto* hello = std::get_if<WorkerHello>(&message)) {
    ++hellos_;
    peer_ranks_[peer] = hello->rank;
    heartbeats_.Beat(hello->rank, hello->batches_trained, SystemClock().MonotonicSeconds());
    trial.total_batches = hello->total_batches;
    trial.state = RunState::kActive;
    Save();
  } else if (const auto* beat = std::get_if<Heartbeat>(&message)) {
    if (std::optional<std::string> resumed = heartbeats_.Beat(
            beat->rank, beat->batches_trained, SystemClock().MonotonicSeconds())) {
      Announce(*resumed);
    }
  } else if (const auto* metrics = std::get_if<MetricsReport>(&message)) {
    if (absl::Status status = AppendLine(folder_.metrics_path(kSingleTrialId), MetricsReportJson(*metrics));
        !status.ok()) {
      display_.Message(absl::StrCat("warning: ", status.message()));
    }
    record_.Apply(*metrics);
    display_.Metrics(*metrics);
    // experiment.json is rewritten (and fsynced) at most once a second for metrics alone; a fast
    // plugin may report hundreds of times a second.
    record_dirty_ = true;
  } else if (const auto* progress = std::get_if<ProgressReport>(&message)) {
    trial.batches_trained = progress->batches;
    display_.Update(*progress);
  } else if (const auto* checkpoint = std::get_if<CheckpointReport>(&message)) {
    record_.Apply(*checkpoint);
    ApplyRetention(/*trial_active=*/true);
    Save();
  } else if (const auto* finished = std::get_if<TrialFinished>(&message)) {
    finished_.push_back(*finished);
    // Its silence from now on is expected (the others may still be checkpointing).
    if (auto rank = peer_ranks_.find(peer); rank != peer_ranks_.end()) {
      heartbeats_.Forget(rank->second);
    }
  }
}

void LocalRun::ShowLogTail() {
  absl::StatusOr<std::string> log = ReadFile(folder_.log_path(kSingleTrialId));
  if (!log.ok()) return;
  std::vector<absl::string_view> lines = absl::StrSplit(*log, '\n', absl::SkipEmpty());
  const size_t first = lines.size() > 10 ? lines.size() - 10 : 0;
  std::fprintf(stderr, "last lines of %s:\n", folder_.log_path(kSingleTrialId).c_str());
  for (size_t i = first; i < lines.size(); ++i) {
    std::fprintf(stderr, "  | %.*s\n", static_cast<int>(lines[i].size()), lines[i].data());
  }
}

int LocalRun::Run() {
  absl::StatusOr<std::string> executable = SelfExecutable();
  if (!executable.ok()) return Fail(executable.status());
  TrialRecord* trial = &record_.trial(kSingleTrialId);
  int interrupts = 0;
  const uint32_t slots = config_.slots_per_trial;
  for (uint32_t attempt = 0;; ++attempt) {
    absl::StatusOr<std::unique_ptr<WorkerHub>> hub =
        WorkerHub::Bind("tcp://127.0.0.1:*", [this](absl::string_view why) {
          display_.Message(absl::StrCat("warning: dropped a malformed worker message: ", why));
        });
    if (!hub.ok()) return Fail(hub.status());
    std::vector<WorkerLaunch> launches;
    for (uint32_t rank = 0; rank < slots; ++rank) {
      WorkerLaunch launch{*executable,
                          {"worker", "--run-dir", folder_.path(), "--plugin", plugin_,
                           "--trial-id", absl::StrCat(kSingleTrialId), "--rank", absl::StrCat(rank),
                           "--size", absl::StrCat(slots), "--attempt", absl::StrCat(attempt),
                           "--endpoint", (*hub)->endpoint(), "--checkpoint-root",
                           checkpoint_root_},
                          folder_.log_path(kSingleTrialId)};
      if (!resume_from_.empty()) launch.args.insert(launch.args.end(), {"--resume", resume_from_});
      launches.push_back(std::move(launch));
    }
    if (!resume_from_.empty()) {
      display_.Message(absl::StrCat("trial ", kSingleTrialId, ": resuming from checkpoint ", resume_from_));
    }
    finished_.clear();
    hellos_ = 0;
    heartbeats_ = HeartbeatMonitor();
    peer_ranks_.clear();
    rendezvous_.Clear();
    record_.state = RunState::kActive;
    Save();
    WorkerHub& hub_ref = **hub;
    absl::StatusOr<WorkerOutcome> outcome = SuperviseWorkers(
        launches, hub_ref,
        [this, &hub_ref](const std::string& peer, const WorkerMessage& m) {
          OnMessage(hub_ref, peer, m);
        },
        [this] { OnTick(); });
    display_.Finish();
    if (!outcome.ok()) return Fail(outcome.status());
    interrupts += outcome->interrupts;
    trial = &record_.trial(kSingleTrialId);

    // The trial ended well only if every rank says so and none died.
    auto all_finished = [&](TrialExit exit) {
      if (finished_.size() != slots) return false;
      for (const TrialFinished& f : finished_) {
        if (f.exit != exit) return false;
      }
      for (const ChildExit& e : outcome->exits) {
        if (e.signaled) return false;
      }
      return true;
    };
    if (all_finished(TrialExit::kCompleted)) {
      trial->state = RunState::kCompleted;
      break;
    }
    if (all_finished(TrialExit::kStopped)) {
      trial->state = RunState::kStopped;
      break;
    }
    // The first failure a worker reported, else the first worker that died.
    trial->error.clear();
    for (const TrialFinished& f : finished_) {
      if (f.exit == TrialExit::kFailed && !f.message.empty()) {
        trial->error = f.message;
        break;
      }
    }
    bool crashed = false;
    for (size_t rank = 0; rank < outcome->exits.size() && trial->error.empty(); ++rank) {
      const ChildExit& e = outcome->exits[rank];
      if (e.signaled || e.code != 0) {
        trial->error = absl::StrCat("the worker", slots > 1 ? absl::StrCat(" of rank ", rank) : "",
                                    " ended without finishing: ", e.Describe());
        crashed = true;
      }
    }
    if (trial->error.empty()) trial->error = "the workers ended without finishing";
    display_.Message(absl::StrCat("trial ", kSingleTrialId, " failed: ", trial->error));
    // An error the workers reported before all of them said hello (a bad hyperparameter, a
    // plugin that does not load) would only happen again; a crash, or an error while training,
    // earns a restart.
    const bool may_restart = (crashed || hellos_ == slots) && interrupts == 0 &&
                             trial->restarts < config_.max_restarts;
    if (!may_restart) {
      trial->state = RunState::kError;
      ShowLogTail();
      break;
    }
    ++trial->restarts;
    const uint32_t restarts = trial->restarts;
    if (absl::Status status = Rewind(); !status.ok()) return Fail(status);
    trial = &record_.trial(kSingleTrialId);
    trial->restarts = restarts;
    display_.Message(absl::StrFormat("trial %d: restart %d of %d", kSingleTrialId, restarts,
                                     config_.max_restarts));
  }

  record_.state = trial->state;
  if (trial->state == RunState::kCompleted) ApplyRetention(/*trial_active=*/false);
  Save();
  std::printf("experiment %s: %s after %llu of %llu batches\n", record_.name.c_str(),
              RunStateName(record_.state), static_cast<unsigned long long>(trial->batches_trained),
              static_cast<unsigned long long>(trial->total_batches));
  if (trial->best_validation) {
    std::string metrics;
    for (const NamedValue& m : trial->best_validation->metrics) {
      absl::StrAppendFormat(&metrics, " %s=%.6g", m.name, m.value);
    }
    std::printf("  best validation (after %llu batches):%s\n",
                static_cast<unsigned long long>(trial->best_validation->batches), metrics.c_str());
  }
  for (const CheckpointEntry& c : trial->checkpoints) {
    std::printf("  checkpoint %s\n", c.id.c_str());
  }
  std::printf("  run folder: %s\n", folder_.path().c_str());
  if (trial->state == RunState::kStopped) {
    std::printf("  continue with: cohort run --resume %s\n", folder_.path().c_str());
    return 130;
  }
  return trial->state == RunState::kCompleted ? 0 : 1;
}

}  // namespace cohort
