"""A GPU trial spanning two agents, NCCL between them over its socket transport; exits 77
(skipped) without an NVIDIA GPU.

`cohort orchestrator` and two `cohort agent`s on loopback (cluster.py), each agent offering the
machine's GPUs (`--slots auto`) with its own NCCL_HOSTID (host-a, host-b) and NCCL_SOCKET_IFNAME=lo,
InfiniBand off: NCCL takes the two agents' workers for two machines, even on the same GPU, and
joins them through NET/Socket over loopback. The trial asks for every GPU slot of both agents
(2 on a one-GPU machine), so it spans them. mlp_cuda as in gpu_training (hidden 256 x 2, batch 16,
SGD with momentum), each run in a fresh cluster so that every trial is trial 1 and sees the same
records:
- A trial completes; its task is on both agents; NCCL's log says it used NET/Socket; its training
  reports carry the GPU readings of both agents.
- A worker killed with SIGKILL after the first checkpoint: the trial restarts once from its
  latest checkpoint and its final parameters are bitwise those of the untouched run.
- With optimizations.zero_stage 1 (the optimizer sharded over the GPUs), the final parameters
  are bitwise those of the untouched run; with zero_stage 2 (gradients reduced onto their
  shards' GPUs) too, at 2 slots.
- A worker stopped with SIGSTOP: the other rank gives up after optimizations.collective_timeout
  (40 s, so that the agent first names the silent rank: it does so after 30 s without a
  heartbeat), and the experiment ends in an error, naming the batch and the phase, within a bound.
Prints the untouched run's records/s.
"""
import glob
import os
import random
import signal
import sys
import time

GPUS = "/proc/driver/nvidia/gpus"
if not (os.path.isdir(GPUS) and os.listdir(GPUS)):
    print("skipped: no NVIDIA GPU on this machine")
    sys.exit(77)

from cohort_cli import *  # noqa: E402 (after the skip: it reads the arguments)
from cluster import two_agent_cluster  # noqa: E402

SLOTS = 2 * len(os.listdir(GPUS))  # every GPU slot of both agents
BATCHES = 4000  # long enough on a GPU to be killed after the first checkpoint
PERIOD = 250
STOP_TIMEOUT = 40  # collective_timeout of the SIGSTOP run: above the agent's 30 s silence warning
STOP_BOUND = STOP_TIMEOUT + 60  # the timeout, the 5 s grace of the stopped rank, and slack

os.environ.update(NCCL_SOCKET_IFNAME="lo", NCCL_IB_DISABLE="1", NCCL_DEBUG="INFO",
                  NCCL_DEBUG_SUBSYS="INIT,NET")

seed = int(os.environ.get("COHORT_TEST_SEED", random.randrange(1 << 30)))
print(f"seed {seed}")
chance = random.Random(seed)


def gpu_config(tmp, name, batches, max_restarts, extra=""):
    text = read_bytes(mlp_config(tmp, name=name, batches=batches, period=PERIOD, hidden_size=256,
                                 max_restarts=max_restarts,
                                 entrypoint=plugin("mlp_cuda"))).decode()
    return write_config(tmp, text + f"resources:\n  slots_per_trial: {SLOTS}\n" + extra,
                        file_name=name + ".yaml")


def run_folder(cluster, experiment_id):
    return os.path.join(cluster.state, "experiments", str(experiment_id))


def first_trial(cluster, experiment_id):
    return experiment(run_folder(cluster, experiment_id))["trials"][0]


def final_parameters_of(cluster):
    """The parameters of the cluster's one trial-1 checkpoint after BATCHES batches."""
    found = glob.glob(os.path.join(cluster.state, "**", f"trial-1-batch-{BATCHES}", "parameters"),
                      recursive=True)
    check(len(found) == 1, f"final checkpoint: {found}\n{cluster.logs()}")
    return read_bytes(found[0])


def records_per_second(folder):
    reports = [r for r in metrics(folder) if r["kind"] == "training"]
    check(len(reports) >= 2, f"too few training reports in {folder}")
    return ((reports[-1]["records"] - reports[0]["records"]) /
            (reports[-1]["time"] - reports[0]["time"]))


