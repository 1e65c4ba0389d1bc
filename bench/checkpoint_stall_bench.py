"""The training thread's stall per checkpoint, written in the background (checkpoint_storage.async,
the default) against written with training waiting (async: false), for parameter sets of about
100 MB and 1 GB, through the real CLI, taking turns in one run.

Each run is `cohort run` of the mlp plugin with one hidden layer, sized to the parameter set
(SGD with momentum, so a checkpoint holds the parameters and as much again of optimizer state),
on a global batch of 2 so that a batch stays short beside a checkpoint; it trains CHECKPOINTS
checkpoints' worth of batches with profiling on, a checkpoint every period_for(size) batches:
long enough, on the machine this was written on, for a background write to end before the next
checkpoint (otherwise the next one waits for it, and that wait is a stall too). From its timeline
(trials/1/timeline.json) come, per checkpoint:

  stall   the training thread's "taking a checkpoint" slice: copying the state into host memory,
          waiting for the write before it, and (synchronous) the write itself
  write   the "writing trial-1-batch-B" slice of rank 0's checkpoint writes thread: the hand-over
          to the checkpoint being whole (files written, fsynced and renamed into place)

The run folder is under --folder (default: the system's temporary folder; put it on the disk
the checkpoints would really go to).

With --slots N the trial runs at N CPU slots (rank 0's slices are measured), and with
--zero-stage S under optimizations.zero_stage S: each rank then keeps a shard of the optimizer
state. A synchronous checkpoint gathers the shards onto rank 0 on the training thread (a broadcast
from each owner), which is part of its stall; in the background, at the step boundary (part of the
stall), rank 0 lays out the whole state with its shard in place and the others copy theirs, and
the copies travel to rank 0 during the write.

With --gpu the model is the mlp_cuda plugin (the same MLP, its tensors and optimizer state on the
GPU) on one GPU slot (`cohort run --gpus`): there the background capture copies the state from
the device into page-locked host memory, and the writer's thread moves it into the checkpoint.

Usage: checkpoint_stall_bench.py COHORT_EXE PLUGIN_DIR [--sizes 100,1000] [--repeats 2]
                                  [--folder DIR] [--slots N] [--zero-stage S] [--gpu]

Prints a table and JSON lines {"name": "checkpoint_stall_<MB>mb", "value" (the median stall in the
background, s), "unit", "peer": "synchronous checkpoint", "peer_value", "ratio", ...}: medians over
every checkpoint but each run's first, which is shown apart (its capture fills fresh buffers).
"""
import argparse
import json
import os
import statistics
import tempfile

import ddp_common  # beside this script: log, run_cohort

NAME = "checkpoint_stall_bench"
CHECKPOINTS = 6
INPUTS = 4096
CLASSES = 10


def hidden_for(megabytes):
    """The hidden width that gives one hidden layer's MLP about MEGABYTES of float32 parameters."""
    return max(1, round(megabytes * 1e6 / 4 / (INPUTS + 1 + CLASSES)))


