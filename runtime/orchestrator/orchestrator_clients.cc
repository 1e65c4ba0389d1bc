// The Orchestrator's answers to clients (docs/protocol.md, client protocol): submissions and kills
// here, the read-only requests in cluster_queries.h.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/checkpoint/root_claim.h"
#include "runtime/config/trial_schedule.h"
#include "runtime/orchestrator/cluster_queries.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"
#include "runtime/orchestrator/trial_config.h"
#include "runtime/orchestrator/unknown_ids.h"
#include "runtime/record/experiment_record_reader.h"
#include "runtime/search/grid_points.h"

namespace cohort {
namespace {

// For a searched global_batch_size, whether some of its values are not multiples of
// slots_per_trial (those trials drop the remainder): a warning naming them, or the range.
std::optional<std::string> SearchedBatchRemainderWarning(const ExperimentConfig& config) {
  const uint32_t slots = config.slots_per_trial;
  if (slots <= 1) return std::nullopt;
  const HyperparameterSpace& space = config.hyperparameter_spaces.at("global_batch_size");
  std::vector<std::string> uneven;
  for (const Hyperparameters::Value& value : space.vals) {
    if (const int64_t* batch = std::get_if<int64_t>(&value); batch && *batch % slots != 0) {
      uneven.push_back(absl::StrCat(*batch));
    }
  }
  if (space.kind == HyperparameterSpace::Kind::kCategorical && uneven.empty()) return std::nullopt;
  return absl::StrCat("hyperparameters.global_batch_size: ",
                      uneven.empty() ? std::string("values in the searched range that are")
                                     : absl::StrCat(absl::StrJoin(uneven, ", "),
                                                    uneven.size() == 1 ? " is" : " are"),
                      " not a multiple of resources.slots_per_trial ", slots,
                      ": such a trial trains the largest multiple below its value in each batch "
                      "(and lengths in records or epochs count batches of that many)");
}

}  // namespace

// ---------------------------------------------------------------- clients

ClientMessage Orchestrator::OnClientRequest(const ClientMessage& request) {
  if (!IsClientRequest(request)) {
    return ClientError{ClientErrorCode::kInvalidRequest,
                       absl::StrCat(ClientMessageName(request), " is a reply, not a request")};
  }
  if (std::optional<ClientMessage> answer = orchestration::QueryReply(*cluster_, request)) {
    return *std::move(answer);  // read-only: nothing to place
  }
  ClientMessage reply = std::visit(
      [this](const auto& r) -> ClientMessage {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, SubmitExperiment>) {
          return Submit(r);
        } else if constexpr (std::is_same_v<T, KillExperiment>) {
          return Kill(r);
        } else if constexpr (std::is_same_v<T, ChangeExperiment>) {
          return Change(r);
        } else if constexpr (std::is_same_v<T, KillTrial>) {
          return KillOneTrial(r);
        } else if constexpr (std::is_same_v<T, DiagnoseTrial>) {
          return Diagnose(r);
        } else {
          return ClientAck{};  // unreachable: every other request is a query
        }
      },
      request);
  PlaceQueuedTasks();
  return reply;
}

absl::Status Orchestrator::CheckExperiment(const ExperimentConfig& config) {
  const uint32_t slots = config.slots_per_trial;
  if (config.global_batch_size < slots) {
    return absl::InvalidArgumentError(
        absl::StrCat("hyperparameters.global_batch_size: ", config.global_batch_size,
                     " is smaller than resources.slots_per_trial ", slots,
                     "; expected at least one record per slot"));
  }
  absl::StatusOr<SearcherLength> length = SearcherMaxLength(config);
  if (!length.ok()) return length.status();
  return CreateSearcher(config, length->value).status();
}

absl::Status Orchestrator::CheckSharedHostPath(const ExperimentConfig& config) {
  // Taken from each process's own working folder, a relative one would be a folder of its own on
  // every agent and on the orchestrator: checkpoints the orchestrator never finds nor removes.
  const std::string& host_path = config.checkpoint_storage.host_path;
  if (host_path.empty() || host_path.front() == '/') return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "checkpoint_storage.host_path: expected an absolute path, the shared storage as the "
      "orchestrator's and the agents' hosts see it; got '",
      host_path, "'"));
}

