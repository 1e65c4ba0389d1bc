"""Cohort's LibTorch examples beside PyTorch on one NVIDIA GPU: torch_cnn and torch_gpt at 1 and
2 ranks, in one run, the sides taking turns. Exits 77 (skipped) without a GPU, without PyTorch
with CUDA, or without torch plugins built with CUDA in PLUGIN_DIR.

The same kernels run on both sides: the plugins are built by scripts/build-torch-plugins against
the PyTorch that runs the other side, and both make cuDNN deterministic.

- PyTorch: each rank a process of this script (`--torch-rank`), the model of
  bench/torch_<model>_ddp.py on the GPU with the example's optimizer. At 1 rank the plain loop
  (no DDP, no exchange); at 2, DistributedDataParallel over NCCL (the CNN with
  broadcast_buffers=False, as Cohort leaves each rank its own BatchNorm statistics). Each rank
  draws its batch on the GPU once, so data costs nothing; rank 0 times BATCHES steps between two
  barriers after the device is idle.
- Cohort: at 1 slot `cohort run --gpus` (no exchange, as the plain loop); at 2, a 2-slot trial over
  two agents (`cohort orchestrator`, two `cohort agent`s each offering the GPU, NCCL_HOSTID
  host-a and host-b), so NCCL joins the ranks through its socket transport as between machines,
  as it does the DDP ranks (their own NCCL_HOSTID). Records/s between the first and the last
  training report; the plugins read each batch's records on the CPU (torch_cnn draws its
  synthetic shapes, torch_gpt cuts its text windows) and copy them to the GPU, which the PyTorch
  side does not.

With --zero-stage S (1 or 2; torch_gpt only, whose Adam is Cohort's built-in one), only the
2-rank sides run: Cohort's with optimizations.zero_stage S, PyTorch's DDP with its Adam wrapped in
torch's ZeroRedundancyOptimizer; the names below end in _zero<S>.

Usage: torch_gpu_comparison.py COHORT_EXE PLUGIN_DIR [--models cnn,gpt] [--batches N]
                               [--repeats R] [--cnn-batch B] [--gpt-batch B] [--zero-stage S]

Prints a table per model, then JSON lines, each a median over R repeats: Cohort's records/s at 1
slot against the plain PyTorch loop's, and at 2 against DDP's.
"""
import argparse
import json
import os
import statistics
import tempfile
import time

import ddp_common  # beside this script
import torch_comparison  # beside this script: the models and their config

NAME = "torch_gpu_comparison"
NCCL_ENVIRONMENT = {"NCCL_SOCKET_IFNAME": "lo", "NCCL_IB_DISABLE": "1"}
MODELS = torch_comparison.MODELS


def step_of(args, world):
    """(the rank's training step, its records per step) for args.model on the GPU."""
    from torch.nn.parallel import DistributedDataParallel
    hyper = MODELS[args.model]["hyperparameters"]
    if args.model == "cnn":
        import torch_cnn_ddp as side
        cnn = side.Cnn(hyper["width"], args.batch, hyper["learning_rate"], hyper["momentum"])
        model = side.cnn_model(cnn).cuda().train()
        if world > 1:
            model = DistributedDataParallel(model, device_ids=[0], broadcast_buffers=False)
        images, labels = side.synthetic_batch(cnn, world)
        images, labels = images.cuda(), labels.cuda()
        return side.sgd_step(model, cnn, images, labels), len(images)
    import torch_gpt_ddp as side
    gpt = side.Gpt(hyper["context"], hyper["embedding"], hyper["heads"], hyper["layers"],
                   args.batch, hyper["learning_rate"])
    corpus = side.Corpus(side.default_text(), gpt.context)
    model = side.gpt_model(gpt, len(corpus.vocabulary)).cuda()
    if world > 1:
        model = DistributedDataParallel(model, device_ids=[0])
    inputs, targets = next(side.batches(gpt, corpus, world, args.torch_rank))
    inputs, targets = inputs.cuda(), targets.cuda()
    zero = args.zero_stage > 0 and world > 1
    return side.adam_step(model, gpt.learning_rate, inputs, targets, zero=zero), len(inputs)


