#include "harness/cohort/run/resume_checks.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/cohort/process/this_process.h"
#include "runtime/config/trial_schedule.h"
#include "runtime/orchestrator/trial_config.h"
#include "runtime/record/experiment_record.h"
#include "runtime/record/experiment_record_reader.h"
#include "yaml-cpp/yaml.h"

namespace cohort {
namespace {

// A resume goes on from the run's checkpoints where they are: one that looked elsewhere would find
// none and train every trial again from its start, beside the checkpoints it left.
absl::Status CheckSameCheckpointRoot(const StoredRun& stored, const ExperimentConfig& config,
                                     absl::string_view how) {
  const std::string kept = AbsolutePath(CheckpointRoot(stored.config, stored.folder));
  const std::string asked = AbsolutePath(CheckpointRoot(config, stored.folder));
  if (kept == asked) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      how, ": checkpoint_storage: the run in ", stored.folder.path(), " keeps its checkpoints in ",
      kept, ", and a resume goes on from them, but this config puts them in ", asked,
      "; resume with the run's host_path and storage_path, or start a new run (--output)"));
}

// The global batch size a recorded trial trained with: its hyperparameters' (a JSON object, which
// YAML reads; experiment.json holds every trial's).
std::optional<uint64_t> RecordedGlobalBatchSize(const TrialRecord& trial) {
  try {
    const YAML::Node size = YAML::Load(trial.hyperparameters_json)["global_batch_size"];
    if (size.IsScalar()) return size.as<uint64_t>();
  } catch (const YAML::Exception&) {
  }
  return std::nullopt;
}

// Under a searched global_batch_size each trial trains its own: another slot count must keep the
// records per batch of every trial's (CheckSlotChange judges the config's own value alone).
absl::Status CheckEachTrialsSlotChange(const StoredRun& stored, const ExperimentRecord& record,
                                       const ExperimentConfig& config, absl::string_view how) {
  if (!config.global_batch_size_searched ||
      stored.config.slots_per_trial == config.slots_per_trial) {
    return absl::OkStatus();
  }
  for (const TrialRecord& trial : record.trials) {
    if (trial.batches_trained == 0 && trial.checkpoints.empty()) continue;
    const std::optional<uint64_t> batch = RecordedGlobalBatchSize(trial);
    if (!batch) continue;
    ExperimentConfig before = stored.config;
    ExperimentConfig after = config;
    before.global_batch_size = after.global_batch_size = *batch;
    if (absl::Status slots = CheckSlotChange(before, after); !slots.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat(how, ": the run in ", stored.folder.path(), " cannot go on as asked: trial ",
                       trial.id, " trains a global_batch_size of its own: ", slots.message(),
                       "; or start a new run (--output)"));
    }
  }
  return absl::OkStatus();
}

// A resume trains each trial to its length under `config`. A trial whose latest checkpoint is past
// that length has trained more than asked: it would resume beyond its end and have no result
// there, so a resume can keep or lengthen searcher.max_length but not end a trial before its
// checkpoints.
absl::Status CheckLengthCoversCheckpoints(const StoredRun& stored, const ExperimentRecord& record,
                                          const ExperimentConfig& config, absl::string_view how) {
  absl::StatusOr<SearcherLength> length = SearcherMaxLength(config);
  if (!length.ok()) return length.status();
  for (const TrialRecord& trial : record.trials) {
    if (trial.checkpoints.empty()) continue;
    const CheckpointEntry& latest = trial.checkpoints.back();
    uint64_t target = length->value;
    if (length->in_records) {
      const std::optional<uint64_t> batch = RecordedGlobalBatchSize(trial);
      if (!batch || *batch == 0) continue;
      target = TrialBatches(length->value, /*in_records=*/true, *batch, config.slots_per_trial);
    }
    if (latest.batches <= target) continue;
    return absl::FailedPreconditionError(
        absl::StrCat(how, ": ", MaxLengthKey(config.searcher), " ends trial ", trial.id, " after ",
                     target, " batches, but the run in ", stored.folder.path(),
                     " already holds its checkpoint ", latest.id, " at batch ", latest.batches,
                     "; a resume can keep or raise it, not end a trial before what it has trained "
                     "(keep it at ",
                     latest.batches, " batches or more), or start a new run (--output)"));
  }
  return absl::OkStatus();
}

