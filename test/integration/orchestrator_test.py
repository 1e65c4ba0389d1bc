"""The orchestrator, agents and CLI as separate processes on loopback.

- a grid search of 4 trials on a 2-slot agent completes, with 2 trials training at a time and the
  waiting ones listed by `cohort task list` with the reason;
- three 1-slot trials and a 2-slot trial share a 4-slot agent, the 2-slot one waiting for two
  free slots with the reason;
- a trial that can never fit is refused at submission, saying why;
- `cohort trial logs` shows a trial's output, filtered by rank; `cohort experiment kill` stops
  running experiments;
- an orchestrator killed mid-experiment and started again continues the experiment from its
  trial's latest checkpoint; a preempted agent's trial (SIGTERM to the agent) goes on from the
  checkpoint its worker wrote on the way out, on another agent, without using up a restart;
- a trial that ends while the orchestrator is down is validated at its final checkpoint when the
  orchestrator comes back, so the searcher has its result, and what it reported meanwhile is
  recorded then (its agent sends it again), so its metrics.jsonl has no gap; a second
  orchestrator on the same state directory is refused; an idle agent stopped with SIGINT is gone
  from the orchestrator's view at once.
"""
import glob
import json
import os
import re

from cohort_cli import *
from cluster import Cluster, free_port

GRID_CONFIG = """\
name: {name}
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 16
  optimizer: sgd
  learning_rate:
    type: categorical
    vals: {rates}
  momentum: 0.9
  hidden_size: 16
  hidden_layers: 1
  synthetic_train_records: 1024
  synthetic_validation_records: 128
resources:
  slots_per_trial: {slots}
searcher:
  name: {searcher}
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: {batches}
scheduling_unit: 20
max_restarts: 0
reproducibility:
  experiment_seed: 5
"""


def grid_config(tmp, name, rates=(0.01,), slots=1, batches=200, searcher="grid"):
    text = GRID_CONFIG.format(name=name, entrypoint=plugin("mlp"), slots=slots, batches=batches,
                              rates="[" + ", ".join(str(r) for r in rates) + "]",
                              searcher=searcher)
    return write_config(tmp, text, file_name=name + ".yaml")


def most_at_once(log, experiment_id):
    """The most trials of the experiment placed at once, from the orchestrator's event lines."""
    placed, most = 0, 0
    for line in log.splitlines():
        if re.search(rf"\(experiment {experiment_id}\): task \d+", line):
            placed += 1
            most = max(most, placed)
        elif re.search(rf"trial \d+ \(experiment {experiment_id}\) (completed|error|stopped)", line):
            placed -= 1
    return most