with temp_dir() as tmp:
    config = gpu_config(tmp, "two-agents", BATCHES, max_restarts=2)

    # A: untouched.
    with two_agent_cluster(os.path.join(tmp, "whole")) as cluster:
        experiment_id = cluster.submit(config)
        seen = []
        wait_for(lambda: seen.extend(cluster.live_task_agents()) or seen, 120, "the task to start")
        check(seen[0] == ",".join(cluster.agents), f"the task is not on both agents: {seen}")
        check(cluster.wait_ended(experiment_id) == "completed", cluster.logs())
        trial = first_trial(cluster, experiment_id)
        check(trial["id"] == 1, trial)
        logs = cluster.must("trial", "logs", "1")
        for rank in range(SLOTS):
            check(f"[rank {rank}] trial 1 rank {rank} of {SLOTS}" in logs,
                  f"no line of rank {rank}:\n{logs}")
        check("NET/Socket" in logs, f"NCCL did not say it used its socket transport:\n{logs}")
        expected = final_parameters_of(cluster)
        rate = records_per_second(run_folder(cluster, experiment_id))
        # GPU readings: rank 0's agent adds its GPUs' to the training reports it forwards; the
        # other agent's come through its heartbeats (every 5 s), so a run of 12 s or more has both.
        training = [r for r in metrics(run_folder(cluster, experiment_id))
                    if r["kind"] == "training"]
        ranks_read = {gpu["rank"] for report in training for gpu in report.get("gpus", [])}
        check(0 in ranks_read, "no GPU reading of rank 0 in any training report")
        span = training[-1]["time"] - training[0]["time"]
        check(span < 12 or ranks_read == set(range(SLOTS)),
              f"GPU readings of ranks {sorted(ranks_read)} only, over {span:.0f} s of training")

    # D: ZeRO stage 1 (each rank steps its shard of the optimizer on its GPU, and the shards
    # travel through host copies): bitwise the untouched run, whose rule is element-wise. Stage 2
    # (each shard's gradient summed onto its owner by NCCL's reduce): bitwise too at 2 slots, where
    # a sum of two is the same whatever the order; at more, the reduce may round otherwise.
    for stage in (1, 2):
        zero = gpu_config(tmp, f"zero{stage}", BATCHES, max_restarts=0,
                          extra=f"optimizations:\n  zero_stage: {stage}\n")
        with two_agent_cluster(os.path.join(tmp, f"zero{stage}")) as cluster:
            experiment_id = cluster.submit(zero)
            check(cluster.wait_ended(experiment_id) == "completed", cluster.logs())
            logs = cluster.must("trial", "logs", "1")
            check(f"optimizer state sharded over {SLOTS} slots "
                  f"(optimizations.zero_stage {stage})" in logs, logs)
            if stage == 1 or SLOTS == 2:
                check(final_parameters_of(cluster) == expected, f"zero_stage {stage} ended elsewhere")
            zero_rate = records_per_second(run_folder(cluster, experiment_id))
            print(f"zero_stage {stage}: {zero_rate:.0f} records/s"
                  + (", bitwise the untouched run" if stage == 1 or SLOTS == 2 else ""))

    # B: a worker killed after the first checkpoint, in a fresh cluster.
    killed_dir = os.path.join(tmp, "killed")
    with two_agent_cluster(killed_dir) as cluster:
        experiment_id = cluster.submit(config)
        wait_for(lambda: first_trial(cluster, experiment_id)["checkpoints"], 120,
                 "the first checkpoint")
        time.sleep(chance.uniform(0.0, 0.3))
        rank = chance.randrange(SLOTS)
        pid = worker_pid(rank, killed_dir)
        check(pid is not None, f"no worker process of rank {rank} (did the trial end first?)")
        batches_before = first_trial(cluster, experiment_id)["batches_trained"]
        os.kill(pid, signal.SIGKILL)
        check(cluster.wait_ended(experiment_id) == "completed", cluster.logs())
        trial = first_trial(cluster, experiment_id)
        check(trial["id"] == 1 and trial["restarts"] == 1, trial)
        check(final_parameters_of(cluster) == expected,
              f"rank {rank} killed after about {batches_before} batches: final parameters differ")
        print(f"rank {rank} killed after about {batches_before} batches; restarted and matched")

    # C: a worker stopped (SIGSTOP) mid-run: an error within the timeout, not a hang.
    stopped_dir = os.path.join(tmp, "stopped")
    hang = gpu_config(tmp, "stopped", 10**6, max_restarts=0,
                      extra=f"optimizations:\n  collective_timeout: {STOP_TIMEOUT}\n")
    with two_agent_cluster(stopped_dir) as cluster:
        experiment_id = cluster.submit(hang)
        wait_for(lambda: first_trial(cluster, experiment_id)["checkpoints"], 120,
                 "the first checkpoint")
        stopped = SLOTS - 1
        pid = worker_pid(stopped, stopped_dir)
        check(pid is not None, f"no worker process of rank {stopped}")
        started = time.monotonic()
        os.kill(pid, signal.SIGSTOP)
        try:
            state = cluster.wait_ended(experiment_id, STOP_BOUND + 30)
            elapsed = time.monotonic() - started
        finally:
            for sent in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(pid, sent)
                except ProcessLookupError:
                    break
        check(state == "error", f"the experiment ended {state}:\n{cluster.logs()}")
        check(elapsed < STOP_BOUND,
              f"took {elapsed:.1f} s to give up on a {STOP_TIMEOUT} s collective timeout")
        error = first_trial(cluster, experiment_id)["error"] or ""
        check(f"(optimizations.collective_timeout is {STOP_TIMEOUT} s): a rank stopped taking part"
              in error and "batch " in error, error)
        check(any(f"rank {rank} exited" in error for rank in range(SLOTS) if rank != stopped),
              f"the error names no rank that gave up: {error}")
        said = cluster.must("trial", "logs", "1") + cluster.logs()
        check(f"rank {stopped} has sent no heartbeat" in said,
              f"the stopped rank {stopped} is named nowhere:\n{error}\n{said[-4000:]}")
        print(f"rank {stopped} stopped: the experiment failed after {elapsed:.1f} s: {error}")

print(f"records/s over two agents, NCCL over sockets: {rate:.0f} "
      f"(mlp_cuda, hidden 256 x 2, batch 16, {SLOTS} ranks)")
print("ok")