// A resume goes on from each trial's recorded checkpoints: a trial none of whose checkpoints is
// in the checkpoint root (deleted, moved, or looked for elsewhere) would train again from its
// start, silently. A damaged or partly missing one is the workers' to pass over.
absl::Status CheckRecordedCheckpointsThere(const StoredRun& stored, const ExperimentRecord& record,
                                           const ExperimentConfig& config, absl::string_view how) {
  const std::string root = AbsolutePath(CheckpointRoot(config, stored.folder));
  for (const TrialRecord& trial : record.trials) {
    if (trial.checkpoints.empty()) continue;
    const bool any = std::any_of(
        trial.checkpoints.begin(), trial.checkpoints.end(), [&](const CheckpointEntry& entry) {
          std::error_code error;
          return std::filesystem::is_directory(std::filesystem::path(root) / entry.id, error);
        });
    if (any) continue;
    const CheckpointEntry& latest = trial.checkpoints.back();
    return absl::FailedPreconditionError(absl::StrCat(
        how, ": the run in ", stored.folder.path(), " recorded ", trial.checkpoints.size(),
        " checkpoint(s) of trial ", trial.id, " (the latest ", latest.id, ", at batch ",
        latest.batches, "), but none of them is in ", root,
        ": a resume would train the trial again from its start; put them back there, or start a "
        "new run (--output)"));
  }
  return absl::OkStatus();
}

// A random search resumed with fewer trials (searcher.max_trials) than the run already has would
// leave the others out of its record, their metrics and checkpoints orphaned.
absl::Status CheckSearcherKeepsTrials(const StoredRun& stored, const ExperimentRecord& record,
                                      const ExperimentConfig& config, absl::string_view how) {
  if (config.searcher.name != "random") return absl::OkStatus();
  uint64_t highest = 0;
  for (const TrialRecord& trial : record.trials) highest = std::max(highest, trial.id);
  if (highest <= config.searcher.max_trials) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      how, ": the run in ", stored.folder.path(), " has trials up to trial ", highest,
      ", more than searcher.max_trials: ", config.searcher.max_trials,
      " keeps (the others would be left out of its record); resume with searcher.max_trials of ",
      highest, " or more, or start a new run (--output)"));
}

// The searcher settings a resume changes, each as "searcher.<key>: <was> before, <is> now".
struct SearcherChanges {
  std::vector<std::string> lines;
  void Note(absl::string_view key, const std::string& was, const std::string& is) {
    if (was != is)
      lines.push_back(absl::StrCat("searcher.", key, ": ", was, " before, ", is, " now"));
  }
  // The metric trials are ranked by, and which way.
  void NoteRanking(const SearcherConfig& before, const SearcherConfig& now) {
    Note("metric", before.metric, now.metric);
    Note("smaller_is_better", before.smaller_is_better ? "true" : "false",
         now.smaller_is_better ? "true" : "false");
  }
};

// What every searcher's choices so far rest on: the searcher itself (its trials' hyperparameters
// are its draws) and the metric it ranks them by, which also chose the checkpoints retention
// kept as each trial's best (under another, retention deletes them for the new ranking's).
absl::Status CheckSearcherRankingKept(const StoredRun& stored, const ExperimentConfig& config,
                                      absl::string_view how) {
  const SearcherConfig& before = stored.config.searcher;
  const SearcherConfig& now = config.searcher;
  // adaptive_asha's own check names these among the rest of its settings, in one refusal.
  if (before.name == "adaptive_asha" && now.name == "adaptive_asha") return absl::OkStatus();
  SearcherChanges changes;
  changes.Note("name", before.name, now.name);
  changes.NoteRanking(before, now);
  if (changes.lines.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      how, ": the run in ", stored.folder.path(),
      " chose its trials and kept their best checkpoints under another searcher or metric (",
      absl::StrJoin(changes.lines, "; "),
      "); resume with the run's own, or start a new run (--output)"));
}

