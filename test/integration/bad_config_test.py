"""Every malformed config makes `cohort run` exit non-zero with a message naming the field, and
creates no run folder (a built-in optimizer's bad hyperparameters included, for a plugin without
an optimizer_step of its own), except what only the plugin's worker can tell (a searcher metric
it does not report)."""
import os

from cohort_cli import *

BASE = {
    "name": "bad",
    "entrypoint": plugin("mlp"),
    "hyperparameters": "\n  global_batch_size: 16\n  learning_rate: 0.1\n  synthetic_train_records: 64\n  synthetic_validation_records: 16",
    "searcher": "\n  name: single\n  metric: accuracy\n  max_length:\n    batches: 4",
}


def config_text(changes):
    """BASE with top-level sections replaced (None removes one) or added, as YAML text."""
    sections = dict(BASE)
    sections.update(changes)
    return "".join(f"{key}: {value}\n" for key, value in sections.items() if value is not None)


HP = BASE["hyperparameters"]
SEARCHER = "\n  metric: accuracy\n  max_length:\n    batches: 4"  # without a name

# (case, top-level changes, extra --set overrides, text every message must contain)
CASES = [
    ("no entrypoint", {"entrypoint": None}, [], "entrypoint"),
    ("unknown plugin name", {"entrypoint": "no_such_model"}, [], "entrypoint"),
    ("no searcher", {"searcher": None}, [], "searcher"),
    ("no searcher name", {"searcher": SEARCHER}, [], "searcher.name"),
    ("no searcher metric", {"searcher": "\n  name: single\n  max_length:\n    batches: 4"}, [], "searcher.metric"),
    ("no max_length", {"searcher": "\n  name: single\n  metric: accuracy"}, [], "searcher.max_length"),
    ("length in epochs without records_per_epoch",
     {"searcher": "\n  name: single\n  metric: accuracy\n  max_length:\n    epochs: 2"},
     [], "records_per_epoch"),
    ("max_length unit", {"searcher": "\n  name: single\n  metric: accuracy\n  max_length:\n    minutes: 3"}, [],
     "searcher.max_length"),
    ("max_length two units", {"searcher": "\n  name: single\n  metric: accuracy\n  max_length:\n    batches: 4\n    epochs: 1"},
     [], "searcher.max_length"),
    ("max_length negative", {}, ["searcher.max_length.batches=-5"], "searcher.max_length"),
    ("max_length text", {}, ["searcher.max_length.batches=many"], "searcher.max_length.batches"),
    ("searcher name", {"searcher": SEARCHER + "\n  name: bayesian_magic"}, [], "searcher.name"),
    ("smaller_is_better", {"searcher": SEARCHER + "\n  name: single\n  smaller_is_better: maybe"}, [],
     "searcher.smaller_is_better"),
    ("slots zero", {"resources": "\n  slots_per_trial: 0"}, [], "resources.slots_per_trial"),
    ("slots text", {"resources": "\n  slots_per_trial: two"}, [], "resources.slots_per_trial"),
    ("no global batch", {"hyperparameters": "\n  learning_rate: 0.1"}, [],
     "hyperparameters.global_batch_size"),
    ("global batch zero", {}, ["hyperparameters.global_batch_size=0"],
     "hyperparameters.global_batch_size"),
    ("global batch fraction", {}, ["hyperparameters.global_batch_size=3.5"],
     "hyperparameters.global_batch_size"),
    ("int space bounds", {"hyperparameters": HP + "\n  hidden_size:\n    type: int\n    minval: 64\n    maxval: 8"},
     [], "hyperparameters.hidden_size"),
    ("unknown space type", {"hyperparameters": HP + "\n  dropout:\n    type: gaussian\n    minval: 0\n    maxval: 1"},
     [], "hyperparameters.dropout.type"),
    ("empty categorical", {"hyperparameters": HP + "\n  act:\n    type: categorical\n    vals: []"},
     [], "hyperparameters.act.vals"),
    ("log base", {"hyperparameters": HP + "\n  wd:\n    type: log\n    minval: -4\n    maxval: -1\n    base: -10"},
     [], "hyperparameters.wd.base"),
    ("validation period unit", {"min_validation_period": "\n  weeks: 1"}, [],
     "min_validation_period"),
    ("checkpoint period type", {"min_checkpoint_period": "soon"}, [], "min_checkpoint_period"),
    ("scheduling unit zero", {"scheduling_unit": "0"}, [], "scheduling_unit"),
    ("records per epoch zero", {"records_per_epoch": "0"}, [], "records_per_epoch"),
    ("aggregation zero", {"optimizations": "\n  aggregation_frequency: 0"}, [],
     "optimizations.aggregation_frequency"),
    ("compression type", {"optimizations": "\n  gradient_compression: zip"}, [],
     "optimizations.gradient_compression"),
    ("storage type", {"checkpoint_storage": "\n  type: s3\n  bucket: b"}, [],
     "checkpoint_storage.type"),
    ("storage count", {"checkpoint_storage": "\n  save_trial_latest: -1"}, [],
     "checkpoint_storage.save_trial_latest"),
    ("max restarts", {"max_restarts": "-1"}, [], "max_restarts"),
    ("seed text", {"reproducibility": "\n  experiment_seed: abc"}, [],
     "reproducibility.experiment_seed"),
    ("initial validation", {"perform_initial_validation": "sometimes"}, [],
     "perform_initial_validation"),
    ("description type", {"description": "[1, 2]"}, [], "description"),
    ("top-level typo", {"searchr": "\n  metric: loss"}, [], "searchr"),
    ("yaml syntax", {"hyperparameters": "\n  global_batch_size: [16"}, [], "line"),
    ("bad --set", {}, ["no_equals_sign"], "no_equals_sign"),
    ("optimizer name", {}, ["hyperparameters.optimizer=rmsprop"], "optimizer"),
    ("learning rate", {}, ["hyperparameters.learning_rate=-0.1"], "learning_rate"),
    ("unreported metric", {"searcher": "\n  name: single\n  metric: f1_score\n  max_length:\n    batches: 4"},
     [], "searcher.metric"),
]

# Known only once the plugin has run: its worker refuses it, and the run folder records why.
CHECKED_BY_THE_WORKER = {"unreported metric"}

assert len(CASES) >= 25
failures = []
with temp_dir() as tmp:
    for index, (case, changes, overrides, needle) in enumerate(CASES):
        config = write_config(tmp, config_text(changes), f"case{index}.yaml")
        run_dir = os.path.join(tmp, f"run{index}")
        args = ["run", config, "--output", run_dir]
        for override in overrides:
            args += ["--set", override]
        code, out, err = run(*args, timeout=120)
        if code == 0 or needle not in err:
            failures.append(f"{case}: exit {code}, expected '{needle}' in:\n{err}")
        elif case in CHECKED_BY_THE_WORKER:
            pass
        elif os.path.exists(run_dir):
            failures.append(f"{case}: refused after making the run folder {run_dir}:\n{out}{err}")
        elif f"error: {config}{' as --set changes it' if overrides else ''}: " not in err:
            # Refused before anything ran: every message names the file, as the loader's do, and
            # the --set that made the error (each case's file alone is good).
            failures.append(f"{case}: the message does not start with the file's path and what "
                            f"made the error:\n{err}")
        elif code != 1:
            failures.append(f"{case}: exit {code}, expected 1")
check(not failures, "\n\n".join(failures))
print(f"ok: {len(CASES)} malformed configs refused")
