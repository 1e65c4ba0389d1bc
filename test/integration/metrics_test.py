"""Prometheus metrics: `cohort orchestrator --metrics-address` and `cohort agent
--metrics-address` serve /metrics in the text format, and the figures follow the cluster: the
agent registered with its slots; a running trial's busy slot, records/s, heartbeat age and bytes
exchanged (its one slot exchanging through a group of one); a
killed worker's restart counted; the trial completed at the end."""
import os
import signal

from cluster import Cluster, free_port
from cohort_cli import *
from prometheus_scrape import scrape, value

def eventually(port, predicate, what):
    wait_for(lambda: predicate(scrape(port)), timeout=60, what=what)


with temp_dir() as tmp:
    orchestrator_port, agent_port = free_port(), free_port()
    with Cluster(tmp, "--metrics-address", f"127.0.0.1:{orchestrator_port}") as cluster:
        # The one-slot trial's gradients go through a group of one, so bytes are exchanged.
        os.environ["COHORT_EXCHANGE_AT_ONE_SLOT"] = "1"
        cluster.add_agent("agent-1", 2, "--metrics-address", f"127.0.0.1:{agent_port}")
        del os.environ["COHORT_EXCHANGE_AT_ONE_SLOT"]
        eventually(orchestrator_port, lambda s:
                   value(s, "cohort_orchestrator_agents", state="connected") == 1 and
                   value(s, "cohort_orchestrator_agent_slots", agent="agent-1") == 2,
                   "the orchestrator to count the agent")
        eventually(agent_port, lambda s:
                   value(s, "cohort_agent_slots", agent="agent-1") == 2 and
                   value(s, "cohort_agent_registered", agent="agent-1") == 1 and
                   value(s, "cohort_agent_orchestrator_connected", agent="agent-1") == 1 and
                   value(s, "cohort_agent_tasks", agent="agent-1") == 0,
                   "the agent's page")

        config = mlp_config(tmp, batches=100000, period=200, hidden_size=64, max_restarts=1)
        experiment_id = cluster.submit(config)
        trial = {"experiment": str(experiment_id), "trial": "1"}
        # Records trained are a counter (rate() gives records/s): it grows while the trial trains.
        eventually(orchestrator_port, lambda s:
                   (value(s, "cohort_orchestrator_trial_records_total", **trial) or 0) > 0 and
                   value(s, "cohort_orchestrator_agent_slots_busy", agent="agent-1") == 1 and
                   value(s, "cohort_orchestrator_trials", state="running") == 1 and
                   value(s, "cohort_orchestrator_experiments", state="active") == 1 and
                   (value(s, "cohort_orchestrator_trial_exchanged_bytes_total", **trial) or 0) > 0,
                   "the running trial on the orchestrator's page")
        eventually(agent_port, lambda s:
                   value(s, "cohort_agent_slots_busy", agent="agent-1") == 1 and
                   any(name == "cohort_agent_task_records_total" and v > 0
                       for (name, _), v in s.items()) and
                   any(name == "cohort_agent_task_heartbeat_age_seconds" and 0 <= v < 30
                       for (name, _), v in s.items()) and
                   any(name == "cohort_agent_task_exchanged_bytes_total" and v > 0
                       for (name, _), v in s.items()),
                   "the running task on the agent's page")
        age = value(scrape(orchestrator_port), "cohort_orchestrator_agent_heartbeat_age_seconds",
                    agent="agent-1")
        check(age is not None and 0 <= age < 15, f"agent heartbeat age {age}")
        check(value(scrape(orchestrator_port), "cohort_orchestrator_trial_restarts_total",
                    **trial) == 0, "restarts before any failure")

        wait_for(lambda: worker_pid(0, os.path.join(tmp, "agent-1")), what="the worker")
        record = os.path.join(cluster.state, "experiments", str(experiment_id))
        wait_for(lambda: experiment(record)["trials"][0]["checkpoints"], what="a checkpoint")
        os.kill(worker_pid(0, os.path.join(tmp, "agent-1")), signal.SIGKILL)
        eventually(orchestrator_port, lambda s:
                   value(s, "cohort_orchestrator_trial_restarts_total", **trial) == 1,
                   "the restart to be counted")
        cluster.must("experiment", "kill", str(experiment_id))
        cluster.wait_ended(experiment_id)
        eventually(orchestrator_port, lambda s:
                   value(s, "cohort_orchestrator_trials", state="stopped") == 1 and
                   value(s, "cohort_orchestrator_experiments", state="stopped") == 1 and
                   value(s, "cohort_orchestrator_agent_slots_busy", agent="agent-1") == 0 and
                   # an ended trial's series go away with it
                   value(s, "cohort_orchestrator_trial_records_total", **trial) is None and
                   value(s, "cohort_orchestrator_trial_restarts_total", **trial) is None,
                   "the stopped experiment")
        eventually(agent_port, lambda s: value(s, "cohort_agent_tasks", agent="agent-1") == 0,
                   "the agent's task to end")
print("ok")
