"""Records per second of the mlp quick start at 2 slots against 1 slot, through the real CLI.

Runs `cohort run EXPERIMENT --cpu-slots 2` on the mlp example (examples/mlp.yaml: global batch
32, Adam, two hidden layers of 64) with resources.slots_per_trial 1 and 2, the same global batch
either way (so 2 slots train 16 records each per batch), the length cut to BATCHES batches and the
validation and checkpoint periods set to BATCHES, so only the end of the trial validates and
checkpoints. The sides take turns, 1 slot first, REPEATS times each, every run in a fresh run
folder under a temporary folder.

A run's figure comes from the training reports in trials/1/metrics.jsonl (one per
scheduling_unit batches, each with the records trained so far and the reporting worker's unix
time): records between the first and the last report over the seconds between them. So it is
training throughput alone; starting the workers, forming the Gloo group, the final validation and
checkpoint fall outside it. The wall time of each whole command goes to stderr beside it.

This machine has 2 cores: at 2 slots the two workers (each with a training thread, the exchange's
communication thread and Gloo's I/O thread) and `cohort run` itself share them, while at 1 slot
the one worker has a core to itself. The model is tiny (about 7 K parameters, a 28 KB gradient),
so at 2 slots a batch's time is mostly the exchange of that gradient over loopback TCP (and the
threads it wakes), not the halved compute.

Usage: mlp_scaling_bench.py COHORT_EXE PLUGIN_DIR EXPERIMENT_YAML [BATCHES=3000] [REPEATS=3]

Prints one JSON line {"name": "mlp_records_per_s_2_slots", "value", "unit": "records/s",
"peer": "mlp_records_per_s_1_slot", "peer_value", "ratio" (value / peer_value)}, each value the
median over the repeats.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def log(message):
    print(f"mlp_scaling_bench: {message}", file=sys.stderr, flush=True)


def training_throughput(run_dir):
    """Records per second between the first and the last training report of trial 1."""
    reports = []
    with open(os.path.join(run_dir, "trials", "1", "metrics.jsonl")) as f:
        for line in f:
            if line.strip():
                entry = json.loads(line)
                if entry.get("kind") == "training":
                    reports.append(entry)
    if len(reports) < 2:
        raise SystemExit(f"mlp_scaling_bench: {run_dir}: fewer than 2 training reports")
    first, last = reports[0], reports[-1]
    seconds = last["time"] - first["time"]
    if seconds <= 0:
        raise SystemExit(f"mlp_scaling_bench: {run_dir}: training reports span {seconds} s")
    return (last["records"] - first["records"]) / seconds, last["records"] - first["records"]


def run_once(cohort, plugin, experiment, batches, slots, run_dir):
    """Runs the experiment at `slots` slots; its training records per second."""
    command = [cohort, "run", experiment, "--output", run_dir, "--cpu-slots", "2",
               "--set", f"entrypoint={plugin}",
               "--set", f"resources.slots_per_trial={slots}",
               "--set", f"searcher.max_length={{batches: {batches}}}",
               "--set", f"min_validation_period={{batches: {batches}}}",
               "--set", f"min_checkpoint_period={{batches: {batches}}}"]
    start = time.monotonic()
    result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.monotonic() - start
    if result.returncode != 0:
        raise SystemExit(f"mlp_scaling_bench: {' '.join(command)} exited {result.returncode}:\n"
                         f"{result.stdout}\n{result.stderr}")
    rate, records = training_throughput(run_dir)
    log(f"{slots} slot(s): {rate:.0f} records/s over {records} records between the first and "
        f"last training report; the whole command took {wall:.2f} s")
    return rate


def main():
    if not 4 <= len(sys.argv) <= 6:
        raise SystemExit("usage: mlp_scaling_bench.py COHORT_EXE PLUGIN_DIR EXPERIMENT_YAML "
                         "[BATCHES] [REPEATS]")
    cohort, plugin_dir, experiment = sys.argv[1:4]
    batches = int(sys.argv[4]) if len(sys.argv) > 4 else 3000
    repeats = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    if batches < 200 or repeats < 1:
        raise SystemExit("mlp_scaling_bench: needs BATCHES >= 200 (two training reports) and "
                         "REPEATS >= 1")
    plugin = os.path.join(plugin_dir, "mlp", "mlp.so")

    rates = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="cohort-mlp-scaling-") as tmp:
        for repeat in range(repeats):
            for slots in (1, 2):
                run_dir = os.path.join(tmp, f"slots-{slots}-{repeat}")
                rates[slots].append(run_once(cohort, plugin, experiment, batches, slots, run_dir))
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    print(json.dumps({"name": "mlp_records_per_s_2_slots", "value": round(two, 1),
                      "unit": "records/s", "peer": "mlp_records_per_s_1_slot",
                      "peer_value": round(one, 1), "ratio": round(two / one, 4)}), flush=True)


main()