with temp_dir() as tmp, Cluster(tmp) as cluster:
    cluster.add_agent("agent-1", 2)

    # A grid of 4 on 2 slots: 2 at a time, the other 2 queued with their reason.
    grid = cluster.submit(grid_config(tmp, "grid", rates=(0.001, 0.01, 0.05, 0.1), batches=2000))
    # Placed at submission: two tasks start, two wait, saying why (the orchestrator's log lines
    # may reach its log file after the submission's reply reaches the client).
    def grid_waits():
        return re.findall(rf"task \d+ \(trial \d+, experiment {grid}\) waits: (.*)", cluster.log())
    wait_for(lambda: len(grid_waits()) >= 2, timeout=30, what="the grid's two waiting tasks")
    waits = grid_waits()
    check(len(waits) == 2 and all("needs 1 slot on one agent; agent-1 has 2 busy" in w
                                  for w in waits), cluster.log())
    check(cluster.wait_ended(grid) == "completed", cluster.log())
    described = cluster.must("experiment", "describe", str(grid))
    check(described.lower().count("completed") >= 4, described)
    log = cluster.log()
    check(most_at_once(log, grid) == 2, f"expected 2 trials at a time:\n{log}")
    state_dir = os.path.join(cluster.state, "experiments", str(grid))
    record = experiment(state_dir)
    check(len(record["trials"]) == 4 and all(t["state"] == "COMPLETED" for t in record["trials"]),
          str(record))
    check(all(t["best_validation"] is not None for t in record["trials"]), str(record))

    # The lists as JSON, for scripts (and `e ls`, as det abbreviates it).
    listed = json.loads(cluster.must("e", "ls", "--json"))
    check([e["state"] for e in listed if e["id"] == grid] == ["completed"] and
          all(e["trial_counts"]["completed"] == 4 for e in listed if e["id"] == grid), str(listed))
    agents = json.loads(cluster.must("agent", "list", "--json"))
    check([a["id"] for a in agents] == ["agent-1"] and agents[0]["slots"] == 2, str(agents))
    check(json.loads(cluster.must("task", "list", "--json")) == [], "tasks left after the grid")

    # Logs of one trial, one rank.
    trial_id = str(record["trials"][0]["id"])
    logs = cluster.must("trial", "logs", trial_id, "--rank", "0")
    check("trial " + trial_id in logs and "[rank 0]" in logs, logs)
    check(all(line.startswith("[rank 0] ") for line in logs.splitlines()), logs)
    # The trial's reports are lines of its log too, so a followed log shows it moving: the
    # orchestrator's own, of no rank (left out above).
    logs = cluster.must("trial", "logs", trial_id).splitlines()
    check(any(line.startswith("[cohort] training after") for line in logs) and
          any(line.startswith("[cohort] validation after 2000 batches:") for line in logs),
          "\n".join(logs))
    check(not any("] [cohort]" in line for line in logs), "\n".join(logs))

    # The same experiment trains the same wherever it goes: its trial's seed comes from its number
    # within the experiment, not from the orchestrator's id for it (5 and 6 here, 1 under
    # `cohort run`).
    again = grid_config(tmp, "again", batches=200, searcher="single")
    finals = []
    for _ in range(2):
        submitted = cluster.submit(again)
        check(cluster.wait_ended(submitted) == "completed", cluster.log())
        found = glob.glob(os.path.join(tmp, "**", f"experiment-{submitted}", "**",
                                       "trial-*-batch-200", "parameters"), recursive=True)
        check(len(found) == 1, f"the final checkpoint of experiment {submitted}: {found}")
        finals.append(read_bytes(found[0]))
    code, out, err = run("run", again, "--output", os.path.join(tmp, "again-run"))
    check(code == 0, f"cohort run of the same config: exit {code}:\n{out}\n{err}")
    check(finals[0] == finals[1] == final_parameters(os.path.join(tmp, "again-run"), 200),
          "the same experiment trained otherwise on another submission")

    # Never fits: 3 slots on an agent of 2.
    code, out, err = cluster.cli("submit", grid_config(tmp, "too-big", slots=3))
    check(code != 0 and "needs 3 slots" in (out + err), f"{code}\n{out}\n{err}")

# Three 1-slot trials and a 2-slot trial share one 4-slot agent: the 2-slot one waits, and
# `cohort task list` says why, until two 1-slot experiments are killed; then it runs and
# completes, and the killed experiments end stopped.
with temp_dir() as tmp, Cluster(tmp) as cluster:
    cluster.add_agent("agent-4", 4)
    ones = [cluster.submit(grid_config(tmp, f"one-{i}", batches=10**7)) for i in range(3)]
    two = cluster.submit(grid_config(tmp, "two", slots=2, batches=300))
    rows = {int(r[1]): r for r in cluster.task_rows()}
    check(all(rows[e][4].lower() in ("starting", "running") for e in ones), str(rows))
    check(rows[two][4].lower() == "queued" and rows[two][3] == "2", str(rows))
    check("needs 2 slots on one agent; agent-4 has 3 busy" in rows[two][5], str(rows))
    wait_for(lambda: all(r[4].lower() == "running" for r in cluster.task_rows()
                         if int(r[1]) in ones), 120, "the 1-slot trials to run")
    for experiment_id in ones[:2]:
        cluster.must("experiment", "kill", str(experiment_id))
    check(cluster.wait_ended(two) == "completed", cluster.log())
    cluster.must("experiment", "kill", str(ones[2]))
    for experiment_id in ones:
        check(cluster.wait_ended(experiment_id, 60) == "stopped", cluster.log())
    check(not cluster.task_rows(), cluster.must("task", "list"))