ClientMessage Orchestrator::Submit(const SubmitExperiment& submit) {
  auto invalid = [](absl::string_view message) {
    return ClientError{ClientErrorCode::kInvalidRequest, std::string(message)};
  };
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(submit.config_yaml);
  if (!config.ok()) return invalid(config.status().message());
  if (config->entrypoint.empty() || config->entrypoint.front() != '/') {
    return invalid(absl::StrCat(
        "entrypoint: expected an absolute plugin path as the agents' hosts see it; got '",
        config->entrypoint, "' (cohort submit resolves plugin names and relative paths)"));
  }
  if (absl::Status shared = CheckSharedHostPath(*config); !shared.ok()) {
    return invalid(shared.message());
  }
  if (!config->experiment_seed) {
    // Drawn once here and written into the config, so every task of every trial trains alike.
    const uint64_t seed = std::random_device{}() % 1000000000;
    config = ParseExperimentConfig(config->effective_yaml,
                                   {absl::StrCat("reproducibility.experiment_seed=", seed)});
    if (!config.ok()) return invalid(config.status().message());
  }
  Admission admission;
  admission.config = *std::move(config);
  return Admit(std::move(admission));
}

ClientMessage Orchestrator::Query(const ClientMessage& request) const {
  if (std::optional<ClientMessage> answer = orchestration::QueryReply(*cluster_, request)) {
    return *std::move(answer);
  }
  return ClientError{ClientErrorCode::kInvalidRequest,
                     absl::StrCat(ClientMessageName(request), " is not a read-only request")};
}

ClientMessage Orchestrator::SubmitLocal(LocalSubmission submission) {
  Admission admission;
  admission.config = std::move(submission.config);
  admission.folder = std::move(submission.folder);
  admission.checkpoint_root = std::move(submission.checkpoint_root);
  admission.resume = submission.resume;
  if (submission.resume) {
    // What its searcher was told before; a record that cannot be read was refused by the caller
    // (it would be written over), and one from before searcher events has none to replay.
    if (absl::StatusOr<ExperimentRecord> recorded =
            ReadExperimentRecord(admission.folder->experiment_json_path());
        recorded.ok()) {
      admission.searcher_events = std::move(recorded->searcher_events);
    }
  }
  ClientMessage reply = Admit(std::move(admission));
  PlaceQueuedTasks();
  return reply;
}