// adaptive_asha's promotions so far were decided under the run's searcher settings, which its
// brackets and rungs derive from: a resume replays them only under the same.
absl::Status CheckAshaSettingsKept(const StoredRun& stored, const ExperimentRecord& record,
                                   const ExperimentConfig& config, absl::string_view how) {
  if (config.searcher.name != "adaptive_asha") return absl::OkStatus();
  if (!record.searcher_events_kept) {
    return absl::FailedPreconditionError(absl::StrCat(
        how, ": the run in ", stored.folder.path(),
        " cannot continue: its experiment.json was written before the searcher's events were "
        "kept, so adaptive_asha's promotions are unknown; start a new run (--output)"));
  }
  const SearcherConfig& before = stored.config.searcher;
  const SearcherConfig& now = config.searcher;
  SearcherChanges changes;
  changes.Note("max_length", DescribeLength(before.max_length), DescribeLength(now.max_length));
  changes.Note("max_trials", absl::StrCat(before.max_trials), absl::StrCat(now.max_trials));
  changes.Note("max_concurrent_trials", absl::StrCat(before.max_concurrent_trials),
               absl::StrCat(now.max_concurrent_trials));
  changes.Note("mode", std::string(PolicyName(before.mode)), std::string(PolicyName(now.mode)));
  changes.Note("divisor", absl::StrCat(before.divisor), absl::StrCat(now.divisor));
  changes.Note("max_rungs", absl::StrCat(before.max_rungs), absl::StrCat(now.max_rungs));
  changes.Note("bracket_rungs", absl::StrCat("[", absl::StrJoin(before.bracket_rungs, ", "), "]"),
               absl::StrCat("[", absl::StrJoin(now.bracket_rungs, ", "), "]"));
  changes.NoteRanking(before, now);
  if (changes.lines.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(how, ": the run in ", stored.folder.path(),
                   " decided its adaptive_asha promotions under other searcher settings (",
                   absl::StrJoin(changes.lines, "; "),
                   "); resume with the run's own, or start a new run (--output)"));
}

// A searcher's trials so far were drawn from the run's search space (a grid's points, a random
// search's draws, each trial's recorded values): a resume draws them again, and under another
// space it would record values its checkpoints were not trained with. The single searcher trains
// the values TrainingChanges compares.
absl::Status CheckSearchSpaceKept(const StoredRun& stored, const ExperimentConfig& config,
                                  absl::string_view how) {
  if (config.searcher.name == "single" || stored.config.searcher.name != config.searcher.name) {
    return absl::OkStatus();
  }
  // How the searcher reads a space: only the grid reads `count`.
  const auto shown = [&](const ExperimentConfig& of, const std::string& name) -> std::string {
    auto space = of.hyperparameter_spaces.find(name);
    if (space == of.hyperparameter_spaces.end()) return "not set";
    HyperparameterSpace read = space->second;
    if (config.searcher.name != "grid") read.count.reset();
    return DescribeSpace(read);
  };
  std::set<std::string> names;
  for (const ExperimentConfig* of : {&stored.config, &config}) {
    for (const auto& [name, space] : of->hyperparameter_spaces) names.insert(name);
  }
  std::vector<std::string> changes;
  for (const std::string& name : names) {
    const std::string was = shown(stored.config, name);
    const std::string is = shown(config, name);
    if (was != is) {
      changes.push_back(absl::StrCat("hyperparameters.", name, ": ", was, " before, ", is, " now"));
    }
  }
  if (changes.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      how, ": the run in ", stored.folder.path(), " drew its trials' hyperparameters from another ",
      config.searcher.name, " search space (", absl::StrJoin(changes, "; "),
      "), and its checkpoints hold what they trained; resume with the run's own space, or start "
      "a new run (--output)"));
}

