"""An agent stopped with SIGSTOP stops its trial's worker too (within a second), and when it is
continued (SIGCONT) the worker goes on with it: the trial trains on from where it was, with no
restart, its agent never lost. Workers run in process groups of their own, so the signal that
stops the agent misses them: they used to train on unseen, and past the orchestrator's agent
timeout beside the copy of the trial it placed elsewhere, both writing the trial's checkpoints.
The same holds for `cohort run` stopped as Ctrl-Z stops it and brought back as `fg` does (SIGSTOP
here: the kernel drops a SIGTSTP sent to a process group with no terminal, as a test's may be).
"""
import json
import os
import signal
import time

from cohort_cli import check, experiment, start, temp_dir, wait_for, worker_pid, write_config, \
    plugin
from cluster import Cluster

CONFIG = f"""\
name: stopped-agent
entrypoint: {plugin("mlp")}
hyperparameters:
  global_batch_size: 16
  optimizer: sgd
  learning_rate: 0.01
  hidden_size: 32
  hidden_layers: 1
  synthetic_train_records: 2048
  synthetic_validation_records: 128
  slow_rank: 0
  slow_rank_ms: 2
searcher:
  name: single
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: 1000000
min_validation_period:
  batches: 100000
scheduling_unit: 20
max_restarts: 0
reproducibility:
  experiment_seed: 7
"""


def state(pid):
    """The process's state letter in /proc/PID/stat ('T': stopped), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2]


def batches(cluster, experiment_id):
    described = json.loads(cluster.must("experiment", "describe", str(experiment_id), "--json"))
    return described["trials"][0]["batches_trained"]


with temp_dir() as tmp, Cluster(tmp) as cluster:
    agent = cluster.add_agent("agent-1", 1)
    experiment_id = cluster.submit(write_config(tmp, CONFIG))
    wait_for(lambda: batches(cluster, experiment_id) >= 100, 60, "the trial to train")
    worker = worker_pid(0, os.path.join(tmp, "agent-1"))
    check(worker is not None, "no worker process found")

    agent.send_signal(signal.SIGSTOP)
    try:
        wait_for(lambda: state(worker) == "T", 5, "the worker to stop with its agent")
        time.sleep(3)  # stopped together, well within the orchestrator's agent timeout (15 s)
        check(state(worker) == "T", f"the worker went on while its agent was stopped: {state(worker)}")
    finally:
        agent.send_signal(signal.SIGCONT)
    wait_for(lambda: state(worker) not in ("T", None), 5, "the worker to go on with its agent")
    before = batches(cluster, experiment_id)
    wait_for(lambda: batches(cluster, experiment_id) > before + 100, 60, "the trial to train on")

    logs = cluster.must("trial", "logs", "1")
    said = [line for line in logs.splitlines() if "worker: was stopped for " in line]
    check(len(said) == 1 and "with its supervisor" in said[0], logs)
    print(said[0])
    agent_log = open(os.path.join(tmp, "agent-1.log")).read()
    check("continued (SIGCONT): the 1 task(s) here, stopped with the agent, go on" in agent_log,
          agent_log)
    log = cluster.log()
    check("agent agent-1 lost" not in log, log)
    check(worker_pid(0, os.path.join(tmp, "agent-1")) == worker, "the worker was replaced")
    cluster.must("experiment", "kill", str(experiment_id))
    check(cluster.wait_ended(experiment_id, 120) == "stopped", cluster.logs())
    trial = json.loads(cluster.must("experiment", "describe", str(experiment_id), "--json"))
    check(trial["trials"][0]["restarts"] == 0, trial)

# `cohort run` stopped as Ctrl - Z stops it(SIGTSTP, which the test's process group may not get), then
#brought back as `fg` does.
with temp_dir() as tmp:
    run_dir = os.path.join(tmp, "run")
    running = start("run", write_config(tmp, CONFIG), "--output", run_dir)
    try:
        wait_for(lambda: os.path.exists(os.path.join(run_dir, "experiment.json")) and
                 experiment(run_dir)["trials"][0]["batches_trained"] >= 100, 60,
                 "the run to train")
        worker = worker_pid(0, run_dir)
        check(worker is not None, "no worker process found")
        running.send_signal(signal.SIGSTOP)
        try:
            wait_for(lambda: state(worker) == "T", 5, "the worker to stop with `cohort run`")
        finally:
            running.send_signal(signal.SIGCONT)
        wait_for(lambda: state(worker) not in ("T", None), 5, "the worker to go on with the run")
        before = experiment(run_dir)["trials"][0]["batches_trained"]
        wait_for(lambda: experiment(run_dir)["trials"][0]["batches_trained"] > before + 100, 60,
                 "the run to train on")
    finally:
        running.send_signal(signal.SIGINT)  # checkpoint and stop
        out, err = running.communicate(timeout=120)
    check(running.returncode == 130 and "STOPPED" in out, f"exit {running.returncode}\n{out}\n{err}")
    check(experiment(run_dir)["trials"][0]["restarts"] == 0, experiment(run_dir))

print("ok")
