"""An orchestrator stopped for longer than its agent timeout (SIGSTOP for 20 s, then SIGCONT)
keeps its agent and the trial there: it does not hold its own pause against the agent, the agent
registers again on a connection the orchestrator hears (the one it made while the orchestrator was
stopped may be one the orchestrator never routes), and what the agent reported meanwhile is
recorded once, with no gap. The agent used to be lost for good: the orchestrator heard nothing
on the new connection and stopped the trial, whose next task waited for an agent until the
orchestrator was restarted.
"""
import glob
import os
import signal
import time

from cohort_cli import check, experiment, metrics, temp_dir, wait_for, write_config, plugin
from cluster import Cluster

# At least 1 ms a batch (the plugin sleeps that long in each: slow_rank 0), so the trial outlasts
# the 20 s pause however fast the machine trains.
TARGET = 40000
CONFIG = f"""\
name: paused
entrypoint: {plugin("mlp")}
hyperparameters:
  global_batch_size: 16
  optimizer: sgd
  learning_rate: 0.01
  hidden_size: 128
  hidden_layers: 2
  synthetic_train_records: 2048
  synthetic_validation_records: 128
  slow_rank: 0
  slow_rank_ms: 1
searcher:
  name: single
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: {TARGET}
min_validation_period:
  batches: 5000
min_checkpoint_period:
  batches: 5000
scheduling_unit: 20
max_restarts: 0
reproducibility:
  experiment_seed: 7
"""

with temp_dir() as tmp, Cluster(tmp) as cluster:
    cluster.add_agent("agent-1", 1)
    experiment_id = cluster.submit(write_config(tmp, CONFIG))
    folder = os.path.join(cluster.state, "experiments", str(experiment_id))
    wait_for(lambda: any(row[4].lower() == "running" for row in cluster.task_rows()), 60,
             "the trial to run")
    cluster.orchestrator.send_signal(signal.SIGSTOP)
    agent_log = os.path.join(tmp, "agent-1.log")
    try:
        wait_for(lambda: "lost the connection to the orchestrator" in open(agent_log).read(), 30,
                 "the agent to lose its connection to the stopped orchestrator")
        time.sleep(20 - 10)  # 20 s stopped in all: past the agent timeout (15 s)
        final = os.path.join(cluster.state, "**", f"trial-1-batch-{TARGET}")
        check(not glob.glob(final, recursive=True),
              "the trial ended while the orchestrator was stopped: it tests nothing")
    finally:
        cluster.orchestrator.send_signal(signal.SIGCONT)
    check(cluster.wait_ended(experiment_id, 300) == "completed", cluster.logs())
    log = cluster.log()
    check("agent agent-1 lost" not in log, cluster.logs())
    check("the orchestrator's loop was held up for " in log, log)
    check("registering again" in open(agent_log).read(), cluster.logs())
    trial = experiment(folder)["trials"][0]
    check(trial["restarts"] == 0, trial)
    reports = metrics(folder)
    trained = [r["batches"] for r in reports if r["kind"] == "training"]
    missing = sorted(set(range(20, TARGET + 1, 20)) - set(trained))
    check(trained == list(range(20, TARGET + 1, 20)),
          f"{len(trained)} training reports recorded, {len(missing)} missing: {missing[:10]}")
    validated = [r["batches"] for r in reports if r["kind"] == "validation"]
    check(validated == list(range(5000, TARGET + 1, 5000)), f"validations recorded: {validated}")
    # A backlog of answers the orchestrator could not deliver is not a line each.
    check(log.count("could not send") < 5, log)

print("ok")
