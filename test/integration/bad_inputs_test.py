"""The table of bad inputs: each one makes Cohort refuse or fail with a message a user can act on,
checked here by its text. Plugins the loader must refuse (`cohort plugin info`), plugins that
fail, return errors or crash at run time, configs (`cohort run`, beyond the 40 field checks of
bad_config_test.py) and run folders that cannot be resumed. Faults of the trial's machinery
(killed workers, hangs, out-of-step ranks, damaged checkpoints, unknown peers) have their own
tests: docs/reliability.md lists them all."""
import json
import os
import shutil
import subprocess

from cohort_cli import *

TEST_PLUGINS = os.path.join(PLUGINS, "test")


def defect(name):
    return os.path.join(TEST_PLUGINS, f"defect_{name}.so")


def header_minor():
    """The ABI minor the SDK header (and so this host) defines."""
    header = os.path.join(os.path.dirname(__file__), "..", "..", "sdk", "include", "cohort",
                          "plugin.h")
    with open(header) as f:
        for line in f:
            if line.startswith("#define COHORT_ABI_VERSION_MINOR "):
                return int(line.split()[2])
    raise AssertionError(f"no COHORT_ABI_VERSION_MINOR in {header}")


MINOR = header_minor()


# (case, plugin path, text the refusal must contain)
REFUSED_PLUGINS = [
    ("no entry symbol", defect("no_entry"), "entry symbol 'cohort_plugin_entry' not found"),
    ("entry returns NULL", defect("null_table"), "cohort_plugin_entry returned NULL"),
    ("table too small for a version", defect("tiny_table"),
     "too small to hold even its ABI version"),
    ("another ABI major", defect("other_major"),
     f"built for Cohort ABI 2.3, but this host implements ABI 1.{MINOR}; the major versions must match"),
    ("table smaller than ABI 1.0's", defect("small_table"), "smaller than the 112 bytes of ABI 1.0"),
    ("table larger than its ABI's", defect("huge_table"),
     f"plugin table struct_size is 100000 bytes, but ABI 1.{MINOR}'s cohort_plugin_api has 112"),
    ("needs a newer host", defect("newer_host"),
     f"needs a host of ABI 1.{MINOR + 7} or later, but this host implements ABI 1.{MINOR}"),
    ("required functions missing", defect("missing_functions"),
     "required functions train_batch, evaluate_batch missing"),
    ("no name", defect("no_name"), "the plugin table has no name"),
    ("save_state without load_state", defect("half_state"),
     "save_state is set without load_state"),
    # Opened in a child process first: the command says how the plugin ended it, rather than
    # dying with it (or, for exit(0), ending without a word and status 0).
    ("crashes as it loads", defect("crash_on_load"),
     "crashed while it loaded: killed by signal 11 (SIGSEGV"),
    ("ends its process as it loads", defect("exit_on_load"),
     "ended its process while it loaded (exit code 0): a plugin must not call exit()"),
    ("no such file", "/nonexistent/model.so", "file not found"),
    ("not a shared library", os.path.abspath(__file__), "not a loadable shared library"),
]

QUADRATIC = os.path.join(TEST_PLUGINS, "c_quadratic.so")


def config_text(entrypoint=QUADRATIC, extra_hyperparameters="", extra=""):
    return f"""\
name: bad-input
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 2
  learning_rate: 0.1{extra_hyperparameters}
searcher:
  name: single
  metric: loss
  max_length:
    batches: 4
max_restarts: 0
{extra}"""


