"""Cohort's mlp beside PyTorch DDP on CPUs: the same MLP, global batch and optimizer, at 1 and 2
processes, in one run, with records/s and the scaling efficiency of each.

Both sides train an MLP of 32 inputs, two hidden layers of HIDDEN units with ReLU, and 10 classes,
with Adam (learning rate 0.002), on synthetic data. The global batch BATCH stays the same at 1 and
2 processes (strong scaling: each of 2 processes trains BATCH / 2 records), so the efficiency is
records/s at 2 over twice records/s at 1.

- PyTorch: torch.distributed with the Gloo backend and DistributedDataParallel, each rank a
  process started by this script (`--torch-rank`), one compute thread each
  (torch.set_num_threads(1), OMP_NUM_THREADS=1), over loopback. Each rank draws its inputs and
  labels once, so data loading costs nothing. Rank 0 times BATCHES batches after WARMUP, between
  two barriers.
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
import socket
import statistics
import subprocess
import sys
import tempfile
import time

INPUTS = 32
CLASSES = 10
LEARNING_RATE = 0.002
WARMUP = 20


def log(message):
    print(f"ddp_comparison: {message}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torch_rank(args):
    """One DDP rank: trains, and rank 0 prints its records/s as JSON."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)
    torch.manual_seed(args.torch_rank)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}",
                            rank=args.torch_rank, world_size=args.world)
    model = torch.nn.Sequential(
        torch.nn.Linear(INPUTS, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, CLASSES))
    model = DistributedDataParallel(model) if args.world > 1 else model
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    loss_fn = torch.nn.CrossEntropyLoss()
    per_rank = args.batch // args.world
    inputs = torch.randn(per_rank, INPUTS)
    labels = torch.randint(0, CLASSES, (per_rank,))

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(inputs), labels).backward()
        optimizer.step()

    for _ in range(WARMUP):
        step()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(args.batches):
        step()
    dist.barrier()
    seconds = time.perf_counter() - start
    if args.torch_rank == 0:
        print(json.dumps({"records_per_second": per_rank * args.world * args.batches / seconds}))
    dist.destroy_process_group()


def run_torch(args, world):
    port = free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    ranks = [subprocess.Popen(
        [sys.executable, __file__, "--torch-rank", str(rank), "--world", str(world),
         "--port", str(port), "--hidden", str(args.hidden), "--batch", str(args.batch),
         "--batches", str(args.batches)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for rank in range(world)]
    outputs = [rank.communicate(timeout=1800) for rank in ranks]
    for rank, (out, err) in zip(ranks, outputs):
        if rank.returncode != 0:
            raise SystemExit(f"ddp_comparison: a PyTorch rank exited {rank.returncode}:\n{err}")
    rate = json.loads(outputs[0][0].strip().splitlines()[-1])["records_per_second"]
    log(f"PyTorch DDP, {world} process(es): {rate:.0f} records/s")
    return rate


def cohort_config(directory, args, slots):
    unit = max(10, args.batches // 20)
    path = os.path.join(directory, f"ddp-comparison-{slots}.yaml")
    with open(path, "w") as f:
        f.write(f"""\
name: ddp-comparison
entrypoint: {os.path.join(args.plugin_dir, "mlp", "mlp.so")}
hyperparameters:
  global_batch_size: {args.batch}
  optimizer: adam
  learning_rate: {LEARNING_RATE}
  hidden_size: {args.hidden}
  hidden_layers: 2
  synthetic_input_dim: {INPUTS}
  synthetic_classes: {CLASSES}
resources:
  slots_per_trial: {slots}
searcher:
  name: single
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: {args.batches + unit}
min_validation_period:
  batches: {args.batches + unit}
min_checkpoint_period:
  batches: {args.batches + unit}
scheduling_unit: {unit}
reproducibility:
  experiment_seed: 1
""")
    return path


def run_cohort(args, slots, directory):
    run_dir = os.path.join(directory, f"run-{slots}-{time.monotonic_ns()}")
    command = [args.cohort, "run", cohort_config(directory, args, slots), "--output", run_dir,
               "--cpu-slots", "2"]
    result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"ddp_comparison: {' '.join(command)} exited {result.returncode}:\n"
                         f"{result.stdout}\n{result.stderr}")
    with open(os.path.join(run_dir, "trials", "1", "metrics.jsonl")) as f:
        reports = [json.loads(line) for line in f if line.strip()]
    training = [r for r in reports if r["kind"] == "training"]
    first, last = training[0], training[-1]
    rate = (last["records"] - first["records"]) / (last["time"] - first["time"])
    timings = {phase: round(seconds, 4) for phase, seconds in last.get("timings", {}).items()}
    log(f"Cohort, {slots} slot(s): {rate:.0f} records/s; the last report's seconds: {timings}")
    return rate, timings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cohort", nargs="?")
    parser.add_argument("plugin_dir", nargs="?")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--batches", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--torch-rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--world", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_rank is not None:
        return torch_rank(args)
    if not args.cohort or not args.plugin_dir:
        parser.error("COHORT_EXE and PLUGIN_DIR are required")
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
