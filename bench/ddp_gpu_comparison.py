"""Cohort beside PyTorch DDP on one NVIDIA GPU: the same MLP, global batch and optimizer, at 1 and 2
ranks, uncompressed and with fp16 and PowerSGD gradients, in one run; exits 77 (skipped) without
a GPU or without PyTorch with CUDA.

Both sides train an MLP of 1024 inputs, two hidden layers of 4096 units with ReLU, and 10 classes
(21 M parameters, an 84 MB gradient), with Adam (learning rate 0.001), global batch 1024 (512 per
rank at 2), for BATCHES batches after a warm-up. The two ranks share the one GPU, and each rank
has its own NCCL_HOSTID, so NCCL takes them for two machines and joins them through its socket
transport over loopback (NCCL_SOCKET_IFNAME=lo, InfiniBand off), as between machines.

- PyTorch: DistributedDataParallel over the NCCL backend, each rank a process started by this
  script (`--torch-rank`), also at 1 rank so that the gradients go through the hook there too.
  Compression: none, the fp16 hook (default_hooks.fp16_compress_hook), or the PowerSGD hook
  (matrix_approximation_rank 4, start_powerSGD_iter 2, the smallest it allows). Each rank draws
  its batch on the GPU once; rank 0 times BATCHES steps between two barriers after the device is
  idle.
- Cohort: the mlp_cuda plugin with the same shape (16,384 synthetic training records, which it
  keeps on the GPU and gathers there by index for each batch; each batch's loss is read back,
  which the PyTorch loop does not do). 2 ranks: `cohort orchestrator` and two `cohort agent`s
  (`--slots auto`, the one GPU each, NCCL_HOSTID host-a and host-b), a 2-slot trial over both.
  1 rank: `cohort run --gpus` with COHORT_EXCHANGE_AT_ONE_SLOT=1, so the gradients go through the
  exchange and NCCL as DDP's do at world size 1. optimizations.gradient_compression: false, fp16
  or {type: powersgd, rank: 4, start_iter: 2}. The figure comes from the training reports:
  records between the first and the last report over the seconds between them (start-up, the
  final validation and the checkpoint fall outside it).

Usage: ddp_gpu_comparison.py COHORT_EXE PLUGIN_DIR [--batches N] [--repeats R]
                             [--compression none,fp16,powersgd]

Prints a table (records/s, the median of R repeats, the sides taking turns), then one JSON line
per compression and rank count: {"name" (Cohort's records/s), "value", "unit", "peer" (DDP's, in
the same run), "peer_value", "ratio" (Cohort / DDP)}. Meant for a machine with one GPU: with more,
the agents offer them all and the 2-slot trial may land on two GPUs of one agent.
"""
import argparse
import json
import os
import shutil
import statistics
import tempfile
import time

import ddp_common  # beside this script

NAME = "ddp_gpu_comparison"
INPUTS = 1024
HIDDEN = 4096
CLASSES = 10
BATCH = 1024
LEARNING_RATE = 0.001
MLP = ddp_common.Mlp(INPUTS, HIDDEN, CLASSES, BATCH, LEARNING_RATE)
POWERSGD_RANK = 4
POWERSGD_START = 2
COMPRESSIONS = ("none", "fp16", "powersgd")
COHORT_COMPRESSION = {
    "none": "false",
    "fp16": "fp16",
    "powersgd": f"{{type: powersgd, rank: {POWERSGD_RANK}, start_iter: {POWERSGD_START}}}",
}
# Every rank and worker: NCCL over its socket transport on loopback.
NCCL_ENVIRONMENT = {"NCCL_SOCKET_IFNAME": "lo", "NCCL_IB_DISABLE": "1"}


def torch_rank(args):
    """One DDP rank on GPU 0: trains, and rank 0 prints its records/s as JSON."""
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
    from torch.nn.parallel import DistributedDataParallel

    torch.cuda.set_device(0)
    ddp_common.join_group("nccl", args.torch_rank, args.world, args.port)
    model = DistributedDataParallel(ddp_common.mlp_model(MLP).cuda(), device_ids=[0])
    if args.compression == "fp16":
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif args.compression == "powersgd":
        state = powerSGD_hook.PowerSGDState(process_group=None,
                                            matrix_approximation_rank=POWERSGD_RANK,
                                            start_powerSGD_iter=POWERSGD_START)
        model.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    inputs, labels = ddp_common.synthetic_batch(MLP, args.world, device="cuda")
    step = ddp_common.adam_step(model, MLP.learning_rate, inputs, labels)

    def settle():
        torch.cuda.synchronize()
        dist.barrier(device_ids=[0])

    ddp_common.time_training(args.torch_rank, len(inputs) * args.world, args.batches, step,
                             settle)
    dist.destroy_process_group()