# (case, config text, extra --set overrides, text the failed run's output must contain)
FAILED_RUNS = [
    ("plugin registers no tensors", config_text(defect("no_tensors")), [],
     "model_create returned without registering its tensors"),
    ("plugin reports no loss", config_text(defect("no_loss")), [],
     'did not report the metric "loss"'),
    # Under the sanitizers, AddressSanitizer reports the crash and aborts.
    ("plugin crashes", config_text(defect("crash_in_train")), [],
     "killed by signal 6 (SIGABRT)" if os.environ.get("COHORT_EXPECT_SANITIZER")
     else "killed by signal 11 (SIGSEGV)"),
    # A process that ends before its trial did is no success, whatever its exit code; and only
    # Cohort's worker means its exit code 3 (a failure every attempt would meet again). Under the
    # sanitizers an exit() from the middle of training may end in their report instead (an abort):
    # a failure of rank 0 all the same.
    ("plugin exits 0 in the middle of training",
     config_text(extra_hyperparameters="\n  exit_batch: 2"), [],
     "rank 0 " if SANITIZED else "exited with code 0 (exit code 0 without finishing the trial)"),
    ("plugin exits 3 in the middle of training",
     config_text(extra_hyperparameters="\n  exit_batch: 2\n  exit_code: 3"), [],
     "rank 0 " if SANITIZED else "exited with code 3 (exit code 3 without finishing the trial)"),
    # gradients_ready breaks the contract: the batch fails though the plugin dropped the error, at
    # one slot as at several (below).
    ("plugin reports a gradient range twice",
     config_text(extra_hyperparameters="\n  ready_twice: 1"), [],
     "gradients_ready: tensor 'x', range [2, 2+1) overlaps range [0, 3) reported ready before"),
    ("plugin reports gradients from evaluate_batch",
     config_text(extra_hyperparameters="\n  ready_in_eval: 1"), [],
     "gradients_ready may only be called during train_batch"),
    ("plugin reports its loss over no records",
     config_text(extra_hyperparameters="\n  loss_over_no_records: 1"), [],
     'reported "loss" over 0 records of a batch of 2'),
    ("hyperparameter of the wrong type", config_text(extra_hyperparameters="\n  init: abc"), [],
     "hyperparameter 'init' is a string (\"abc\"), not a double"),
    ("searcher metric the plugin does not report", config_text(),
     ["searcher.metric=accuracy"], "'accuracy' is not among the validation metrics"),
    ("plugin with no validation records",
     config_text(os.path.join(PLUGINS, "mlp", "mlp.so"),
                 "\n  synthetic_validation_records: 0"), [],
     # before it trains (it used to train to its first validation first)
     "searcher.metric: 'loss' cannot be validated: plugin mlp has no validation records "
     "(dataset_size of its validation split is 0)"),
    ("non-finite gradient with fail", config_text(extra_hyperparameters="\n  nan_batch: 2"),
     ["optimizations.nonfinite_gradients=fail"],
     "batch 2: the gradient is not finite (tensor 'x' element 0 is nan)"),
    ("misspelt key", config_text(), ["optimizations.aggregation_frequncy=2"],
     "optimizations.aggregation_frequncy: unknown key; did you mean 'aggregation_frequency'?"),
    ("more slots than records per batch", config_text(), ["resources.slots_per_trial=4"],
     "hyperparameters.global_batch_size: expected an integer from resources.slots_per_trial (4)"),
    ("checkpoint storage that cannot be made", config_text(),
     ["checkpoint_storage.host_path=/proc/nope"],
     "checkpoint_storage.host_path: /proc/nope cannot hold the checkpoints: no folder can be made "
     "in /proc"),
    ("unsupported checkpoint storage", config_text(), ["checkpoint_storage.type=s3"],
     "Determined's s3 storage is not supported"),
    ("unknown compression", config_text(), ["optimizations.gradient_compression={type: zip}"],
     'unknown compression "zip"'),
    ("unknown non-finite policy", config_text(), ["optimizations.nonfinite_gradients=retry"],
     "optimizations.nonfinite_gradients: expected one of ignore, skip, fail; got 'retry'"),
    ("collective timeout of zero", config_text(), ["optimizations.collective_timeout=0"],
     "optimizations.collective_timeout: expected an integer >= 1; got 0"),
    ("YAML syntax error", "name: [unclosed\n", [], "YAML syntax error at line 2"),
    ("unknown optimizer", config_text(), ["hyperparameters.optimizer=rmsprop"],
     "hyperparameter 'optimizer' = \"rmsprop\" is not a known optimizer; known: sgd, adam, adamw"),
    ("no such plugin", config_text(), ["entrypoint=no_such_model"], "no plugin 'no_such_model'"),
    ("Determined's Python entrypoint", config_text(), ["entrypoint=model_def:MNistTrial"],
     "no plugin 'model_def:MNistTrial'; looked for "),
    ("Determined's Python entrypoint, its hint", config_text(),
     ["entrypoint=python3 -m determined.launch.torch_distributed python3 train.py"],
     ". Python entrypoints (a Trial class as module:Class, a script or a launcher command) do not "
     "run in Cohort: a model is a plugin, a shared library built against the SDK (docs/sdk.md), "
     "named by its plugin name or its .so file"),
    ("a folder named like a plugin", config_text(), ["entrypoint=folder.so"],
     "folder.so is a folder, not a plugin (a .so file)"),
    ("a length past 64 bits of records", config_text(),
     ["records_per_epoch=1099511627776", "searcher.max_length={epochs: 1099511627776}"],
     "searcher.max_length: 1099511627776 epochs comes to more than 281474976710656 batches"),
    # Keys of the built-in optimizer alone, beside a plugin that steps its own: refused before
    # the run starts (they used to shard nothing and fail the trial, or to scale nothing).
    ("learning-rate scaling beside the plugin's own optimizer",
     config_text(os.path.join(TEST_PLUGINS, "cpp_layer.so")),
     ["optimizations.learning_rate_scaling=linear"],
     "optimizations.learning_rate_scaling linear scales the built-in optimizer's learning rate, "
     "but plugin cpp_layer steps its own optimizer (optimizer_step)"),
    ("ZeRO beside the plugin's own optimizer",
     config_text(os.path.join(TEST_PLUGINS, "cpp_layer.so")), ["optimizations.zero_stage=1"],
     "optimizations.zero_stage 1 shards the built-in optimizer, but plugin cpp_layer steps its "
     "own optimizer"),
    ("negative max_restarts", config_text(), ["max_restarts=-1"],
     "max_restarts: expected an integer >= 0; got -1"),
]