def torch_rank(args):
    """One rank on GPU 0: trains, and rank 0 prints its records/s as JSON."""
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    ddp_common.join_group("nccl", args.torch_rank, args.world, args.port)
    step, records = step_of(args, args.world)

    def settle():
        torch.cuda.synchronize()
        dist.barrier(device_ids=[0])

    ddp_common.time_training(args.torch_rank, records * args.world, args.batches, step, settle)
    dist.destroy_process_group()


def run_torch(args, model, world):
    rate = ddp_common.run_ranks(
        NAME, __file__, world, ["--batches", str(args.batches), "--model", model,
                                "--batch", str(args.batch_of[model]),
                                "--zero-stage", str(args.zero_stage)],
        lambda rank: dict(os.environ, CUDA_VISIBLE_DEVICES="0", NCCL_HOSTID=f"host-{rank}",
                          **NCCL_ENVIRONMENT),
        timeout=600)
    label = "plain PyTorch loop" if world == 1 else "PyTorch DDP, 2 ranks"
    ddp_common.log(NAME, f"{model}: {label}: {rate:.0f} records/s")
    return rate


def config(args, model, slots, directory):
    plugin = os.path.join(args.plugin_dir, f"torch_{model}", f"torch_{model}.so")
    path, _ = torch_comparison.write_config(
        os.path.join(directory, f"{model}-{slots}-{time.monotonic_ns()}.yaml"), plugin, model,
        slots, args.batches, batch=args.batch_of[model],
        zero_stage=args.zero_stage if slots > 1 else 0)
    return path


def run_cohort_one(args, model, directory):
    run_dir = os.path.join(directory, f"run-{model}-1-{time.monotonic_ns()}")
    ddp_common.run_cohort(NAME, [args.cohort, "run", "--gpus", config(args, model, 1, directory),
                                 "--output", run_dir], timeout=600)
    rate, timings = ddp_common.training_rate(run_dir, 1)
    ddp_common.log(NAME, f"{model}: Cohort, 1 slot: {rate:.0f} records/s; the last report's "
                         f"seconds: {timings}")
    return rate


