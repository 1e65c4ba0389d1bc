"""Cohort's mlp beside PyTorch DDP on CPUs: the same MLP, global batch and optimizer, at 1 and 2
processes, in one run, with records/s and the scaling efficiency of each.

Both sides train an MLP of 32 inputs, two hidden layers of HIDDEN units with ReLU, and 10 classes,
with Adam (learning rate 0.002), on synthetic data. The global batch BATCH stays the same at 1 and
2 processes (strong scaling: each of 2 processes trains BATCH / 2 records), so the efficiency is
records/s at 2 over twice records/s at 1.

- PyTorch: torch.distributed with the Gloo backend and DistributedDataParallel, each rank a
  process started by this script (`--torch-rank`), one compute thread each
  (torch.set_num_threads(1), OMP_NUM_THREADS=1), over loopback. Each rank draws its inputs and
  labels once, so data loading costs nothing. Rank 0 times BATCHES batches after WARMUP (20, in
  ddp_common.py, which holds what this script shares with ddp_gpu_comparison.py), between two
  barriers.
- Cohort: `cohort run` of the mlp plugin (plain C++ loops, no BLAS) with slots_per_trial 1 or 2
  and `--cpu-slots 2`. The figure comes from the training reports, as in mlp_scaling_bench.py:
  records between the first and the last report over the seconds between them. Start-up, the
  final validation and the checkpoint fall outside it. The last report's timings are printed
  too, saying where the 2-slot time went.

Usage: ddp_comparison.py COHORT_EXE PLUGIN_DIR [--hidden H] [--batch B] [--batches N]
                         [--repeats R]

Needs PyTorch (Debian: apt install python3-torch). Prints a table, then one JSON line per side
and width: {"name", "value" (records/s at 2), "unit", "peer" (the same side at 1), "peer_value",
"ratio" (the scaling efficiency)}. Each figure is the median over R repeats; the sides take
turns.
"""
import argparse
import json
import os
import statistics
import tempfile
import time

import ddp_common  # beside this script

NAME = "ddp_comparison"
INPUTS = 32
CLASSES = 10
LEARNING_RATE = 0.002


def mlp_of(args):
    """The network and global batch that --hidden and --batch ask for."""
    return ddp_common.Mlp(INPUTS, args.hidden, CLASSES, args.batch, LEARNING_RATE)


def torch_rank(args):
    """One DDP rank over Gloo, one compute thread: trains, and rank 0 prints its records/s as
    JSON."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)
    ddp_common.join_group("gloo", args.torch_rank, args.world, args.port)
    mlp = mlp_of(args)
    model = ddp_common.mlp_model(mlp)
    model = DistributedDataParallel(model) if args.world > 1 else model
    inputs, labels = ddp_common.synthetic_batch(mlp, args.world)
    step = ddp_common.adam_step(model, mlp.learning_rate, inputs, labels)
    ddp_common.time_training(args.torch_rank, len(inputs) * args.world, args.batches, step,
                             dist.barrier)
    dist.destroy_process_group()


def run_torch(args, world):
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    rate = ddp_common.run_ranks(
        NAME, __file__, world,
        ["--hidden", str(args.hidden), "--batch", str(args.batch), "--batches", str(args.batches)],
        lambda rank: env, timeout=1800)
    ddp_common.log(NAME, f"PyTorch DDP, {world} process(es): {rate:.0f} records/s")
    return rate


def run_cohort(args, slots, directory):
    run_dir = os.path.join(directory, f"run-{slots}-{time.monotonic_ns()}")
    config = ddp_common.write_experiment(
        os.path.join(directory, f"ddp-comparison-{slots}.yaml"), "ddp-comparison",
        os.path.join(args.plugin_dir, "mlp", "mlp.so"), mlp_of(args), slots, args.batches)
    ddp_common.run_cohort(NAME, [args.cohort, "run", config, "--output", run_dir,
                                 "--cpu-slots", "2"])
    rate, timings = ddp_common.training_rate(run_dir, 1)
    ddp_common.log(NAME, f"Cohort, {slots} slot(s): {rate:.0f} records/s; the last report's "
                         f"seconds: {timings}")
    return rate, timings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--batches", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    args = ddp_common.parse_arguments(parser, torch_rank)
    if args.batch % 2 != 0 or args.batches < 100 or args.repeats < 1:
        parser.error("needs an even --batch, --batches >= 100 and --repeats >= 1")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise SystemExit("ddp_comparison: needs PyTorch (Debian: apt install python3-torch)")

    rates = {(side, n): [] for side in ("pytorch", "cohort") for n in (1, 2)}
    where = None
    with tempfile.TemporaryDirectory(prefix="cohort-ddp-comparison-") as tmp:
        for _ in range(args.repeats):
            for n in (1, 2):
                rates[("pytorch", n)].append(run_torch(args, n))
                rate, timings = run_cohort(args, n, tmp)
                rates[("cohort", n)].append(rate)
                if n == 2:
                    where = timings
    median = {key: statistics.median(values) for key, values in rates.items()}
    shape = f"MLP {INPUTS}-{args.hidden}-{args.hidden}-{CLASSES}, global batch {args.batch}, Adam"
    print(f"{shape}; records/s, median of {args.repeats}")
    print(f"{'':10} {'1 process':>12} {'2 processes':>12} {'efficiency':>11}")
    for side in ("pytorch", "cohort"):
        one, two = median[(side, 1)], median[(side, 2)]
        print(f"{side:10} {one:12.0f} {two:12.0f} {two / (2 * one):11.2f}")
    print(f"Cohort at 2 slots, the last training report's seconds per phase: {where}")
    for side in ("pytorch", "cohort"):
        one, two = median[(side, 1)], median[(side, 2)]
        print(json.dumps({"name": f"{side}_mlp{args.hidden}_batch{args.batch}_records_per_s_2",
                          "value": round(two, 1), "unit": "records/s",
                          "peer": f"{side}_mlp{args.hidden}_batch{args.batch}_records_per_s_1",
                          "peer_value": round(one, 1), "ratio": round(two / (2 * one), 4)}),
              flush=True)


if __name__ == "__main__":
    main()