def run_torch(args, world, compression):
    rate = ddp_common.run_ranks(
        NAME, __file__, world, ["--batches", str(args.batches), "--compression", compression],
        lambda rank: dict(os.environ, CUDA_VISIBLE_DEVICES="0", NCCL_HOSTID=f"host-{rank}",
                          **NCCL_ENVIRONMENT),
        timeout=600)
    ddp_common.log(NAME, f"PyTorch DDP, {world} rank(s), {compression}: {rate:.0f} records/s")
    return rate


def cohort_config(directory, args, slots, compression, profiled=False):
    """The experiment of one side and width; `profiled` adds a timeline of 10 batches from the
    middle of the run (profiling.begin_on_batch, end_after_batch)."""
    middle = args.batches // 2
    profiling = (f"profiling:\n  enabled: true\n  begin_on_batch: {middle}\n"
                 f"  end_after_batch: {middle + 10}\n") if profiled else ""
    name = f"ddp-gpu-{compression}-{slots}" + ("-profiled" if profiled else "")
    return ddp_common.write_experiment(
        os.path.join(directory, f"{name}.yaml"), name,
        os.path.join(args.plugin_dir, "mlp_cuda", "mlp_cuda.so"), MLP, slots, args.batches,
        hyperparameters="  synthetic_train_records: 16384\n"
                        "  synthetic_validation_records: 1024\n",
        sections=f"optimizations:\n  gradient_compression: {COHORT_COMPRESSION[compression]}\n"
                 "max_restarts: 0\n" + profiling)


def rate_of(run_dir, trial_id, label):
    rate, timings = ddp_common.training_rate(run_dir, trial_id)
    ddp_common.log(NAME, f"Cohort, {label}: {rate:.0f} records/s; the last report's seconds: "
                         f"{timings}")
    return rate, timings


def run_one_slot(args, compression, directory, profiled=False):
    """`cohort run --gpus` of one slot, its gradients through the exchange and NCCL: its run
    folder."""
    run_dir = os.path.join(directory, f"run-1-{compression}-{time.monotonic_ns()}")
    command = [args.cohort, "run", "--gpus",
               cohort_config(directory, args, 1, compression, profiled), "--output", run_dir]
    env = dict(os.environ, COHORT_EXCHANGE_AT_ONE_SLOT="1", **NCCL_ENVIRONMENT)
    ddp_common.run_cohort(NAME, command, env=env, timeout=600)
    return run_dir


def run_cohort_one(args, compression, directory):
    """A 1-slot trial (run_one_slot)."""
    return rate_of(run_one_slot(args, compression, directory), 1, f"1 slot, {compression}")


def run_two_slots(cluster, config, label):
    """Submits `config` to the cluster's two agents and waits for it: its run folder and trial."""
    from cohort_cli import experiment
    experiment_id = cluster.submit(config)
    state = cluster.wait_ended(experiment_id, 600)
    if state != "completed":
        raise SystemExit(f"{NAME}: the {label} experiment ended {state}:\n"
                         f"{cluster.logs()[-6000:]}")
    run_dir = os.path.join(cluster.state, "experiments", str(experiment_id))
    return run_dir, experiment(run_dir)["trials"][0]["id"]


def run_cohort_two(args, cluster, compression, directory):
    """A 2-slot trial over the cluster's two agents."""
    run_dir, trial_id = run_two_slots(
        cluster, cohort_config(directory, args, 2, compression), f"2-slot {compression}")
    return rate_of(run_dir, trial_id, f"2 slots over two agents, {compression}")


