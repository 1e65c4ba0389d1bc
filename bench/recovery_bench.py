"""Recovery time after a worker's death: from the SIGKILL of rank 0's worker to the first batch
the restarted trial trains, at 1, 2 and 4 CPU slots, through the real CLI, and where it goes.

Each run is `cohort run` of the mlp example's model (examples/mlp.yaml's hyperparameters, global
batch 64, a multiple of every slot count) with a report after every batch (scheduling_unit 1),
a checkpoint every CHECKPOINT_PERIOD batches and max_restarts 1. Once the trial is KILL_AFTER
batches past its first checkpoint, rank 0's worker is killed (SIGKILL); the agent sees it exit,
stops the other ranks, the orchestrator places the trial again and new workers start, join their
group, restore the checkpoint and train. The figure is the time from the kill to the unix time of
the first training report after it (the report of the first batch trained again). Its parts:

  respawn     the kill to the restarted rank 0's worker process appearing (this script polls
              /proc every 2 ms): the agent noticing the exit, the other ranks stopping, the
              orchestrator's restart and the agent's spawn
  ready       the restarted workers' own start (the slowest rank's "ready in" line of the trial
              log: plugin and model, the Gloo group, the checkpoint's restore, the rest)
  first batch the rest: the worker process starting up to Worker::Create, the first batch, and
              its report's trip to `cohort run`

Usage: recovery_bench.py COHORT_EXE PLUGIN_DIR [--slots 1,2,4] [--repeats 3]

Prints a table and JSON lines {"name": "recovery_<n>_slots", "value" (median seconds), "unit",
"peer": "first_batch_<n>_slots" (the same run's time from launch to its first batch), ...}.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import ddp_common  # beside this script: the integration tests' helpers

NAME = "recovery_bench"
CHECKPOINT_PERIOD = 200
KILL_AFTER = 30
BATCHES = 600
GLOBAL_BATCH = 64
READY = re.compile(r"\[rank (\d+)\] trial \d+ rank \d+ of \d+: .*; ready in ([0-9.]+) s "
                   r"\((.*)\)")


def log(message):
    print(f"{NAME}: {message}", file=sys.stderr, flush=True)


def reports(run_dir):
    try:
        with open(os.path.join(run_dir, "trials", "1", "metrics.jsonl")) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return []


def checkpointed(run_dir):
    folder = os.path.join(run_dir, "checkpoints")
    return os.path.isdir(folder) and any(name.startswith("trial-1-batch-")
                                         for name in os.listdir(folder))


def one_run(args, slots, run_dir):
    """(seconds to the first batch, recovery seconds, respawn seconds, slowest ready seconds, the
    slowest rank's ready line) of one killed run."""
    command = [args.cohort, "run", args.config, "--output", run_dir, "--cpu-slots", str(slots),
               "--set", f"resources.slots_per_trial={slots}"]
    launched = time.time()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while True:
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            raise SystemExit(f"{NAME}: the run ended or stalled before the kill:\n"
                             f"{process.communicate()[1]}")
        trained = [r["batches"] for r in reports(run_dir) if r["kind"] == "training"]
        if checkpointed(run_dir) and trained and trained[-1] >= CHECKPOINT_PERIOD + KILL_AFTER:
            break
        time.sleep(0.005)
    old = worker_pid(0, run_dir)
    killed_at = time.time()
    os.kill(old, signal.SIGKILL)
    respawned_at = None
    while respawned_at is None and time.monotonic() < deadline:
        if worker_pid(0, run_dir) not in (None, old):
            respawned_at = time.time()
        time.sleep(0.002)
    out, err = process.communicate(timeout=300)
    if process.returncode != 0 or respawned_at is None:
        raise SystemExit(f"{NAME}: the killed run exited {process.returncode}:\n{err}")
    training = [r for r in reports(run_dir) if r["kind"] == "training"]
    first = training[0]["time"] - launched
    after = [r for r in training if r["time"] > killed_at]
    recovery = after[0]["time"] - killed_at
    with open(os.path.join(run_dir, "trials", "1", "log.txt")) as f:
        ready = [(float(m.group(2)), m.group(0)) for m in map(READY.search, f) if m]
    restarted = ready[-slots:]  # the restarted attempt's ranks
    slowest = max(restarted)
    return first, recovery, respawned_at - killed_at, slowest[0], slowest[1]


def main():
    global worker_pid
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cohort")
    parser.add_argument("plugin_dir")
    parser.add_argument("--slots", default="1,2,4")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    args.cohort, args.plugin_dir = os.path.abspath(args.cohort), os.path.abspath(args.plugin_dir)
    ddp_common.use_cli_helpers(args.cohort, args.plugin_dir)
    from cohort_cli import worker_pid  # the integration tests' finder of a rank's worker
    slot_counts = [int(s) for s in args.slots.split(",") if s]
    if args.repeats < 1 or any(n < 1 or GLOBAL_BATCH % n for n in slot_counts):
        parser.error(f"--repeats >= 1; slot counts dividing {GLOBAL_BATCH}")
    results = {n: [] for n in slot_counts}
    with tempfile.TemporaryDirectory(prefix="cohort-recovery-") as tmp:
        args.config = os.path.join(tmp, "experiment.yaml")
        with open(args.config, "w") as f:
            f.write(f"""\
name: recovery
entrypoint: {os.path.abspath(os.path.join(args.plugin_dir, "mlp", "mlp.so"))}
hyperparameters:
  global_batch_size: {GLOBAL_BATCH}
  optimizer: sgd
  learning_rate: 0.05
  momentum: 0.9
  hidden_size: 64
  hidden_layers: 2
searcher:
  name: single
  metric: loss
  max_length:
    batches: {BATCHES}
min_validation_period:
  batches: {BATCHES}
min_checkpoint_period:
  batches: {CHECKPOINT_PERIOD}
scheduling_unit: 1
max_restarts: 1
reproducibility:
  experiment_seed: 5
""")
        for repeat in range(args.repeats):
            for n in slot_counts:  # the slot counts take turns
                result = one_run(args, n, os.path.join(tmp, f"run-{n}-{repeat}"))
                log(f"{n} slot(s): recovered in {result[1]:.3f} s (respawn {result[2]:.3f} s, "
                    f"ready {result[3]:.3f} s); first batch {result[0]:.3f} s after launch; "
                    f"slowest restarted rank: {result[4]}")
                results[n].append(result)
    print(f"recovery from a SIGKILLed worker, mlp (hidden 64 x 2, batch {GLOBAL_BATCH}), median "
          f"of {args.repeats}, seconds")
    print(f"{'slots':>5} {'recovery':>9} {'respawn':>8} {'ready':>7} {'first batch':>12} "
          f"{'start-up':>9}")
    for n, runs in results.items():
        first, recovery, respawn, ready = (statistics.median(r[i] for r in runs) for i in range(4))
        print(f"{n:>5} {recovery:9.3f} {respawn:8.3f} {ready:7.3f} "
              f"{recovery - respawn - ready:12.3f} {first:9.3f}")
    for n, runs in results.items():
        recovery = statistics.median(r[1] for r in runs)
        first = statistics.median(r[0] for r in runs)
        print(json.dumps({"name": f"recovery_{n}_slots", "value": round(recovery, 4), "unit": "s",
                          "peer": f"first_batch_{n}_slots", "peer_value": round(first, 4),
                          "ratio": round(recovery / first, 4)}), flush=True)


if __name__ == "__main__":
    main()