// The checkpoints hold the tensors of the run's plugin: another would not take them.
absl::Status CheckSameEntrypoint(const StoredRun& stored, const ExperimentConfig& config,
                                 absl::string_view how) {
  if (stored.config.entrypoint == config.entrypoint) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      how, ": the run in ", stored.folder.path(), " trained plugin ", stored.config.entrypoint,
      " (entrypoint), and its checkpoints hold that plugin's tensors, but this config names ",
      config.entrypoint, "; resume with the run's entrypoint, or start a new run (--output)"));
}

// Whether the run trained anything: a batch or a checkpoint of any trial.
bool TrainedAnything(const ExperimentRecord& record) {
  return std::any_of(record.trials.begin(), record.trials.end(), [](const TrialRecord& trial) {
    return trial.batches_trained > 0 || !trial.checkpoints.empty();
  });
}

// A value of a hyperparameters object as it reads: `0.1`, `adam`, `[1, 2]`.
std::string ShownJsonValue(const YAML::Node& value) {
  return value.IsScalar() ? value.Scalar() : YAML::Dump(value);
}

// Whether the searcher draws hyperparameter `name` for each trial (the single searcher gives
// every trial the values config.hyperparameters holds).
bool Searched(const ExperimentConfig& config, const std::string& name) {
  if (config.searcher.name == "single") return false;
  auto space = config.hyperparameter_spaces.find(name);
  return space != config.hyperparameter_spaces.end() &&
         space->second.kind != HyperparameterSpace::Kind::kConst;
}

// The hyperparameters whose recorded values (each trial's, in experiment.json) differ from
// those `config` gives every trial (the searched ones each trial drew are left out), one line
// each: "hyperparameters.learning_rate: 0.1 in the record, 0.2 in config.yaml".
std::vector<std::string> RecordedHyperparameterChanges(const ExperimentRecord& record,
                                                       const ExperimentConfig& config) {
  std::set<std::string> lines;
  try {
    const YAML::Node now = YAML::Load(HyperparametersJson(config.hyperparameters));
    std::set<std::string> names_now;
    for (const auto& entry : now) names_now.insert(entry.first.as<std::string>());
    for (const TrialRecord& trial : record.trials) {
      const YAML::Node recorded = YAML::Load(trial.hyperparameters_json);
      if (!recorded.IsMap()) continue;
      std::set<std::string> names = names_now;
      for (const auto& entry : recorded) names.insert(entry.first.as<std::string>());
      for (const std::string& name : names) {
        if (Searched(config, name)) continue;
        const YAML::Node before = recorded[name];
        const YAML::Node after = now[name];
        const std::string was = before ? ShownJsonValue(before) : "not set";
        const std::string is = after ? ShownJsonValue(after) : "not set";
        if (was == is) continue;
        lines.insert(absl::StrCat("hyperparameters.", name, ": ", was, " in the record, ", is,
                                  " in config.yaml"));
      }
    }
  } catch (const YAML::Exception&) {
  }
  return {lines.begin(), lines.end()};
}

// The run folder's config.yaml is what the run last trained with, and its record holds the
// fingerprint of those settings: a config.yaml edited since would resume the checkpoints under
// settings they were not made with (the workers would then refuse them, failing every trial).
absl::Status CheckConfigAsRecorded(const StoredRun& stored, const ExperimentRecord& record,
                                   absl::string_view how) {
  const std::string now = TrainingFingerprint(stored.config);
  if (now == record.fingerprint) return absl::OkStatus();
  std::vector<std::string> changes = RecordedHyperparameterChanges(record, stored.config);
  if (changes.empty()) {
    changes.push_back(
        absl::StrCat("a training setting other than the hyperparameters the "
                     "record shows: fingerprint ",
                     record.fingerprint, " in the record, ", now, " in config.yaml"));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      how, ": the run in ", stored.folder.path(),
      " trained with settings its config.yaml no longer holds, and its checkpoints hold what they "
      "made (",
      absl::StrJoin(changes, "; "),
      "); put config.yaml back as the run wrote it, or start a new run (--output) with the new "
      "settings"));
}

}  // namespace

