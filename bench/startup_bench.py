"""Start-up of a trial through the real CLI: time to the first batch, and rendezvous of 16 workers.

Every figure is the time from launching `cohort run EXPERIMENT --cpu-slots 16` on the mlp example
(examples/mlp.yaml, global batch 64, a multiple of every slot count used) to the unix time of the
trial's first training report in trials/1/metrics.jsonl. With scheduling_unit 1 that report
comes right after batch 1, and a worker can only train batch 1 once every rank has joined the
Gloo group, so the figure holds: starting `cohort run` (parsing the config, the run folder, the
worker channel), spawning one worker process per slot, each worker loading the plugin and
creating the model, the Gloo full mesh over loopback TCP through the rendezvous service (at more
than 1 slot), one batch of the tiny mlp (about 7 K parameters) with its gradient allreduce, and
the report's trip back to `cohort run`. The launch time is taken just before the process is
spawned, so the spawn is counted too. The trial is cut to 2 batches, its validation and
checkpoint come after the figure; the whole command's wall time goes to stderr beside it.

  time_to_first_batch_1_slot   1 slot. Peer cohort_plugin_info: a bare `cohort plugin info
                               mlp.so` process from launch to exit, i.e. the cohort binary
                               started, the plugin loaded and its ABI checked, the least a run
                               must pay once (a run pays it twice: `cohort run` and the worker).
                               A bare `cohort version` is timed too and goes to stderr.
  rendezvous_16_workers        16 slots: 16 worker processes joining one Gloo group. Peer
                               rendezvous_2_workers: the same at 2 slots.

On a machine with fewer cores than slots the 16 workers, their Gloo I/O threads and `cohort run`
share the cores, so the 16-worker figure also holds their contention, beside the rendezvous
itself (each rank polling the rendezvous store for its peers' addresses, then connecting to
them). The sides take turns (1, 2 and 16 slots, then the
peer processes), REPEATS times, every run in a fresh folder under a temporary folder; the values
are medians over the repeats.

Usage: startup_bench.py COHORT_EXE PLUGIN_DIR EXPERIMENT_YAML [REPEATS=5]

Prints JSON lines {"name", "value", "unit": "s", "peer", "peer_value", "ratio" (value /
peer_value)}.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CPU_SLOTS = 16
GLOBAL_BATCH = 64
BATCHES = 2
RUN_TIMEOUT_S = 60


def log(message):
    print(f"startup_bench: {message}", file=sys.stderr, flush=True)


def first_training_report(run_dir):
    """The first training report of trial 1, which must come after batch 1."""
    with open(os.path.join(run_dir, "trials", "1", "metrics.jsonl")) as f:
        for line in f:
            if line.strip():
                entry = json.loads(line)
                if entry.get("kind") == "training":
                    if entry.get("batches") != 1:
                        raise SystemExit(f"startup_bench: {run_dir}: the first training report "
                                         f"is at batch {entry.get('batches')}, not 1")
                    return entry
    raise SystemExit(f"startup_bench: {run_dir}: no training report")


def seconds_to_first_batch(cohort, plugin, experiment, slots, run_dir):
    """Seconds from launching a run at `slots` slots to its first training report."""
    command = [cohort, "run", experiment, "--output", run_dir, "--cpu-slots", str(CPU_SLOTS),
               "--set", f"entrypoint={plugin}",
               "--set", f"resources.slots_per_trial={slots}",
               "--set", f"hyperparameters.global_batch_size={GLOBAL_BATCH}",
               "--set", "scheduling_unit=1",
               "--set", f"searcher.max_length={{batches: {BATCHES}}}",
               "--set", f"min_validation_period={{batches: {BATCHES}}}",
               "--set", f"min_checkpoint_period={{batches: {BATCHES}}}"]
    launch_unix = time.time()
    launch = time.monotonic()
    try:
        result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"startup_bench: {' '.join(command)} ran past {RUN_TIMEOUT_S} s")
    wall = time.monotonic() - launch
    if result.returncode != 0:
        raise SystemExit(f"startup_bench: {' '.join(command)} exited {result.returncode}:\n"
                         f"{result.stdout}\n{result.stderr}")
    seconds = first_training_report(run_dir)["time"] - launch_unix
    if not 0 < seconds <= wall:
        raise SystemExit(f"startup_bench: {run_dir}: first report {seconds:.3f} s after launch, "
                         f"outside the command's {wall:.3f} s")
    log(f"{slots} slot(s): first batch reported {seconds:.3f} s after launch; the whole command "
        f"took {wall:.3f} s")
    return seconds


def process_seconds(command):
    """Seconds from launching `command` to its exit; it must succeed."""
    launch = time.monotonic()
    result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    seconds = time.monotonic() - launch
    if result.returncode != 0:
        raise SystemExit(f"startup_bench: {' '.join(command)} exited {result.returncode}:\n"
                         f"{result.stdout}\n{result.stderr}")
    return seconds


def report(name, value, peer, peer_value):
    print(json.dumps({"name": name, "value": round(value, 4), "unit": "s", "peer": peer,
                      "peer_value": round(peer_value, 4), "ratio": round(value / peer_value, 4)}),
          flush=True)


def main():
    if not 4 <= len(sys.argv) <= 5:
        raise SystemExit("usage: startup_bench.py COHORT_EXE PLUGIN_DIR EXPERIMENT_YAML [REPEATS]")
    cohort, plugin_dir, experiment = (os.path.abspath(arg) for arg in sys.argv[1:4])
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    if repeats < 1:
        raise SystemExit("startup_bench: needs REPEATS >= 1")
    plugin = os.path.abspath(os.path.join(plugin_dir, "mlp", "mlp.so"))

    first_batch = {1: [], 2: [], 16: []}
    plugin_info, version = [], []
    with tempfile.TemporaryDirectory(prefix="cohort-startup-") as tmp:
        for repeat in range(repeats):
            for slots in first_batch:
                run_dir = os.path.join(tmp, f"slots-{slots}-{repeat}")
                first_batch[slots].append(
                    seconds_to_first_batch(cohort, plugin, experiment, slots, run_dir))
            plugin_info.append(process_seconds([cohort, "plugin", "info", plugin]))
            version.append(process_seconds([cohort, "version"]))
    median = {slots: statistics.median(seconds) for slots, seconds in first_batch.items()}
    log(f"bare processes from launch to exit: `cohort plugin info` "
        f"{statistics.median(plugin_info):.4f} s, `cohort version` "
        f"{statistics.median(version):.4f} s")
    report("time_to_first_batch_1_slot", median[1], "cohort_plugin_info",
           statistics.median(plugin_info))
    report("rendezvous_16_workers", median[16], "rendezvous_2_workers", median[2])


main()
