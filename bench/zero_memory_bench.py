"""What ZeRO saves per slot: the built-in Adam optimizer's state and each worker's peak resident
memory, at optimizations.zero_stage 0, 1 and 2, for an mlp of about 50 M parameters trained at
2 slots on CPUs through the real CLI, in one run.

Each run is `cohort run` of the mlp plugin with one hidden layer of HIDDEN units over INPUTS
inputs (INPUTS * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES parameters, about 50.1 M: 200 MB of
float32), Adam, a global batch of 2, for BATCHES batches and one checkpoint at the end. Measured:

  state  stage 0: the checkpoint's optimizer file (the whole state every slot keeps); stages 1
         and 2: what rank 0's log says its sharded optimizer keeps (Optimizer::state_bytes)
  peak   each worker's peak resident set (VmHWM in /proc/PID/status), read every 0.1 s while it
         runs; the larger of the two ranks'

Usage: zero_memory_bench.py COHORT_EXE PLUGIN_DIR [--folder DIR]

Prints a table and JSON lines {"name": "zero<S>_optimizer_state_mb" / "zero<S>_worker_peak_rss_mb",
"value", "unit": "MB", "peer": the same at stage 0, "peer_value", "ratio"} for stages 1 and 2.
The target: a slot's state at most 1/2 of stage 0's plus a bucket.
"""
import argparse
import json
import os
import re
import subprocess
import tempfile
import time

import ddp_common  # beside this script: use_cli_helpers

NAME = "zero_memory_bench"
INPUTS = 4096
HIDDEN = 12200
CLASSES = 10
BATCHES = 20


def write_config(path, plugin_dir, stage):
    with open(path, "w") as f:
        f.write(f"""\
name: zero-memory-{stage}
entrypoint: {os.path.join(plugin_dir, "mlp", "mlp.so")}
hyperparameters:
  global_batch_size: 2
  optimizer: adam
  learning_rate: 0.0001
  hidden_size: {HIDDEN}
  hidden_layers: 1
  synthetic_input_dim: {INPUTS}
  synthetic_classes: {CLASSES}
  synthetic_train_records: 64
  synthetic_validation_records: 2
resources:
  slots_per_trial: 2
optimizations:
  zero_stage: {stage}
searcher:
  name: single
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: {BATCHES}
min_checkpoint_period:
  batches: {BATCHES}
scheduling_unit: 5
reproducibility:
  experiment_seed: 1
""")


def peak_rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def one_run(args, tmp, stage):
    """(optimizer state MB on a slot, the larger worker peak RSS MB) of one run at STAGE."""
    config = os.path.join(tmp, f"zero-{stage}.yaml")
    write_config(config, args.plugin_dir, stage)
    run_dir = os.path.join(tmp, f"run-{stage}")
    process = subprocess.Popen([args.cohort, "run", config, "--output", run_dir, "--cpu-slots",
                                "2"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    from cohort_cli import worker_pid  # after use_cli_helpers
    peaks = {}
    while process.poll() is None:
        for rank in (0, 1):
            pid = worker_pid(rank, run_dir)
            rss = peak_rss_mb(pid) if pid is not None else None
            if rss is not None:
                peaks[rank] = max(peaks.get(rank, 0), rss)
        time.sleep(0.1)
    out, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{NAME}: stage {stage} exited {process.returncode}:\n{out}\n{err}")
    if len(peaks) != 2:
        raise SystemExit(f"{NAME}: stage {stage}: saw the workers of ranks {sorted(peaks)}")
    if stage == 0:
        state = os.path.getsize(os.path.join(run_dir, "checkpoints", f"trial-1-batch-{BATCHES}",
                                             "optimizer")) / 1e6
    else:
        with open(os.path.join(run_dir, "trials", "1", "log.txt")) as f:
            said = re.search(r"optimizer state sharded over 2 slots \(optimizations.zero_stage "
                             rf"{stage}\): ([0-9.]+) MB on rank 0", f.read())
        if said is None:
            raise SystemExit(f"{NAME}: stage {stage}: rank 0's log does not say its state")
        state = float(said.group(1))
    print(f"{NAME}: stage {stage}: optimizer state {state:.1f} MB per slot, worker peak RSS "
          f"{max(peaks.values()):.0f} MB", flush=True)
    return state, max(peaks.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cohort")
    parser.add_argument("plugin_dir")
    parser.add_argument("--folder", default=None)
    args = parser.parse_args()
    args.cohort, args.plugin_dir = os.path.abspath(args.cohort), os.path.abspath(args.plugin_dir)
    ddp_common.use_cli_helpers(args.cohort, args.plugin_dir)
    parameters = INPUTS * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES
    with tempfile.TemporaryDirectory(prefix="cohort-zero-memory-", dir=args.folder) as tmp:
        results = {stage: one_run(args, tmp, stage) for stage in (0, 1, 2)}
    print(f"mlp of {parameters / 1e6:.1f} M parameters, Adam, 2 slots on CPUs")
    print(f"{'zero_stage':>10} {'state MB/slot':>14} {'peak RSS MB':>12}")
    for stage, (state, peak) in results.items():
        print(f"{stage:>10} {state:14.1f} {peak:12.0f}")
    base_state, base_peak = results[0]
    for stage in (1, 2):
        state, peak = results[stage]
        for key, value, peer in (("optimizer_state_mb", state, base_state),
                                 ("worker_peak_rss_mb", peak, base_peak)):
            print(json.dumps({"name": f"zero{stage}_{key}", "value": round(value, 1), "unit": "MB",
                              "peer": f"zero0_{key}", "peer_value": round(peer, 1),
                              "ratio": round(value / peer, 4)}))


if __name__ == "__main__":
    main()