# The orchestrator dies (SIGKILL) after the trial's first checkpoint; a new one on the same state
# directory continues the experiment, the trial from its latest checkpoint.
with temp_dir() as tmp, Cluster(tmp) as cluster:
    first_agent = cluster.add_agent("agent-1", 1)
    text = GRID_CONFIG.format(name="survivor", entrypoint=plugin("mlp"), slots=1, batches=10**7,
                              rates="[0.01]", searcher="single")
    config = write_config(tmp, text + "min_checkpoint_period:\n  batches: 100\n", "survivor.yaml")
    survivor = cluster.submit(config)
    folder = os.path.join(cluster.state, "experiments", str(survivor))
    wait_for(lambda: experiment(folder)["trials"][0]["checkpoints"], 60, "a checkpoint")
    cluster.crash_and_restart_orchestrator()
    resumed = r"task (\d+) trains to batch 10000000 on agent-1, resuming from checkpoint trial-1-batch-(\d+)"
    wait_for(lambda: re.search(resumed, cluster.log()), 60, "the trial to resume")
    check(f"experiment {survivor} was active when the orchestrator stopped" in cluster.log(),
          cluster.log())
    # (A first placement may be refused while the agent still holds the old task's slot.)
    wait_for(lambda: any(r[0] == re.findall(resumed, cluster.log())[-1][0] and
                         r[4].lower() == "running" for r in cluster.task_rows()),
             60, "the resumed task to run")
    # The agent is preempted (SIGTERM): its worker checkpoints and exits, and the trial goes on
    # from that checkpoint on the next agent, without using up a restart (max_restarts is 0).
    first_agent.send_signal(signal.SIGTERM)
    check(first_agent.wait(timeout=30) == 0, cluster.logs())
    moved = (r"trial 1: agent agent-1 stopped it \(stopped: the agent is shutting down\); "
             r"placing it again from (trial-1-batch-\d+)")
    wait_for(lambda: re.search(moved, cluster.log()), 30, "the trial to be placed again")
    cluster.add_agent("agent-2", 1)
    checkpoint = re.search(moved, cluster.log()).group(1)
    wait_for(lambda: f"on agent-2, resuming from checkpoint {checkpoint}" in cluster.log(), 30,
             "the trial to resume on agent-2")
    cluster.must("experiment", "kill", str(survivor))
    check(cluster.wait_ended(survivor, 60) == "stopped", cluster.logs())
    check(experiment(folder)["trials"][0]["restarts"] == 0, experiment(folder))
    resumed_at = int(re.findall(resumed, cluster.log())[-1][1])
    batches = [r["batches"] for r in metrics(folder) if r["kind"] == "training"]
    check(batches == sorted(set(batches)) and resumed_at + 20 in batches,
          f"reports after the restart (resumed at {resumed_at}): {batches}")