ClientMessage Orchestrator::Admit(Admission admission) {
  ExperimentConfig& config = admission.config;
  std::optional<RunFolder>& folder = admission.folder;
  std::string& checkpoint_root = admission.checkpoint_root;
  if (absl::Status checked = CheckExperiment(config); !checked.ok()) {
    return ClientError{ClientErrorCode::kInvalidRequest, std::string(checked.message())};
  }
  const uint32_t slots = config.slots_per_trial;
  ExperimentSubmitted submitted;
  absl::Status fits;
  if (options_.provisioner != nullptr) {
    fits = options_.provisioner->CheckCanEverFit(slots);
  } else if (const std::vector<AgentView> views = AgentViews(/*with_held=*/true); views.empty()) {
    submitted.warnings.push_back("no agent is connected yet: the trials wait for one");
  } else {
    fits = CheckCanEverFit(PlacementRequest{0, 0, slots}, views);
  }
  if (!fits.ok()) {
    return ClientError{ClientErrorCode::kUnschedulable,
                       absl::StrCat("resources.slots_per_trial: ", fits.message())};
  }
  for (const std::string& key : config.ignored_keys) {
    submitted.warnings.push_back(IgnoredKeyNote(config, key));
  }
  if (config.optimizations.mixed_precision != "O0") {
    // Determined's Apex levels: the plugin computes in its own tensors' dtypes.
    submitted.warnings.push_back(absl::StrCat(
        "optimizations.mixed_precision ", config.optimizations.mixed_precision,
        " changes nothing: Cohort trains in the dtypes the plugin registers its tensors in (a "
        "plugin computes in float16 or bfloat16 itself, as a LibTorch model under autocast "
        "does); only O0 has a meaning"));
  }
  if (config.searcher.name == "grid") {
    for (std::string& note : GridCountNotes(config.hyperparameter_spaces)) {
      submitted.warnings.push_back(std::move(note));
    }
  }
  if (options_.provisioner == nullptr) {
    const auto slurm_only = [&submitted](absl::string_view key) {
      submitted.warnings.push_back(absl::StrCat(
          key, " is used under `cohort orchestrator --resource-manager slurm` only: ignored here"));
    };
    if (!config.resource_pool.empty()) slurm_only("resources.resource_pool");
    if (!config.slurm_sbatch_args.empty()) slurm_only("slurm.sbatch_args");
  }
  if (!config.global_batch_size_searched) {
    // Each trial's lengths in batches, the same for all (records_per_epoch is required where
    // a length is in epochs).
    if (absl::StatusOr<TrialSchedule> schedule =
            MakeTrialSchedule(config, config.records_per_epoch.value_or(1));
        schedule.ok()) {
      for (std::string& note : AggregationWindowNotes(*schedule, MaxLengthKey(config.searcher))) {
        submitted.warnings.push_back(std::move(note));
      }
    }
  }
  if (!config.global_batch_size_searched) {
    if (std::optional<std::string> note = ShortEpochNote(config)) {
      submitted.warnings.push_back(*std::move(note));
    }
  }
  if (config.global_batch_size_searched) {
    if (std::optional<std::string> warning = SearchedBatchRemainderWarning(config)) {
      submitted.warnings.push_back(*std::move(warning));
    }
  } else if (config.global_batch_size % slots != 0) {
    const uint64_t per_slot = config.global_batch_size / slots;
    submitted.warnings.push_back(absl::StrCat(
        "hyperparameters.global_batch_size ", config.global_batch_size,
        " is not a multiple of resources.slots_per_trial ", slots, ": each slot trains ", per_slot,
        per_slot == 1 ? " record" : " records", ", so a global batch holds ", per_slot * slots,
        " (lengths and periods in records or epochs count batches of ", per_slot * slots, ")"));
  }

  // A new experiment's checkpoint folder is <storage root>/experiment-<id>: shared storage may
  // hold one of that name already (another orchestrator's experiment, or this one's from before
  // its state directory was made anew), whose checkpoints it would take for its own.
  const bool claims_root = !admission.id && !folder && checkpoint_root.empty();
  uint64_t id = admission.id.value_or(next_experiment_id_);
  if (claims_root) {
    absl::StatusOr<uint64_t> free = IdWithFreeCheckpointRoot(config, id);
    if (!free.ok()) {
      return ClientError{ClientErrorCode::kUnspecified, std::string(free.status().message())};
    }
    if (*free != id) {
      const bool one = *free - id == 1;
      submitted.warnings.push_back(absl::StrCat(
          "checkpoint_storage: ", DefaultCheckpointRoot(config, id),
          one ? " is not free: it holds"
              : absl::StrCat(" to experiment-", *free - 1, " are not free: they hold"),
          " what this orchestrator did not write (another orchestrator's checkpoints, or its own "
          "from before its state directory was made anew): this experiment is ",
          *free, ", whose folder there is free"));
    }
    id = *free;
    // Claimed before its run folder is made, so a claim that fails leaves nothing behind.
    if (absl::Status claimed =
            ClaimCheckpointRoot(DefaultCheckpointRoot(config, id), state_.ExperimentPath(id),
                                /*allow_claimed=*/false);
        !claimed.ok()) {
      return ClientError{ClientErrorCode::kUnspecified, std::string(claimed.message())};
    }
  }
  if (!folder) {
    absl::StatusOr<RunFolder> created = RunFolder::Create(state_.ExperimentPath(id));
    if (!created.ok()) {
      return ClientError{ClientErrorCode::kUnspecified, std::string(created.status().message())};
    }
    if (absl::Status written = WriteFileAtomically(created->config_path(), config.effective_yaml);
        !written.ok()) {
      return ClientError{ClientErrorCode::kUnspecified, std::string(written.message())};
    }
    folder = *std::move(created);
  }
  if (checkpoint_root.empty()) checkpoint_root = DefaultCheckpointRoot(config, id);
  const absl::StatusOr<SearcherLength> length = SearcherMaxLength(config);  // checked above
  absl::StatusOr<std::unique_ptr<Searcher>> searcher = CreateSearcher(config, length->value);
  next_experiment_id_ = std::max(next_experiment_id_, id + 1);

  auto experiment = std::make_unique<Experiment>();
  experiment->id = id;
  experiment->config = std::move(config);
  experiment->one_slot_fingerprint = OneSlotFingerprint(experiment->config);
  experiment->searcher = *std::move(searcher);
  experiment->submitted_unix =
      admission.submitted_unix > 0 ? admission.submitted_unix : clock_.UnixSeconds();
  experiment->folder = *std::move(folder);
  experiment->record = ExperimentRecord::For(experiment->config);
  experiment->checkpoint_root = std::move(checkpoint_root);
  experiment->searcher_counts_records = length->in_records;
  experiment->resume = admission.resume;
  if (admission.paused) experiment->state = ExperimentState::kPaused;
  experiment->recorded_trial_ids = std::move(admission.trial_ids);
  experiment->ended_trials = std::move(admission.ended_trials);
  Experiment& added = *cluster_->experiments.emplace(id, std::move(experiment)).first->second;
  Event(absl::StrCat("experiment ", id, " (", added.config.name, ") ",
                     admission.resume ? "resumed" : "submitted", ": ", added.config.searcher.name,
                     " searcher, ", slots, " slot", slots == 1 ? "" : "s", " per trial"));
  // Only a searcher whose decisions follow the results hears them again; the others' trials each
  // train to their target from their checkpoints, their workers checking them against the config.
  const std::vector<SearcherEvent> replayed = added.searcher->DecidesFromResults()
                                                  ? std::move(admission.searcher_events)
                                                  : std::vector<SearcherEvent>{};
  added.replaying = true;
  for (const SearcherEvent& event : replayed) {
    if (event.exited) added.exits_to_replay.insert(event.trial_id);
  }
  Apply(added, added.searcher->Start());
  ReplaySearcherEvents(added, replayed);
  added.replaying = false;
  StartTasksWithinLimits(added);
  MaybeEndExperiment(added);
  Save(added);
  submitted.experiment_id = id;
  return submitted;
}

