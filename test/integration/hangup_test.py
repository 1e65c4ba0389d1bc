"""SIGHUP, as a closed terminal sends it: it stops `cohort orchestrator`, `cohort agent` and
`cohort run` (a run as Ctrl-C does: checkpoint, exit 130), unless the command was started ignoring
it, as `nohup` starts one. Then it stays ignored: the daemons go on serving (SIGTERM still stops
them, exit 0) and the run trains to its end."""
import os
import subprocess
import time

from cluster import Cluster
from cohort_cli import *

SURVIVAL_SECONDS = 3  # how long a process ignoring SIGHUP is watched after it
BATCHES = 1000  # of the run that gets a SIGHUP mid-way


def exited(process, timeout=30):
    """The exit status of `process` once it ends, or None if it still runs after `timeout`."""
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def log_of(path):
    return read_bytes(path).decode(errors="replace")


with temp_dir() as tmp:
    # Started plainly: SIGHUP stops the agent and the orchestrator, each exiting 0 as on SIGTERM.
    plain = os.path.join(tmp, "plain")
    os.makedirs(plain)
    with Cluster(plain) as cluster:
        agent = cluster.add_agent("agent-1", 1)
        agent.send_signal(signal.SIGHUP)
        code = exited(agent)
        check(code == 0, f"the agent after SIGHUP: exit {code}\n"
              f"{log_of(os.path.join(plain, 'agent-1.log'))}")
        cluster.orchestrator.send_signal(signal.SIGHUP)
        code = exited(cluster.orchestrator)
        check(code == 0, f"the orchestrator after SIGHUP: exit {code}\n{log_of(cluster.log_path)}")

    # Under nohup: both outlive a SIGHUP, the agent saying so, and still work together: a short
    # experiment submitted after it completes. SIGTERM then stops them, exit 0.
    kept = os.path.join(tmp, "nohup")
    os.makedirs(kept)
    with Cluster(kept, wrapper=("nohup",)) as cluster:
        agent = cluster.add_agent("agent-1", 1)
        agent.send_signal(signal.SIGHUP)
        cluster.orchestrator.send_signal(signal.SIGHUP)
        time.sleep(SURVIVAL_SECONDS)
        agent_log = os.path.join(kept, "agent-1.log")
        check(agent.poll() is None, f"the agent under nohup ended on SIGHUP: exit "
              f"{agent.returncode}\n{log_of(agent_log)}")
        check(cluster.orchestrator.poll() is None, f"the orchestrator under nohup ended on SIGHUP: "
              f"exit {cluster.orchestrator.returncode}\n{log_of(cluster.log_path)}")
        check("SIGHUP is ignored, as it was when the agent started (nohup)" in log_of(agent_log),
              log_of(agent_log))
        experiment_id = cluster.submit(mlp_config(kept, batches=100, period=50))
        state = cluster.wait_ended(experiment_id)
        check(state == "completed", f"the experiment under nohup daemons ended {state}\n"
              f"{log_of(cluster.log_path)}")
        agent.send_signal(signal.SIGTERM)
        code = exited(agent)
        check(code == 0, f"the agent under nohup after SIGTERM: exit {code}\n{log_of(agent_log)}")
        cluster.orchestrator.send_signal(signal.SIGTERM)
        code = exited(cluster.orchestrator)
        check(code == 0, f"the orchestrator under nohup after SIGTERM: exit {code}\n"
              f"{log_of(cluster.log_path)}")

    # `cohort run` under nohup: a SIGHUP after its first checkpoint changes nothing, the run
    # trains to its end (a plain run's SIGHUP stop is stop_resume_test's case D).
    folder = os.path.join(tmp, "run")
    config = mlp_config(tmp, batches=BATCHES)
    with open(config) as f:
        paced = f.read().replace("hyperparameters:\n", "hyperparameters:\n"
                                 "  slow_rank: 0\n  slow_rank_ms: 2\n")  # > 2 s in all
    write_config(tmp, paced)
    process = subprocess.Popen(["nohup", COHORT, "run", config, "--output", folder],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: experiment(folder)["trials"][0]["checkpoints"], what="a first checkpoint")
    process.send_signal(signal.SIGHUP)
    hangup_at = experiment(folder)["trials"][0]["batches_trained"]
    check(process.poll() is None and hangup_at < BATCHES,
          f"the run ended before its SIGHUP, at batch {hangup_at}")
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"the run under nohup after SIGHUP: exit {process.returncode}"
          f"\n{out}\n{err}")
    state = experiment(folder)
    check(state["state"] == "COMPLETED" and state["trials"][0]["batches_trained"] == BATCHES,
          state)
print("ok")