def resumes_from_its_config(folder, kept_line, said, what):
    """The run folder's config.yaml holds `kept_line` (a path made absolute), and a resume to 6
    batches from here says `said`."""
    kept = read_bytes(os.path.join(folder, "config.yaml")).decode()
    check(kept_line in kept, kept)
    code, out, err = run("run", "--resume", folder, "--set", "searcher.max_length.batches=6")
    check(code == 0 and said in out + err, f"resuming {what}: exit {code}:\n{out}\n{err}")


count = 0
for case, path, text in REFUSED_PLUGINS:
    code, out, err = run("plugin", "info", path)
    check(code != 0 and text in err, f"{case}: exit {code}, expected '{text}' in:\n{out}\n{err}")
    count += 1


with temp_dir() as tmp:
    # `cohort run` opens the plugin before anything is made: one that does not open is refused
    # as `plugin info` refuses it, and no run folder is left (one used to be made, its trial
    # failing in its worker).
    for case, path, text in REFUSED_PLUGINS:
        if not os.path.exists(path):
            continue  # named as the entrypoint that finds no plugin
        config = write_config(tmp, config_text(path), file_name="refused_plugin.yaml")
        folder = os.path.join(tmp, "refused_plugin")
        code, out, err = run("run", config, "--output", folder)
        check(code == 1 and "refused_plugin.yaml: entrypoint: " in err and text in err,
              f"{case} under cohort run: exit {code}, expected '{text}' in:\n{err}")
        check(not os.path.exists(folder), f"{case}: cohort run made {folder}")
        count += 1
    os.makedirs(os.path.join(tmp, "folder.so"))  # beside the configs: a folder, not a plugin
    for case, text_of_config, sets, text in FAILED_RUNS:
        name = case.replace(" ", "_")
        config = write_config(tmp, text_of_config, file_name=f"{name}.yaml")
        args = ["run", config, "--output", os.path.join(tmp, name)]
        for s in sets:
            args += ["--set", s]
        code, out, err = run(*args)
        check(code == 1, f"{case}: exit {code}:\n{out}\n{err}")
        check(text in err, f"{case}: expected '{text}' in:\n{err}")
        # A trial that failed says why in its record too, even when its worker failed before it
        # could say hello.
        if os.path.exists(os.path.join(tmp, name, "experiment.json")):
            error = experiment(os.path.join(tmp, name))["trials"][0]["error"]
            check(text in error, f"{case}: expected '{text}' in the trial's error: {error}")
            if case == "plugin with no validation records":
                trained = experiment(os.path.join(tmp, name))["trials"][0]["batches_trained"]
                check(trained == 0, f"{case}: trained {trained} batches before it failed")
        count += 1
    for refused in ("learning-rate_scaling_beside_the_plugin's_own_optimizer",
                    "ZeRO_beside_the_plugin's_own_optimizer"):
        check(not os.path.exists(os.path.join(tmp, refused)),
              f"{refused}: the refused run made its folder")
    # More slots than the run offers: the count it offers, and where it comes from.
    config = write_config(tmp, config_text(), file_name="wide.yaml")
    for extra, said in (([], "slots, but this machine offers "),
                        (["--cpu-slots", "1"],
                         "slots, but this run offers 1 CPU slot (--cpu-slots 1)")):
        code, out, err = run("run", config, "--output", os.path.join(tmp, "wide"), "--set",
                             "hyperparameters.global_batch_size=4096", "--set",
                             "resources.slots_per_trial=4096", *extra)
        check(code == 1 and f"wide.yaml: resources.slots_per_trial: 4096 {said}" in err,
              f"{extra}: exit {code}:\n{out}\n{err}")
        check(not os.path.exists(os.path.join(tmp, "wide")), "the refused run made its folder")
    exited = experiment(os.path.join(tmp, "plugin_exits_3_in_the_middle_of_training"))["trials"][0]
    check("not restarted" not in exited["error"],
          f"a plugin's exit(3) was taken for a permanent failure: {exited}")

    # A run resumed with settings that change the numbers refuses its checkpoint.
    changed = os.path.join(tmp, "changed")
    config = write_config(tmp, config_text(), file_name="changed.yaml")
    code, out, err = run("run", config, "--output", changed)
    check(code == 0, f"exit {code}:\n{out}\n{err}")
    # A failure every attempt would meet fails at once, without a restart, before training:
    # searcher.metric names a metric the plugin does not report (Determined's examples say
    # validation_error).
    missing = os.path.join(tmp, "missing_metric")
    config = write_config(tmp, config_text(), file_name="missing_metric.yaml")
    code, out, err = run("run", config, "--output", missing, "--set",
                         "searcher.metric=validation_error", "--set", "max_restarts=5")
    trial = experiment(missing)["trials"][0]
    text = "searcher.metric: 'validation_error' is not among the validation metrics"
    check(code == 1 and text in trial["error"] and "not restarted" in trial["error"],
          f"missing searcher.metric: exit {code}, error {trial['error']!r}:\n{err}")
    check(trial["restarts"] == 0 and trial["batches_trained"] == 0,
          f"missing searcher.metric: restarted {trial['restarts']} times after "
          f"{trial['batches_trained']} batches")
    count += 1

    # A plugin that breaks gradients_ready's contract at 2 slots, where the exchange runs, fails
    # as at one, and at once: every attempt would break it the same way.
    twice = os.path.join(tmp, "ready_twice_2_slots")
    config = write_config(tmp, config_text(extra_hyperparameters="\n  ready_twice: 1"),
                          file_name="ready_twice_2_slots.yaml")
    code, out, err = run("run", config, "--output", twice, "--set", "resources.slots_per_trial=2",
                         "--set", "max_restarts=5")
    trial = experiment(twice)["trials"][0]
    text = "gradients_ready: tensor 'x', range [2, 2+1) overlaps range [0, 3)"
    check(code == 1 and text in trial["error"] and "not restarted" in trial["error"],
          f"a range reported twice at 2 slots: exit {code}, error {trial['error']!r}:\n{err}")
    check(trial["restarts"] == 0, f"a range reported twice: restarted {trial['restarts']} times")
    count += 1

    # A plugin named by a path relative to the config file: the run folder's config.yaml names it
    # by its absolute path, so that the resume `cohort run` prints finds it from the run folder.
    beside = os.path.join(tmp, "beside")
    os.makedirs(beside)
    os.symlink(QUADRATIC, os.path.join(beside, "model.so"))
    config = write_config(beside, config_text(entrypoint="model.so"), file_name="relative.yaml")
    relative = os.path.join(tmp, "relative")
    code, out, err = run("run", config, "--output", relative)
    check(code == 0, f"a relative entrypoint: exit {code}:\n{out}\n{err}")
    resumes_from_its_config(relative, f'entrypoint: "{os.path.join(beside, "model.so")}"',
                            "COMPLETED after 6 of 6 batches", "a relative entrypoint's run")
    count += 1

    # A trial whose loss became NaN (diverged, with nonfinite_gradients: ignore) is told of, and
    # its NaN validations are never its best.
    diverged = os.path.join(tmp, "diverged")
    config = write_config(tmp, config_text(extra_hyperparameters="\n  nan_batch: 3",
                                           extra="min_validation_period:\n  batches: 2\n"),
                          file_name="diverged.yaml")
    code, out, err = run("run", config, "--output", diverged)
    text = "warning: trial 1 validated loss=nan after 4 batches: its training diverged"
    check(code == 0 and text in out + err, f"a diverged trial: exit {code}:\n{out}\n{err}")
    best = experiment(diverged)["trials"][0]["best_validation"]
    check(best is not None and best["batches"] == 2, f"a NaN was taken for the best: {best}")
    count += 1

    # A plugin name works with `cohort plugin info` as in an entrypoint.
    code, out, err = run("plugin", "info", "mlp")
    check(code == 0 and "plugin mlp from" in out, f"plugin info mlp: exit {code}:\n{out}\n{err}")
    count += 1

    # An experiment's name cannot put its run folder outside runs/.
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    escaping = write_config(tmp, config_text(), file_name="escaping.yaml")
    done = subprocess.run([COHORT, "run", escaping, "--set", "name=../escaped"], cwd=work,
                          capture_output=True, text=True, timeout=300)
    check(done.returncode == 0, f"a name with ../: exit {done.returncode}:\n{done.stderr}")
    folders = os.listdir(os.path.join(work, "runs"))
    check(os.listdir(work) == ["runs"] and len(folders) == 1 and folders[0].startswith("_escaped-"),
          f"a name with ../ made {os.listdir(work)}, runs/{folders}")
    count += 1

    # A resume whose --set changes the numbers is refused before anything is written: not a byte
    # of the run folder changes.
    before = folder_bytes(changed)
    code, out, err = run("run", "--resume", changed, "--set", "hyperparameters.learning_rate=0.01")
    text = "hyperparameters.learning_rate: 0.1 before, 0.01 now"
    check(code == 1 and text in err, f"resume with --set: exit {code}, expected '{text}' in:\n{err}")
    check(folder_bytes(changed) == before, "a refused --resume changed the run folder")
    count += 1
    # A run folder another run trains in is refused to a second run, before anything is written:
    # both would train the same trial into the same records and checkpoints.
    busy = os.path.join(tmp, "busy")
    config = write_config(tmp, config_text(extra_hyperparameters="\n  hang_batch: 3",
                                           extra="min_checkpoint_period:\n  batches: 1\n"),
                          file_name="busy.yaml")
    first = start("run", config, "--output", busy)
    try:
        wait_for(lambda: experiment(busy)["trials"][0]["checkpoints"], what="a first checkpoint")
        kept = {path: read_bytes(os.path.join(busy, path))
                for path in ("config.yaml", "experiment.json")}
        code, out, err = run("run", "--resume", busy)
        text = (f"the run folder {busy} is in use by another cohort run or cohort launch (pid "
                f"{first.pid}, as {busy}/local/orchestrator.lock says)")
        check(code == 1 and text in err, f"a second run in a busy folder: exit {code}:\n{err}")
        check(all(read_bytes(os.path.join(busy, path)) == data for path, data in kept.items()),
              "a run refused for a busy folder changed it")
    finally:
        first.kill()
        first.communicate()
    count += 1
    # A run folder that trained nothing (what a start that failed before its first batch leaves:
    # its config.yaml) holds nothing to contradict: other settings start there.
    untrained = os.path.join(tmp, "untrained")
    os.makedirs(untrained)
    with open(os.path.join(untrained, "config.yaml"), "wb") as f:
        f.write(read_bytes(os.path.join(changed, "config.yaml")))
    code, out, err = run("run", "--resume", untrained, "--set", "hyperparameters.learning_rate=0.01")
    check(code == 0, f"resume of a run that trained nothing, with --set: exit {code}:\n{err}")
    check("learning_rate: 0.01" in read_bytes(os.path.join(untrained, "config.yaml")).decode(),
          "the new settings did not replace the untrained run's")
    count += 1
    # So is one that would look for the checkpoints elsewhere (it would train again from batch 0
    # beside them), and one whose max_length ends the trial before its checkpoint (it would
    # resume past its end, with no validation there).
    elsewhere = os.path.join(tmp, "elsewhere")
    for case, override, text in [
            ("another host_path", "checkpoint_storage.host_path=" + elsewhere,
             "checkpoint_storage: the run in " + changed + " keeps its checkpoints in"),
            ("a max_length before the checkpoint", "searcher.max_length.batches=3",
             "searcher.max_length ends trial 1 after 3 batches, but the run in " + changed +
             " already holds its checkpoint trial-1-batch-4 at batch 4")]:
        code, out, err = run("run", "--resume", changed, "--set", override)
        check(code == 1 and text in err,
              f"resume with {case}: exit {code}, expected '{text}' in:\n{err}")
        check(folder_bytes(changed) == before and not os.path.exists(elsewhere),
              f"a resume refused for {case} changed something")
        count += 1
    # A resume none of whose trial's recorded checkpoints is where it looks (deleted, or a
    # host_path edited into config.yaml) is refused, changing nothing: it trained the trial again
    # from batch 0, silently.
    # So is one whose record cannot be read, which the resume would write over.
    missing = ("recorded 1 checkpoint(s) of trial 1 (the latest trial-1-batch-4, at batch 4), but "
               "none of them is in")
    for case, damage, text in [
            ("checkpoints deleted",
             lambda folder: shutil.rmtree(os.path.join(folder, "checkpoints")), missing),
            ("host_path edited into config.yaml",
             lambda folder: open(os.path.join(folder, "config.yaml"), "a").write(
                 f"checkpoint_storage:\n  host_path: {elsewhere}\n"), missing),
            ("record unreadable",
             lambda folder: open(os.path.join(folder, "experiment.json"), "w").write("{"),
             "has a record that cannot be read")]:
        copy = os.path.join(tmp, case.replace(" ", "_"))
        shutil.copytree(changed, copy)
        damage(copy)
        kept = folder_bytes(copy)
        code, out, err = run("run", "--resume", copy)
        text = f"--resume: the run in {copy} {text}"
        check(code == 1 and text in err, f"resume with {case}: exit {code}:\n{err}")
        check(folder_bytes(copy) == kept and not os.path.exists(elsewhere),
              f"a resume refused for {case} changed something")
        count += 1
    # A relative host_path is kept absolute, from where the run started: a resume from another
    # folder goes on from the same checkpoints.
    start_in = os.path.join(tmp, "start_in")
    os.makedirs(start_in)
    config = write_config(tmp, config_text(), file_name="relative_storage.yaml")
    done = subprocess.run([COHORT, "run", config, "--output", "relative_storage", "--set",
                           "checkpoint_storage.host_path=store"], cwd=start_in,
                          capture_output=True, text=True, timeout=300)
    check(done.returncode == 0, f"a relative host_path: exit {done.returncode}:\n{done.stderr}")
    stored = os.path.join(start_in, "relative_storage")
    resumes_from_its_config(stored, f'host_path: "{os.path.join(start_in, "store")}"',
                            "resuming from checkpoint trial-1-batch-4",
                            "a relative host_path's run elsewhere")
    count += 1
    # Runs whose folders share a name under one host_path would share a checkpoint folder there,
    # each deleting the other's checkpoints or taking them for its own: the first claims it, and
    # a second is refused before its run folder exists. So is a folder there that holds anything.
    store = os.path.join(tmp, "shared_store")
    config = write_config(tmp, config_text(), file_name="shared_store.yaml")
    on_store = "checkpoint_storage.host_path=" + store
    first = os.path.join(tmp, "a", "same")
    code, out, err = run("run", config, "--output", first, "--set", on_store)
    check(code == 0, f"a run on shared storage: exit {code}:\n{err}")
    marker = read_bytes(os.path.join(store, "same", ".cohort-run-folder")).decode()
    check(marker == first + "\n", f"the claim of {store}/same names {marker!r}")
    second = os.path.join(tmp, "b", "same")
    kept = folder_bytes(store)
    code, out, err = run("run", config, "--output", second, "--set", on_store)
    text = (f"checkpoint_storage: this run's checkpoints would go in {store}/same, which holds "
            f"those of the run in {first} (whose folder has the same name): give this run a "
            "folder of another name (--output) or another checkpoint_storage.storage_path")
    check(code == 1 and text in err, f"a second run of the same folder name: exit {code}:\n{err}")
    check(folder_bytes(store) == kept and not os.path.exists(second),
          "a run refused for a claimed checkpoint folder changed something")
    os.makedirs(os.path.join(store, "stranger"))
    with open(os.path.join(store, "stranger", "notes.txt"), "w") as f:
        f.write("someone's\n")
    code, out, err = run("run", config, "--output", os.path.join(tmp, "stranger"), "--set",
                         on_store)
    text = (f"this run's checkpoints would go in {store}/stranger, which already holds 1 entry "
            "(notes.txt)")
    check(code == 1 and text in err, f"a run onto a folder that holds files: exit {code}:\n{err}")
    resumes_from_its_config(first, f"host_path: {store}",
                            "resuming from checkpoint trial-1-batch-4", "a run on shared storage")
    # A run folder removed and made again is a new run: the checkpoints its earlier run left
    # under the same claim are not its own (it used to resume from them).
    again = os.path.join(tmp, "again", "same_again")
    code, out, err = run("run", config, "--output", again, "--set", on_store)
    check(code == 0, f"a run on shared storage: exit {code}:\n{err}")
    # While its folder is there, a second run into it is refused as one into any run folder,
    # never told to remove that run's checkpoints.
    kept = folder_bytes(store)
    code, out, err = run("run", config, "--output", again, "--set", on_store)
    check(code == 1 and f"run folder {again} already holds an experiment; use --resume" in err
          and "remove them" not in err, f"a second run into a run folder: exit {code}:\n{err}")
    check(folder_bytes(store) == kept, "a refused second run changed the shared storage")
    shutil.rmtree(again)
    kept = folder_bytes(store)
    code, out, err = run("run", config, "--output", again, "--set", on_store)
    text = (f"this run's checkpoints would go in {store}/same_again, which holds 1 entry "
            f"(trial-1-batch-4) of an earlier run in {again}, whose folder has since been "
            f"removed: remove them too (rm -r {store}/same_again)")
    check(code == 1 and text in err, f"a run folder made again: exit {code}:\n{err}")
    check(folder_bytes(store) == kept and not os.path.exists(again),
          "a run refused for an earlier run's checkpoints changed something")
    count += 1

    # A run folder whose config.yaml was edited after training (its record holds the fingerprint
    # of the settings it trained with) is refused before anything is written, naming the
    # hyperparameter: it used to start the workers, which refused the checkpoints and marked the
    # trial ERROR in the record.
    edited = os.path.join(tmp, "edited")
    shutil.copytree(changed, edited)
    with open(os.path.join(edited, "config.yaml")) as f:
        text = f.read()
    check("learning_rate: 0.1" in text, f"config.yaml: no 'learning_rate: 0.1' in:\n{text}")
    with open(os.path.join(edited, "config.yaml"), "w") as f:
        f.write(text.replace("learning_rate: 0.1", "learning_rate: 0.2"))
    kept = folder_bytes(edited)
    code, out, err = run("run", "--resume", edited)
    text = (f"--resume: the run in {edited} trained with settings its config.yaml no longer holds, "
            "and its checkpoints hold what they made (hyperparameters.learning_rate: 0.1 in the "
            "record, 0.2 in config.yaml)")
    check(code == 1 and text in err, f"resume of an edited config.yaml: exit {code}:\n{err}")
    check(folder_bytes(edited) == kept, "a resume refused for an edited config.yaml changed it")
    count += 1
    # With the record's fingerprint edited to match (the untrained run's above trained the same
    # config at learning_rate 0.01), the workers still refuse the checkpoint by its own.
    with open(os.path.join(untrained, "config.yaml")) as f:
        config_yaml = f.read()
    with open(os.path.join(edited, "config.yaml"), "w") as f:
        f.write(config_yaml)
    record = experiment(edited)
    record["config_fingerprint"] = experiment(untrained)["config_fingerprint"]
    record["state"] = "ACTIVE"
    with open(os.path.join(edited, "experiment.json"), "w") as f:
        json.dump(record, f)
    code, out, err = run("run", "--resume", edited)
    text = "it was trained with other settings"
    check(code == 1 and text in experiment(edited)["trials"][0]["error"],
          f"resume with changed settings: exit {code}:\n{err}")
    count += 1

    # Inputs past a bound are refused at once, naming the bound (each used to hang or abort).
    large = os.path.join(tmp, "large.yaml")
    with open(large, "w") as f:
        f.write(config_text() + "#" * (17 << 20) + "\n")
    for case, arguments, text in [
            ("a config over the size bound", ["run", large], "larger than 1048576 bytes"),
            ("a config over the size bound, submitted", ["submit", large],
             "larger than 1048576 bytes"),
            ("a device as the config", ["run", "/dev/zero"], "not a regular file"),
            ("a global batch past its bound",
             ["run", write_config(tmp, config_text(), file_name="huge_batch.yaml"), "--set",
              "hyperparameters.global_batch_size=4611686018427387904"],
             "hyperparameters.global_batch_size: expected an integer from 1 to 16777216"),
            ("no such config file", ["run", os.path.join(tmp, "missing.yaml")],
             "no such experiment config file"),
            ("resume of a folder that is not a run", ["run", "--resume", tmp],
             "is not a run folder of cohort run (it has no config.yaml)"),
            ("a learning rate the built-in optimizer refuses, submitted",
             ["submit", write_config(tmp, config_text(), file_name="submitted.yaml"), "--set",
              "hyperparameters.learning_rate=-1"],
             "submitted.yaml as --set changes it: hyperparameter 'learning_rate' = -1 is out of "
             "range; allowed: > 0"),
            # The orchestrator's own refusals are checked before sending too, naming the file.
            ("a length the orchestrator cannot count, submitted",
             ["submit", write_config(tmp, config_text(), file_name="submitted.yaml"), "--set",
              "searcher.max_length={epochs: 1}"],
             "submitted.yaml as --set changes it: searcher.max_length: a length in epochs needs "
             "records_per_epoch"),
            ("a relative host_path, submitted",
             ["submit", write_config(tmp, config_text(), file_name="submitted.yaml"), "--set",
              "checkpoint_storage.host_path=ckpts"],
             "submitted.yaml as --set changes it: checkpoint_storage.host_path: expected an "
             "absolute path"),
            ("a missing plugin, submitted",
             ["submit", write_config(tmp, config_text(entrypoint="./nope.so"),
                                     file_name="no_plugin.yaml")],
             "no_plugin.yaml: entrypoint: no plugin './nope.so'"),
            ("resume of a folder that does not exist",
             ["run", "--resume", os.path.join(tmp, "no-such-run")],
             f"there is no run folder {os.path.join(tmp, 'no-such-run')}")]:
        code, out, err = run(*arguments)
        check(code != 0 and text in err, f"{case}: exit {code}, expected '{text}' in:\n{err}")
        count += 1

    # Mistyped commands get the nearest one, and Determined's verbs their name here; a client with
    # nothing to talk to is told at once.
    for case, arguments, text in [
            ("a mistyped command", ["experimnt", "list"],
             "unknown command 'experimnt'; did you mean 'experiment'?"),
            ("a mistyped subcommand", ["e", "lst"],
             "unknown subcommand 'lst'; did you mean 'list'?"),
            ("Determined's verb", ["experiment", "create", "exp.yaml", "."],
             "unknown subcommand 'create'; `det experiment create` is `cohort submit CONFIG` here"),
            ("Determined's checkpoint verb", ["checkpoint", "download", "trial-1-batch-4"],
             "`det checkpoint download` is `cohort checkpoint export CHECKPOINT_ID DIR` here"),
            ("no orchestrator listening", ["e", "ls", "--orchestrator", "tcp://127.0.0.1:1"],
             "no orchestrator at tcp://127.0.0.1:1: nothing listens there")]:
        code, out, err = run(*arguments, timeout=5)
        check(code != 0 and text in err, f"{case}: exit {code}, expected '{text}' in:\n{err}")
        count += 1

    # GPU inputs on a machine without a GPU (where the build has the CUDA example).
    gpus = "/proc/driver/nvidia/gpus"
    if not (os.path.isdir(gpus) and os.listdir(gpus)):
        config = write_config(tmp, config_text(), file_name="gpus.yaml")
        code, out, err = run("run", "--gpus", config, "--output", os.path.join(tmp, "gpus"))
        text = "--gpus: this machine shows no NVIDIA GPU"
        check(code == 1 and text in err, f"--gpus without a GPU: exit {code}:\n{err}")
        count += 1
        mlp_cuda = os.path.join(PLUGINS, "mlp_cuda", "mlp_cuda.so")
        if os.path.exists(mlp_cuda):
            config = write_config(tmp, config_text(entrypoint=mlp_cuda), file_name="cuda.yaml")
            code, out, err = run("run", config, "--output", os.path.join(tmp, "cuda"))
            text = "mlp_cuda trains on a GPU, but this trial's slot is not one"
            check(code == 1 and text in err, f"mlp_cuda on a CPU slot: exit {code}:\n{err}")
            count += 1

