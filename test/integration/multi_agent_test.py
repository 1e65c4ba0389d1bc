"""A trial spanning two agents trains over Gloo across them, on loopback.

An orchestrator (serving the rendezvous on its own port) and two agents of 2 CPU slots each; an
mlp experiment with slots_per_trial 4 is placed on both agents:
- it completes, and `cohort task list` shows its task on both agents while it runs;
- the trial's log has the lines of ranks 0 to 3;
- its final parameters are bitwise identical to the same config run by `cohort run` on 4 CPU
  slots of one machine: the ranks see the same records whichever agent they are on.
"""
import glob
import os

from cohort_cli import *
from cluster import Cluster

BATCHES = 200
AGENTS = ("agent-a", "agent-b")


with temp_dir() as tmp:
    config = mlp_config(tmp, name="four-ranks", batches=BATCHES, period=100, hidden_size=64)
    with open(config, "a") as f:
        f.write("resources:\n  slots_per_trial: 4\n")

    with Cluster(tmp) as cluster:
        for agent_id in AGENTS:
            cluster.add_agent(agent_id, 2, "--advertise-address", "127.0.0.1")
        experiment_id = cluster.submit(config)
        seen = []
        wait_for(lambda: seen.extend(cluster.live_task_agents()) or seen, 60, "the task to start")
        check(seen[0] == ",".join(AGENTS), f"the task is not on both agents: {seen}")
        check(cluster.wait_ended(experiment_id) == "completed", cluster.logs())

        trial_id = experiment(os.path.join(cluster.state, "experiments",
                                           str(experiment_id)))["trials"][0]["id"]
        logs = cluster.must("trial", "logs", str(trial_id))
        for rank in range(4):
            check(f"[rank {rank}] trial {trial_id} rank {rank} of 4" in logs,
                  f"no line of rank {rank}:\n{logs}")
        check("gradient exchange" in logs, logs)
        found = glob.glob(os.path.join(cluster.state, "**", f"trial-{trial_id}-batch-{BATCHES}",
                                       "parameters"), recursive=True)
        check(len(found) == 1, f"final checkpoint: {found}\n{cluster.logs()}")
        spanning = read_bytes(found[0])

    # The same config on one machine's 4 slots.
    alone = os.path.join(tmp, "alone")
    code, out, err = run("run", config, "--output", alone, "--cpu-slots", "4")
    check(code == 0, f"cohort run failed ({code}):\n{out}\n{err}")
    check(trial_id == 1, f"trial {trial_id}: cohort run's trial 1 would see other records")
    check(spanning == final_parameters(alone, BATCHES),
          "the trial spanning two agents ended with other parameters than on one machine")

print("ok")
