"""Helpers for the integration tests: run the real `cohort` binary on real plugins in a temp dir.

Every test script is called as: SCRIPT COHORT_EXE PLUGIN_BUILD_DIR
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

COHORT = sys.argv[1]
PLUGINS = sys.argv[2]

# Under the sanitizers (`meson test --setup asan`) a one-slot MLP batch takes about five times as
# long as in the plain build.
SANITIZED = os.environ.get("COHORT_EXPECT_SANITIZER") == "1"


def interruptible(batches):
    """The length of a one-slot MLP run that a test interrupts mid-way (a signal, a kill): about a
    third under the sanitizers (a multiple of 100), where it still lasts longer than `batches` do in
    the plain build."""
    return max(100, batches // 300 * 100) if SANITIZED else batches

# A small MLP experiment: quick, but long enough to be interrupted between checkpoints.
MLP_CONFIG = """\
name: {name}
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 16
  optimizer: sgd
  learning_rate: 0.05
  momentum: 0.9
  hidden_size: {hidden_size}
  hidden_layers: 2
  synthetic_train_records: 2048
  synthetic_validation_records: 512
searcher:
  name: single
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: {batches}
min_validation_period:
  batches: {period}
min_checkpoint_period:
  batches: {period}
scheduling_unit: 20
max_restarts: {max_restarts}
reproducibility:
  experiment_seed: 11
"""


def plugin(name):
    return os.path.join(PLUGINS, name, name + ".so")


def write_config(directory, text, file_name="experiment.yaml"):
    path = os.path.join(directory, file_name)
    with open(path, "w") as f:
        f.write(text)
    return path


def mlp_config(directory, name="mlp-test", batches=300, period=100, hidden_size=32,
               max_restarts=0, entrypoint=None, file_name="experiment.yaml"):
    return write_config(directory, MLP_CONFIG.format(
        name=name, entrypoint=entrypoint or plugin("mlp"), batches=batches, period=period,
        hidden_size=hidden_size, max_restarts=max_restarts), file_name=file_name)


def quadratic_config(directory, name, batches, slots=2, hyperparameters=None,
                     file_name="experiment.yaml"):
    """The test plugin c_quadratic (plugins/test/c_plugin.c) at `slots` slots, no restart;
    `hyperparameters` adds its test switches (error_batch, log_batch, ...)."""
    extra = "".join(f"  {key}: {value}\n" for key, value in (hyperparameters or {}).items())
    return write_config(directory, f"""\
name: {name}
entrypoint: {os.path.join(PLUGINS, 'test', 'c_quadratic.so')}
hyperparameters:
  global_batch_size: 4
  learning_rate: 0.25
{extra}resources:
  slots_per_trial: {slots}
searcher:
  name: single
  metric: loss
  max_length:
    batches: {batches}
max_restarts: 0
""", file_name=file_name)


def default_hangup():
    """For preexec_fn: the child starts with SIGHUP's default disposition even when the tests run
    under nohup, as the tests that send it a SIGHUP expect (a command started with SIGHUP ignored
    keeps it ignored)."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def run(*args, timeout=300):
    """Runs `cohort ARGS...`; returns (exit code, stdout, stderr)."""
    result = subprocess.run([COHORT, *args], capture_output=True, text=True, timeout=timeout,
                            preexec_fn=default_hangup)
    return result.returncode, result.stdout, result.stderr


def start(*args):
    return subprocess.Popen([COHORT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=default_hangup)


def experiment(run_dir):
    with open(os.path.join(run_dir, "experiment.json")) as f:
        return json.load(f)


def metrics(run_dir, trial=1):
    with open(os.path.join(run_dir, "trials", str(trial), "metrics.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def wait_for(predicate, timeout=120, what="a condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if predicate():
                return
        except (OSError, ValueError, KeyError):
            pass  # a file not written yet
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def kill_the_worker(run_dir):
    """SIGKILLs the one `cohort worker` process of the run folder `run_dir` (a one-slot run)."""
    workers = subprocess.run(["pgrep", "-f", f"worker --run-dir {run_dir}"], capture_output=True,
                             text=True).stdout.split()
    check(len(workers) == 1, f"worker processes: {workers}")
    os.kill(int(workers[0]), signal.SIGKILL)


def worker_pid(rank, run_dir):
    """The pid of the running `cohort worker` process of `rank` in the run folder `run_dir`, or
    None."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if (os.path.basename(args[0]) == "cohort" and len(args) > 1 and args[1] == "worker"
                and "--rank" in args and args[args.index("--rank") + 1] == str(rank)
                and any(arg.startswith(run_dir + os.sep) for arg in args)):
            return int(entry)
    return None


def release(pid):
    """Lets a process stopped with SIGSTOP go (SIGCONT), then kills it; a gone one is left."""
    for sent in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.kill(pid, sent)
        except ProcessLookupError:
            break


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def folder_bytes(folder):
    """Every file under `folder` with its bytes: a refused command must leave them all as they
    were."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            found[os.path.relpath(path, folder)] = read_bytes(path)
    return found


def run_stopped_at_checkpoint(config, folder, *args):
    """Starts `cohort run CONFIG --output FOLDER ARGS...`, stops it with Ctrl-C once it has written
    its first checkpoint, checks it exited as stopped (130), and returns the batches it trained."""
    process = start("run", config, "--output", folder, *args)
    wait_for(lambda: experiment(folder)["trials"][0]["checkpoints"], what="a first checkpoint")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    check(process.returncode == 130, f"the stopped run exited {process.returncode}:\n{out}\n{err}")
    return experiment(folder)["trials"][0]["batches_trained"]


def final_parameters(run_dir, batches):
    return read_bytes(os.path.join(run_dir, "checkpoints", f"trial-1-batch-{batches}", "parameters"))


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def temp_dir():
    return tempfile.TemporaryDirectory(prefix="cohort-it-")


__all__ = ["COHORT", "PLUGINS", "default_hangup", "plugin", "write_config", "mlp_config", "quadratic_config", "run", "start",
           "worker_pid", "kill_the_worker", "release", "experiment", "metrics", "wait_for", "read_bytes",
           "folder_bytes", "run_stopped_at_checkpoint", "final_parameters", "check", "temp_dir", "signal", "interruptible",
           "SANITIZED"]