# An address without its transport (as other tools take "host:port") is bad usage, naming the
# endpoint it likely means; so is an agent --id of nothing (it joined under the host name), and a
# count of task folders to keep that is not one.
for args, environment, text in [
        (["agent", "--orchestrator", "127.0.0.1:39400", "--slots", "1"], {},
         "--orchestrator '127.0.0.1:39400' is not a ZeroMQ endpoint (transport://address, such as "
         "tcp://127.0.0.1:39400)"),
        (["agent", "--orchestrator", "tcp://127.0.0.1:39400", "--id", ""], {},
         "--id needs a name (leave it out for the host name)"),
        (["agent", "--orchestrator", "tcp://127.0.0.1:39400", "--keep-task-folders", "-1"], {},
         "--keep-task-folders needs a number >= 0, not '-1'"),
        (["experiment", "list", "--orchestrator", "127.0.0.1:39401"], {},
         "--orchestrator '127.0.0.1:39401' is not a ZeroMQ endpoint"),
        (["experiment", "list"], {"COHORT_ORCHESTRATOR": "localhost:39401"},
         "$COHORT_ORCHESTRATOR 'localhost:39401' is not a ZeroMQ endpoint (transport://address, "
         "such as tcp://localhost:39401)")]:
    done = subprocess.run([COHORT, *args], env={**os.environ, **environment}, capture_output=True,
                          text=True, timeout=60)
    check(done.returncode == 2 and text in done.stderr,
          f"{args} {environment}: exit {done.returncode}:\n{done.stderr}")
    count += 1