absl::Status CheckCanContinue(const StoredRun& stored, const ExperimentConfig& config,
                              absl::string_view how) {
  absl::StatusOr<ExperimentRecord> record =
      ReadExperimentRecord(stored.folder.experiment_json_path());
  if (absl::IsNotFound(record.status())) return absl::OkStatus();
  // A record that cannot be read would be written over by the resume's own: the trials'
  // metrics, checkpoints and states lost.
  if (!record.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        how, ": the run in ", stored.folder.path(), " has a record that cannot be read (",
        record.status().message(),
        "), which a resume would write over: put it back, or start a new run (--output)"));
  }
  if (!TrainedAnything(*record)) return absl::OkStatus();
  if (absl::Status as_recorded = CheckConfigAsRecorded(stored, *record, how); !as_recorded.ok()) {
    return as_recorded;
  }
  if (absl::Status same = CheckSameEntrypoint(stored, config, how); !same.ok()) return same;
  // The searcher and its space first: the settings below show a searched value as the single
  // searcher would choose it, which no trial of a search trained.
  if (absl::Status ranking = CheckSearcherRankingKept(stored, config, how); !ranking.ok()) {
    return ranking;
  }
  if (absl::Status space = CheckSearchSpaceKept(stored, config, how); !space.ok()) return space;
  // Another slot count alone may go on from the same checkpoints (CheckSlotChange says when).
  ExperimentConfig at_stored_slots = config;
  at_stored_slots.slots_per_trial = stored.config.slots_per_trial;
  if (const std::vector<std::string> changes = TrainingChanges(stored.config, at_stored_slots);
      !changes.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(how, ": the run in ", stored.folder.path(),
                     " was trained with other settings, and its checkpoints hold what they made (",
                     absl::StrJoin(changes, "; "),
                     "); resume with the run's own settings, or start a new run (--output)"));
  }
  if (absl::Status slots = CheckSlotChange(stored.config, config); !slots.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(how, ": the run in ", stored.folder.path(),
                                                      " cannot go on as asked: ", slots.message(),
                                                      "; or start a new run (--output)"));
  }
  if (absl::Status slots = CheckEachTrialsSlotChange(stored, *record, config, how); !slots.ok()) {
    return slots;
  }
  if (absl::Status same_root = CheckSameCheckpointRoot(stored, config, how); !same_root.ok()) {
    return same_root;
  }
  if (absl::Status there = CheckRecordedCheckpointsThere(stored, *record, config, how);
      !there.ok()) {
    return there;
  }
  if (absl::Status keeps = CheckSearcherKeepsTrials(stored, *record, config, how); !keeps.ok()) {
    return keeps;
  }
  if (absl::Status asha = CheckAshaSettingsKept(stored, *record, config, how); !asha.ok()) {
    return asha;
  }
  return CheckLengthCoversCheckpoints(stored, *record, config, how);
}

std::optional<std::string> SlotChangeNote(const StoredRun& stored, const ExperimentConfig& config) {
  const uint32_t before = stored.config.slots_per_trial;
  const uint32_t after = config.slots_per_trial;
  if (before == after || before == 0 || after == 0) return std::nullopt;
  absl::StatusOr<ExperimentRecord> record =
      ReadExperimentRecord(stored.folder.experiment_json_path());
  if (!record.ok() || !TrainedAnything(*record)) return std::nullopt;
  std::string note = absl::StrCat("the run in ", stored.folder.path(), " trained at ", before,
                                  before == 1 ? " slot" : " slots", "; it goes on at ", after);
  if (config.global_batch_size_searched) {
    absl::StrAppend(&note, ", each trial's global batch the same");
  } else {
    const uint64_t share = config.global_batch_size / after;
    absl::StrAppend(&note, ", each slot's share of a batch ", share,
                    share == 1 ? " record" : " records", " instead of ",
                    config.global_batch_size / before, " (the same ",
                    RecordsPerBatch(config.global_batch_size, after), " a batch)");
  }
  return note;
}

}  // namespace cohort