def period_for(megabytes):
    """Batches between checkpoints: 10 for 100 MB, 30 for 1 GB (whose 2 GB took 5 - 10 s to write
    on a 2-core VM: longer than 10 batches, which made the next checkpoint wait)."""
    return max(10, 3 * megabytes // 100)


def write_config(path, plugin_dir, hidden, period, slots=1, zero_stage=0, gpu=False):
    plugin = os.path.join("mlp_cuda", "mlp_cuda.so") if gpu else os.path.join("mlp", "mlp.so")
    with open(path, "w") as f:
        f.write(f"""\
name: checkpoint-stall
entrypoint: {os.path.join(plugin_dir, plugin)}
hyperparameters:
  global_batch_size: 2
  optimizer: sgd
  learning_rate: 0.001
  momentum: 0.9
  hidden_size: {hidden}
  hidden_layers: 1
  synthetic_input_dim: {INPUTS}
  synthetic_classes: {CLASSES}
  synthetic_train_records: 64
  synthetic_validation_records: 2
searcher:
  name: single
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: {CHECKPOINTS * period}
min_checkpoint_period:
  batches: {period}
checkpoint_policy: none
checkpoint_storage:
  save_trial_latest: 1
scheduling_unit: 1
profiling:
  enabled: true
resources:
  slots_per_trial: {slots}
optimizations:
  zero_stage: {zero_stage}
reproducibility:
  experiment_seed: 1
""")


def one_run(args, config, run_dir, background, period):
    """(stalls, writes, checkpoint bytes) of one run, in seconds, one per checkpoint."""
    slots = ["--gpus"] if args.gpu else ["--cpu-slots", str(args.slots)]
    ddp_common.run_cohort(NAME, [args.cohort, "run", config, "--output", run_dir, "--set",
                                 f"checkpoint_storage.async={'true' if background else 'false'}"]
                          + slots, timeout=1800)
    with open(os.path.join(run_dir, "trials", "1", "timeline.json")) as f:
        events = json.load(f)["traceEvents"]
    rank0 = {e["pid"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name" and e["args"]["name"] == "rank 0"}
    slices = [e for e in events if e["ph"] == "X" and e["pid"] in rank0]
    stalls = [e["dur"] / 1e6 for e in slices if e["name"] == "taking a checkpoint"]
    writes = [e["dur"] / 1e6 for e in slices if e["name"].startswith("writing trial-")]
    folder = os.path.join(run_dir, "checkpoints", f"trial-1-batch-{CHECKPOINTS * period}")
    size = sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder))
    if len(stalls) != CHECKPOINTS or len(writes) != len(stalls):
        raise SystemExit(f"{NAME}: {len(stalls)} checkpoints taken and {len(writes)} written in "
                         f"{run_dir}; expected {CHECKPOINTS}")
    return stalls, writes, size


def steady(stalls, writes, repeats):
    """(median stall, median write, median first stall) of every run's checkpoints: the medians
    leave out each run's first checkpoint, whose capture fills fresh buffers (a page fault per
    page); later captures reuse the buffers of the checkpoint before."""
    per_run = len(stalls) // repeats
    later = [i for i in range(len(stalls)) if i % per_run]
    return (statistics.median(stalls[i] for i in later),
            statistics.median(writes[i] for i in later),
            statistics.median(stalls[i] for i in range(0, len(stalls), per_run)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cohort")
    parser.add_argument("plugin_dir")
    parser.add_argument("--sizes", default="100,1000", help="parameter sets, in MB")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--folder", default=None)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--zero-stage", type=int, default=0, choices=(0, 1, 2))
    parser.add_argument("--gpu", action="store_true",
                        help="the mlp_cuda plugin on one GPU slot (--slots 1 only)")
    args = parser.parse_args()
    if args.gpu and args.slots != 1:
        parser.error("--gpu runs one GPU slot: --slots 1")
    args.cohort, args.plugin_dir = os.path.abspath(args.cohort), os.path.abspath(args.plugin_dir)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.repeats < 1 or any(s < 1 for s in sizes):
        parser.error("--repeats >= 1 and sizes >= 1 MB")
    rows = []
    with tempfile.TemporaryDirectory(prefix="cohort-checkpoint-stall-", dir=args.folder) as tmp:
        for megabytes in sizes:
            hidden = hidden_for(megabytes)
            config = os.path.join(tmp, f"stall-{megabytes}.yaml")
            period = period_for(megabytes)
            write_config(config, args.plugin_dir, hidden, period, args.slots, args.zero_stage,
                         args.gpu)
            found = {True: ([], []), False: ([], [])}
            size = 0
            for repeat in range(args.repeats):
                for background in (True, False):  # taking turns
                    run_dir = os.path.join(tmp, f"run-{megabytes}-{repeat}-{background}")
                    stalls, writes, size = one_run(args, config, run_dir, background, period)
                    found[background][0].extend(stalls)
                    found[background][1].extend(writes)
                    mode = "background" if background else "synchronous"
                    ddp_common.log(NAME, f"{megabytes} MB {mode}: stalls "
                                   f"{[round(s, 4) for s in stalls]} s, writes "
                                   f"{[round(w, 4) for w in writes]} s")
            rows.append((megabytes, hidden, size, {b: steady(s, w, args.repeats)
                                                   for b, (s, w) in found.items()}))
    print(f"{'parameters':>10} {'checkpoint':>10} {'stall async':>12} {'stall sync':>11} "
          f"{'ratio':>6} {'write async':>12} {'write sync':>11} {'first async':>12} "
          f"{'first sync':>11}")
    lines = []
    for megabytes, hidden, size, medians in rows:
        (stall_async, write_async, first_async) = medians[True]
        (stall_sync, write_sync, first_sync) = medians[False]
        print(f"{megabytes:>7} MB {size / 1e6:>7.0f} MB {stall_async:>10.4f} s {stall_sync:>9.4f} s "
              f"{stall_async / stall_sync:>6.3f} {write_async:>10.4f} s {write_sync:>9.4f} s "
              f"{first_async:>10.4f} s {first_sync:>9.4f} s")
        name = f"checkpoint_stall_{megabytes}mb" + ("_gpu" if args.gpu else "")
        lines.append(json.dumps({
            "name": name, "value": round(stall_async, 4), "unit": "s",
            "peer": "synchronous checkpoint", "peer_value": round(stall_sync, 4),
            "ratio": round(stall_async / stall_sync, 4), "checkpoint_bytes": size,
            "hidden_size": hidden, "write_seconds_async": round(write_async, 4),
            "write_seconds_sync": round(write_sync, 4), "first_stall_async": round(first_async, 4),
            "first_stall_sync": round(first_sync, 4)}))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