# The orchestrator dies during a trial, which trains to its end meanwhile: its last validation
# report reaches no one. The next orchestrator resumes the trial at its final checkpoint, and the
# task validates there before ending; the trial used to end with no validation at its target, and
# the searcher ranked it worst.
with temp_dir() as tmp, Cluster(tmp) as cluster:
    cluster.add_agent("agent-1", 1)
    target = 20000
    text = GRID_CONFIG.format(name="unwatched", entrypoint=plugin("mlp"), slots=1, batches=target,
                              rates="[0.01]", searcher="single")
    config = write_config(tmp, text + "min_checkpoint_period:\n  batches: 1000\n"
                          "min_validation_period:\n  batches: 1000\n", "unwatched.yaml")
    unwatched = cluster.submit(config)
    folder = os.path.join(cluster.state, "experiments", str(unwatched))
    wait_for(lambda: experiment(folder)["trials"][0]["checkpoints"], 60, "a checkpoint")
    cluster.crash_orchestrator()
    agent_log = os.path.join(tmp, "agent-1.log")
    wait_for(lambda: "lost the connection to the orchestrator at " in read_bytes(agent_log)
             .decode(), 30, "the agent to tell of the lost connection")
    final = os.path.join(cluster.state, "**", f"trial-1-batch-{target}")
    wait_for(lambda: glob.glob(final, recursive=True), 120, "the trial's final checkpoint")
    recorded = [r["batches"] for r in metrics(folder) if r["kind"] == "validation"]
    check(target not in recorded, f"the final validation was recorded: {recorded}")
    cluster.restart_orchestrator()
    wait_for(lambda: re.search(r"the connection to the orchestrator at \S+ is back",
                               read_bytes(agent_log).decode()), 30,
             "the agent to tell of the connection back")
    check(cluster.wait_ended(unwatched, 120) == "completed", cluster.logs())
    trial = experiment(folder)["trials"][0]
    check(trial["best_validation"] is not None and
          trial["latest_validation"]["batches"] == target, trial)
    check("reported no 'accuracy'" not in cluster.log(), cluster.log())
    # The agent sent again what no orchestrator heard: the record has no gap where it was down.
    reports = metrics(folder)
    validated = [r["batches"] for r in reports if r["kind"] == "validation"]
    check(validated == list(range(1000, target + 1, 1000)), f"validations recorded: {validated}")
    trained = [r["batches"] for r in reports if r["kind"] == "training"]
    missing = sorted(set(range(20, target + 1, 20)) - set(trained))
    check(trained == list(range(20, target + 1, 20)),
          f"{len(trained)} training reports recorded, {len(missing)} missing: {missing[:10]}")
    check(" reported while no orchestrator heard it, up to batch " in cluster.log(), cluster.log())
    check(trial["checkpoints"][-1] == {"id": f"trial-1-batch-{target}", "batches": target,
                                       "searcher_metric": trial["latest_validation"]["metrics"]
                                       ["accuracy"]}, trial["checkpoints"])
    # A second orchestrator on the same state directory is refused at once, naming the first.
    code, out, err = run("orchestrator", "--listen", f"tcp://127.0.0.1:{free_port()}",
                         "--client-listen", f"tcp://127.0.0.1:{free_port()}",
                         "--rendezvous-listen", f"tcp://127.0.0.1:{free_port()}",
                         "--state-dir", cluster.state, timeout=30)
    check(code == 1 and f"is in use by another orchestrator (pid {cluster.orchestrator.pid}" in err,
          f"a second orchestrator on the same state directory: exit {code}:\n{out}\n{err}")
    # One refused for a port that is taken makes no state directory (it used to leave one holding
    # orchestrator.lock alone).
    fresh = os.path.join(tmp, "fresh-state", "nested")
    code, out, err = run("orchestrator", "--listen", cluster.agent_endpoint,
                         "--client-listen", f"tcp://127.0.0.1:{free_port()}",
                         "--rendezvous-listen", f"tcp://127.0.0.1:{free_port()}",
                         "--state-dir", fresh, timeout=30)
    check(code == 1 and "Address already in use" in err and
          not os.path.exists(os.path.join(tmp, "fresh-state")),
          f"an orchestrator refused for a taken port: exit {code}:\n{err}")
    # An idle agent stopped (SIGINT) says so on its way out: it is gone at once, not after its
    # heartbeats have been missed for 15 s, and no task is placed there meanwhile.
    idle = cluster.add_agent("agent-idle", 1)
    idle.send_signal(signal.SIGINT)
    check(idle.wait(timeout=30) == 0, cluster.logs())
    wait_for(lambda: "agent agent-idle left: it shut down, running no task" in cluster.log(), 10,
             "the orchestrator to learn that agent-idle left")
    row = [line.split() for line in cluster.must("agent", "list").splitlines()
           if line.startswith("agent-idle")]
    check(row and row[0][4] == "no", cluster.must("agent", "list"))

print("ok")