std::string Orchestrator::DefaultCheckpointRoot(const ExperimentConfig& config, uint64_t id) const {
  const CheckpointStorageConfig& storage = config.checkpoint_storage;
  std::filesystem::path root(storage.host_path.empty() ? options_.checkpoint_root
                                                       : storage.host_path);
  if (!storage.host_path.empty() && !storage.storage_path.empty()) root /= storage.storage_path;
  return (root / absl::StrCat("experiment-", id)).string();
}

absl::StatusOr<uint64_t> Orchestrator::IdWithFreeCheckpointRoot(const ExperimentConfig& config,
                                                                uint64_t first) const {
  constexpr uint64_t kIdsTried = 1000;
  absl::Status refused;
  for (uint64_t id = first; id < first + kIdsTried; ++id) {
    refused = CheckCheckpointRootFree(DefaultCheckpointRoot(config, id), state_.ExperimentPath(id));
    if (refused.ok()) return id;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("checkpoint_storage: none of the checkpoint folders of experiments ", first,
                   " to ", first + kIdsTried - 1, " is free (the last: ", refused.message(),
                   "); give the experiment another checkpoint_storage.storage_path"));
}

ClientMessage Orchestrator::Kill(const KillExperiment& kill) {
  return StopExperiment(kill.experiment_id, "the experiment was killed");
}

ClientMessage Orchestrator::StopExperiment(uint64_t experiment_id, absl::string_view reason) {
  auto found = cluster_->experiments.find(experiment_id);
  if (found == cluster_->experiments.end()) {
    return UnknownExperiment(experiment_id);
  }
  Experiment& experiment = *found->second;
  if (!experiment.Going()) return ClientAck{};
  experiment.state = ExperimentState::kStopping;
  Event(absl::StrCat("experiment ", experiment.id, ": ", reason, "; stopping its trials"));
  for (const auto& [request_id, trial_id] : experiment.trials) {
    Trial& trial = *cluster_->trials.at(trial_id);
    if (trial.lifecycle.Stop()) SettleStop(trial, TrialState::kStopped, reason);
  }
  MaybeEndExperiment(experiment);
  return ClientAck{};
}

}  // namespace cohort