def save_timelines(args, cluster, compression, directory):
    """A profiled 1-slot and 2-slot run apart from the timed ones (profiling costs a little),
    their merged timelines copied to args.timelines as cohort-<n>slot-<compression>.json: where a
    step's time goes on each rank, bucket by bucket (docs/observability.md)."""
    from cohort_cli import wait_for
    os.makedirs(args.timelines, exist_ok=True)
    timeline = os.path.join(run_one_slot(args, compression, directory, profiled=True), "trials",
                            "1", "timeline.json")
    wait_for(lambda: os.path.exists(timeline), 60, f"{timeline} to be merged")
    shutil.copyfile(timeline, os.path.join(args.timelines, f"cohort-1slot-{compression}.json"))
    run_dir, trial_id = run_two_slots(
        cluster, cohort_config(directory, args, 2, compression, profiled=True),
        f"profiled {compression}")
    timeline = os.path.join(run_dir, "trials", str(trial_id), "timeline.json")
    wait_for(lambda: os.path.exists(timeline), 60, f"{timeline} to be merged")
    shutil.copyfile(timeline, os.path.join(args.timelines, f"cohort-2slot-{compression}.json"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--compression", default=",".join(COMPRESSIONS))
    parser.add_argument("--timelines", metavar="DIR",
                        help="also run each Cohort side (1 and 2 slots) once with profiling and "
                             "copy its timeline into DIR")
    args = ddp_common.parse_arguments(parser, torch_rank)
    compressions = args.compression.split(",")
    if any(c not in COMPRESSIONS for c in compressions):
        parser.error(f"--compression takes a list of {', '.join(COMPRESSIONS)}")
    if args.batches < 100 or args.repeats < 1:
        parser.error("needs --batches >= 100 and --repeats >= 1")
    args.cohort, args.plugin_dir = os.path.abspath(args.cohort), os.path.abspath(args.plugin_dir)

    ddp_common.require_gpu_torch(NAME)

    ddp_common.use_cli_helpers(args.cohort, args.plugin_dir)
    os.environ.update(NCCL_ENVIRONMENT)

    rates = {(side, n, c): [] for side in ("ddp", "cohort") for n in (1, 2) for c in compressions}
    where = {}
    with tempfile.TemporaryDirectory(prefix="cohort-ddp-gpu-") as tmp:
        from cluster import two_agent_cluster
        with two_agent_cluster(os.path.join(tmp, "cluster")) as cluster:
            for _ in range(args.repeats):
                for c in compressions:
                    for n in (1, 2):
                        rates[("ddp", n, c)].append(run_torch(args, n, c))
                    rate, where[(1, c)] = run_cohort_one(args, c, tmp)
                    rates[("cohort", 1, c)].append(rate)
                    rate, where[(2, c)] = run_cohort_two(args, cluster, c, tmp)
                    rates[("cohort", 2, c)].append(rate)
            if args.timelines:
                for c in compressions:
                    save_timelines(args, cluster, c, tmp)

    median = {key: statistics.median(values) for key, values in rates.items()}
    print(f"MLP {INPUTS}-{HIDDEN}-{HIDDEN}-{CLASSES}, global batch {BATCH}, Adam, {args.batches} "
          f"batches, one GPU, NCCL over sockets; records/s, median of {args.repeats}")
    print(f"{'compression':12} {'DDP 1':>10} {'DDP 2':>10} {'Cohort 1':>10} {'Cohort 2':>10} "
          f"{'ratio 1':>8} {'ratio 2':>8}")
    for c in compressions:
        d1, d2 = median[("ddp", 1, c)], median[("ddp", 2, c)]
        c1, c2 = median[("cohort", 1, c)], median[("cohort", 2, c)]
        print(f"{c:12} {d1:10.0f} {d2:10.0f} {c1:10.0f} {c2:10.0f} {c1 / d1:8.2f} {c2 / d2:8.2f}")
    for c in compressions:
        for n in (1, 2):
            print(f"Cohort at {n} slot(s), {c}, the last training report's seconds per phase: "
                  f"{where[(n, c)]}")
    for c in compressions:
        for n in (1, 2):
            value, peer = median[("cohort", n, c)], median[("ddp", n, c)]
            print(json.dumps({"name": f"cohort_gpu_mlp{HIDDEN}_{c}_records_per_s_{n}",
                              "value": round(value, 1), "unit": "records/s",
                              "peer": f"ddp_gpu_mlp{HIDDEN}_{c}_records_per_s_{n}",
                              "peer_value": round(peer, 1), "ratio": round(value / peer, 4)}),
                  flush=True)


if __name__ == "__main__":
    main()