def run_cohort_two(args, cluster, model, directory):
    from cohort_cli import experiment
    experiment_id = cluster.submit(config(args, model, 2, directory))
    state = cluster.wait_ended(experiment_id, 600)
    if state != "completed":
        raise SystemExit(f"{NAME}: the 2-slot {model} experiment ended {state}:\n"
                         f"{cluster.logs()[-6000:]}")
    run_dir = os.path.join(cluster.state, "experiments", str(experiment_id))
    rate, timings = ddp_common.training_rate(run_dir, experiment(run_dir)["trials"][0]["id"])
    unit = max(10, args.batches // 10)
    exposed_ms = 1000 * timings.get("exchange_wait", 0.0) / unit
    ddp_common.log(NAME, f"{model}: Cohort, 2 slots over two agents: {rate:.0f} records/s; the "
                         f"last report's seconds: {timings}")
    return rate, exposed_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="cnn,gpt")
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--cnn-batch", type=int, default=256)
    parser.add_argument("--gpt-batch", type=int, default=128)
    parser.add_argument("--zero-stage", type=int, default=0, choices=(0, 1, 2))
    parser.add_argument("--model", choices=sorted(MODELS), help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    args = ddp_common.parse_arguments(parser, torch_rank)
    models = [m for m in args.models.split(",") if m]
    if any(m not in MODELS for m in models) or args.repeats < 1 or args.batches < 100:
        parser.error(f"--models takes a list of {', '.join(MODELS)}; --repeats >= 1; "
                     "--batches >= 100")
    if args.cnn_batch % 2 or args.gpt_batch % 2:
        parser.error("the global batches must be even (two ranks share them)")
    if args.zero_stage and models != ["gpt"]:
        parser.error("--zero-stage needs --models gpt (only torch_gpt_ddp.py takes ZeRO)")
    ranks = (2,) if args.zero_stage else (1, 2)  # ZeRO shards over 2 ranks; at 1 it is a no-op
    args.batch_of = {"cnn": args.cnn_batch, "gpt": args.gpt_batch}
    args.cohort, args.plugin_dir = os.path.abspath(args.cohort), os.path.abspath(args.plugin_dir)

    ddp_common.require_gpu_torch(NAME)
    for model in models:
        if not os.path.exists(os.path.join(args.plugin_dir, f"torch_{model}",
                                           f"torch_{model}.so")):
            ddp_common.skip(NAME, f"no torch_{model} plugin in {args.plugin_dir} "
                                  "(scripts/build-torch-plugins)")

    ddp_common.use_cli_helpers(args.cohort, args.plugin_dir)
    os.environ.update(NCCL_ENVIRONMENT)
    rates = {(side, model, n): [] for side in ("torch", "cohort") for model in models
             for n in ranks}
    exposed = {model: [] for model in models}
    with tempfile.TemporaryDirectory(prefix="cohort-torch-gpu-") as tmp:
        from cluster import two_agent_cluster
        with two_agent_cluster(os.path.join(tmp, "cluster")) as cluster:
            for _ in range(args.repeats):
                for model in models:
                    for n in ranks:
                        rates[("torch", model, n)].append(run_torch(args, model, n))
                    if 1 in ranks:
                        rates[("cohort", model, 1)].append(run_cohort_one(args, model, tmp))
                    rate, exposed_ms = run_cohort_two(args, cluster, model, tmp)
                    rates[("cohort", model, 2)].append(rate)
                    exposed[model].append(exposed_ms)

    median = {key: statistics.median(values) for key, values in rates.items()}
    zero = f"_zero{args.zero_stage}" if args.zero_stage else ""
    results = []
    for model in models:
        t2, c2 = median[("torch", model, 2)], median[("cohort", model, 2)]
        print(f"torch_{model} on one GPU, global batch {args.batch_of[model]}, {args.batches} "
              f"batches; records/s, median of {args.repeats}"
              + (f"; ZeRO stage {args.zero_stage} (PyTorch: ZeroRedundancyOptimizer)"
                 if args.zero_stage else ""))
        if 1 in ranks:
            t1, c1 = median[("torch", model, 1)], median[("cohort", model, 1)]
            print(f"{'':14} {'1 rank':>10} {'2 ranks':>10} {'efficiency':>11}")
            print(f"{'PyTorch':14} {t1:10.0f} {t2:10.0f} {t2 / (2 * t1):11.2f}")
            print(f"{'Cohort':14} {c1:10.0f} {c2:10.0f} {c2 / (2 * c1):11.2f}")
            print(f"Cohort / PyTorch: {c1 / t1:.3f} at 1 rank (plain loop), {c2 / t2:.3f} at 2 "
                  f"(DDP)")
        else:
            print(f"PyTorch {t2:.0f}, Cohort {c2:.0f} at 2 ranks: Cohort / PyTorch {c2 / t2:.3f}")
        print(f"exchange left exposed at 2 slots: {statistics.median(exposed[model]):.2f} ms per "
              f"batch")
        for n in ranks:
            peer = "plain_torch" if n == 1 else "ddp"
            value, peer_value = median[("cohort", model, n)], median[("torch", model, n)]
            results.append({"name": f"cohort_gpu_{model}_records_per_s_{n}{zero}",
                            "value": round(value, 1), "unit": "records/s",
                            "peer": f"{peer}_gpu_{model}_records_per_s_{n}{zero}",
                            "peer_value": round(peer_value, 1),
                            "ratio": round(value / peer_value, 4)})
    for entry in results:
        print(json.dumps(entry), flush=True)


if __name__ == "__main__":
    main()