# A random search resumed with fewer trials than it has is refused before anything is written: the
# trials past the new max_trials used to be left out of its record, their files orphaned.
with temp_dir() as tmp:
    searched = os.path.join(tmp, "searched")
    text = config_text().replace("  learning_rate: 0.1", """  learning_rate:
    type: double
    minval: 0.01
    maxval: 0.1""").replace("  name: single", "  name: random\n  max_trials: 3")
    config = write_config(tmp, text, file_name="random.yaml")
    code, out, err = run("run", config, "--output", searched)
    check(code == 0 and len(experiment(searched)["trials"]) == 3, f"exit {code}:\n{out}\n{err}")
    before = folder_bytes(searched)
    code, out, err = run("run", "--resume", searched, "--set", "searcher.max_trials=2")
    text = (f"--resume: the run in {searched} has trials up to trial 3, more than "
            "searcher.max_trials: 2 keeps (the others would be left out of its record); resume "
            "with searcher.max_trials of 3 or more, or start a new run (--output)")
    check(code == 1 and text in err, f"resume with fewer trials: exit {code}, expected '{text}':\n{err}")
    check(folder_bytes(searched) == before, "a resume refused for fewer trials changed the run folder")
    count += 1
    # Its trials drew their values from its space: a resume under another space, or with another
    # plugin, would record values and load tensors its checkpoints were not made with. Each is
    # refused naming what changed, and changes nothing.
    for sets, text in [
        (["hyperparameters.learning_rate.maxval=0.2"],
         f"--resume: the run in {searched} drew its trials' hyperparameters from another random "
         "search space (hyperparameters.learning_rate: {type: double, minval: 0.01, maxval: 0.1} "
         "before, {type: double, minval: 0.01, maxval: 0.2} now), and its checkpoints hold what "
         "they trained; resume with the run's own space, or start a new run (--output)"),
        ([f"entrypoint={os.path.join(TEST_PLUGINS, 'c_quadratic_v1_0.so')}"],
         f"--resume: the run in {searched} trained plugin {QUADRATIC} (entrypoint), and its "
         "checkpoints hold that plugin's tensors, but this config names "
         f"{os.path.join(TEST_PLUGINS, 'c_quadratic_v1_0.so')}; resume with the run's entrypoint, "
         "or start a new run (--output)"),
    ]:
        code, out, err = run("run", "--resume", searched, *[a for s in sets for a in ("--set", s)])
        check(code == 1 and text in err, f"resume with {sets}: exit {code}, expected '{text}':\n{err}")
        check(folder_bytes(searched) == before, f"a resume refused for {sets} changed the run folder")
        count += 1
    # A setting that changes nothing left to do (the run completed) leaves it as it was, saying so.
    code, out, err = run("run", "--resume", searched, "--set", "max_restarts=2")
    text = "has completed: nothing to resume"
    check(code == 0 and text in err and "its config.yaml is left as it was" in err,
          f"completed resume with max_restarts=2: exit {code}:\n{err}")
    check(folder_bytes(searched) == before, "a resume with nothing to do changed the run folder")
    count += 1

check(count >= 30, f"only {count} cases")
print(f"{count} bad inputs refused with their texts")
print("ok")
