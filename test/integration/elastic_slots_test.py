"""Elastic slots on two agents of one CPU slot each: a trial of `slots_per_trial: 2` with
`min_slots_per_trial: 1` loses agent-b (SIGKILL, found lost after --agent-timeout), goes on from
its latest checkpoint on agent-a's one slot, and grows back to 2 slots from a checkpoint once
agent-b returns; no restart is used. It ends within float rounding of an uninterrupted 2-slot run
of the same config (the same records per batch at 1 and 2 slots; softmax regression, as
slot_change_test.py, whose bound it shares). Also: min_slots_per_trial above slots_per_trial, or
beside a compression that keeps per-slot state, is refused naming the key."""
import os
import signal
from array import array

from cluster import Cluster
from cohort_cli import *

BATCHES = interruptible(3000)
PARAMETER_ROUNDING = 1e-4
# Softmax regression on wide records; rank 0 sleeps 2 ms a batch (mlp's slow_rank, which changes
# no number) so that the run lasts long enough to lose and regain an agent mid-way.
CONFIG = """\
name: elastic
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 16
  optimizer: sgd
  learning_rate: 0.05
  momentum: 0.9
  hidden_layers: 0
  synthetic_input_dim: 1024
  synthetic_train_records: 2048
  synthetic_validation_records: 512
  slow_rank: 0
  slow_rank_ms: 2
searcher:
  name: single
  metric: loss
  max_length:
    batches: {batches}
min_validation_period:
  batches: 1000
min_checkpoint_period:
  batches: 100
scheduling_unit: 20
resources:
  slots_per_trial: 2
{extra}reproducibility:
  experiment_seed: 11
"""


def config(tmp, name, extra=""):
    return write_config(tmp, CONFIG.format(entrypoint=plugin("mlp"), batches=BATCHES,
                                           extra=extra), file_name=name + ".yaml")


def parameters(path):
    values = array("f")
    values.frombytes(read_bytes(path))
    return values


with temp_dir() as tmp:
    # The refusals first: nothing is submitted.
    for extra, expected in [
            ("  min_slots_per_trial: 3\n", "resources.min_slots_per_trial: expected an integer"),
            ("  min_slots_per_trial: 1\noptimizations:\n  gradient_compression:\n"
             "    type: topk\n    ratio: 0.1\n",
             "resources.min_slots_per_trial: 1 makes the trial elastic, but "
             "optimizations.gradient_compression topk keeps state of its own on each slot")]:
        code, out, err = run("run", config(tmp, "refused", extra), "--output",
                             os.path.join(tmp, "refused"), "--cpu-slots", "2")
        check(code != 0 and expected in err, f"{code}\n{out}\n{err}")
        check(not os.path.exists(os.path.join(tmp, "refused")), "a refused run left a folder")

    whole = os.path.join(tmp, "whole")
    code, out, err = run("run", config(tmp, "whole"), "--output", whole, "--cpu-slots", "2")
    check(code == 0, f"the uninterrupted run failed:\n{err}")

    cluster_dir = os.path.join(tmp, "cluster")
    os.makedirs(cluster_dir)
    # Agents beat every 5 s (rank 1's agent sends nothing else): lost after 8 s of silence.
    with Cluster(cluster_dir, "--agent-timeout", "8") as cluster:
        cluster.add_agent("agent-a", 1)
        agent_b = cluster.add_agent("agent-b", 1)
        experiment_id = cluster.submit(config(tmp, "elastic", "  min_slots_per_trial: 1\n"))
        folder = os.path.join(cluster.state, "experiments", str(experiment_id))
        trained = lambda: experiment(folder)["trials"][0]["batches_trained"]
        wait_for(lambda: trained() >= 300, 120, "300 batches at 2 slots")
        agent_b.send_signal(signal.SIGKILL)
        agent_b.wait()
        wait_for(lambda: "it trains on 1 slot" in cluster.log(), 60, "the trial to shrink")
        shrunk_at = trained()
        wait_for(lambda: trained() >= shrunk_at + 300, 120, "300 batches at 1 slot")
        cluster.add_agent("agent-b", 1)
        wait_for(lambda: "2 slots are free again" in cluster.log(), 60, "the trial to grow")
        check(cluster.wait_ended(experiment_id, 300) == "completed", cluster.logs())
        trial = experiment(folder)["trials"][0]
        check(trial["restarts"] == 0, trial)
        log = cluster.log()
        # Placed again twice, using no restart: after losing agent-b, and to grow back.
        check(log.count("placing it again from trial-1-batch-") == 2, log)
        print(*[line for line in log.splitlines() if "trial 1" in line and
                ("slot" in line or "placing" in line)], sep="\n")
        checkpoint = os.path.join(cluster.state, "checkpoints", f"experiment-{experiment_id}",
                                  f"trial-1-batch-{BATCHES}", "parameters")
        a = parameters(os.path.join(whole, "checkpoints", f"trial-1-batch-{BATCHES}",
                                    "parameters"))
        b = parameters(checkpoint)
        worst = max(abs(x - y) for x, y in zip(a, b)) / max(abs(v) for v in a)
        check(worst <= PARAMETER_ROUNDING, f"the elastic run's parameters moved by {worst:.2e} "
              f"of their scale from the 2-slot run's, more than rounding")
        print(f"2 slots, 1 from batch {shrunk_at}, then 2 again: parameters within {worst:.1e} "
              "of their scale from the uninterrupted 2-slot run")
print("ok")
