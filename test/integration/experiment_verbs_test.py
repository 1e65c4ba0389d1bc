"""The verbs that act on an experiment after its submission, through the real CLI against a real
orchestrator and agent on loopback:

- `experiment pause` stops the running trials after a checkpoint and nothing trains until
  `experiment activate`, when each trial goes on from that checkpoint without using a restart;
- `trial kill` stops one trial while its experiment goes on; `trial describe` shows a trial's
  validations and checkpoints (and --json);
- `checkpoint list` names the checkpoints kept; `checkpoint export` copies one, every byte checked,
  refuses to replace a copy, names a checkpoint that is not kept, and refuses a damaged one
  leaving no folder behind;
- `experiment archive` hides an ended experiment from `experiment list` (not from `--all`) and
  `unarchive` shows it again; `experiment delete` asks for --yes off a terminal, refuses an active
  experiment, and removes an ended one's run folder and checkpoints;
- an ended experiment cannot be paused, and says why;
- `submit --follow` shows every validation of a fast trial; describe names its best checkpoint,
  as `checkpoint list --best 1` does; it waits out an orchestrator that stops answering for a
  while, and follows on.
"""
import json
import os
import re
import signal
import subprocess
import time

from cohort_cli import *
from cluster import Cluster, two_rate_grid


def trial_ids(cluster, experiment_id):
    described = json.loads(cluster.must("experiment", "describe", str(experiment_id), "--json"))
    return [trial["id"] for trial in described["trials"]]


def trial_json(cluster, trial_id):
    return json.loads(cluster.must("trial", "describe", str(trial_id), "--json"))


with temp_dir() as tmp, Cluster(tmp) as cluster:
    cluster.add_agent("agent-1", 2)
    config = two_rate_grid(tmp, "verbs", batches=2_000_000, validation_period=100,
                           scheduling_unit=20, checkpoint_period=100)
    experiment = cluster.submit(config)
    wait_for(lambda: len(trial_ids(cluster, experiment)) == 2, 60, "the grid's two trials")
    first, second = trial_ids(cluster, experiment)
    wait_for(lambda: all(trial_json(cluster, t)["checkpoints"] for t in (first, second)), 120,
             "a checkpoint of each trial")

    # Pause: both trials checkpoint and stop; nothing is queued or running.
    out = cluster.must("experiment", "pause", str(experiment))
    check(f"experiment {experiment}: paused" in out, out)
    wait_for(lambda: not cluster.task_rows(), 120, "the paused experiment's tasks to exit")
    check(cluster.state_of(experiment) == "paused", cluster.must("experiment", "list"))
    out = cluster.must("experiment", "pause", str(experiment))  # nothing to do, and says so
    check(f"experiment {experiment} is paused already: nothing to pause" in out, out)
    stopped_at = {}
    for trial in (first, second):
        described = trial_json(cluster, trial)
        check(described["trial"]["state"] == "paused", described)
        check(described["trial"]["restarts"] == 0, described)
        latest = described["checkpoints"][-1]
        check(described["trial"]["latest_checkpoint"] == latest["id"], described)
        stopped_at[trial] = latest["batches"]
    text = cluster.must("trial", "describe", str(first))
    for needed in (f"trial {first} (experiment {experiment}: verbs)", "validations:",
                   "checkpoints:", "BATCHES", "accuracy"):
        check(needed in text, f"`trial describe` lacks {needed!r}:\n{text}")

    # Activate: each trial goes on from the checkpoint it stopped at, with no restart used.
    out = cluster.must("experiment", "activate", str(experiment))
    check(f"experiment {experiment}: activated" in out, out)
    out = cluster.must("experiment", "activate", str(experiment))
    check(f"experiment {experiment} is active already: nothing to activate" in out, out)
    for trial in (first, second):
        wait_for(lambda: trial_json(cluster, trial)["trial"]["batches_trained"]
                 > stopped_at[trial] + 100, 120, f"trial {trial} to go on")
        check(trial_json(cluster, trial)["trial"]["restarts"] == 0, trial_json(cluster, trial))
    log = cluster.log()
    for trial in (first, second):
        check(re.search(rf"trial {trial}: paused; it goes on from trial-{trial}-batch-\d+", log),
              f"no pause line for trial {trial}:\n{log}")

    # Kill one trial: it stops, the other goes on.
    out = cluster.must("trial", "kill", str(first))
    check(f"trial {first}: kill requested" in out, out)
    wait_for(lambda: trial_json(cluster, first)["trial"]["state"] == "stopped", 120,
             "the killed trial to stop")
    check(trial_json(cluster, second)["trial"]["state"] == "running", trial_json(cluster, second))
    check(cluster.state_of(experiment) == "active", cluster.must("experiment", "list"))
    out = cluster.must("trial", "kill", str(first))  # ended: nothing to do, and says so
    check(f"trial {first} is stopped already: nothing to kill" in out, out)

    # Deleting or archiving an active experiment is refused; nothing changes.
    code, out, err = cluster.cli("experiment", "delete", str(experiment), "--yes")
    check(code == 1 and "only an ended experiment can be deleted (kill it first)" in err,
          f"{code}\n{out}\n{err}")
    code, out, err = cluster.cli("experiment", "archive", str(experiment))
    check(code == 1 and "only an ended experiment can be archived" in err, f"{code}\n{err}")

    cluster.must("experiment", "kill", str(experiment))
    check(cluster.wait_ended(experiment) == "stopped", cluster.logs())
    out = cluster.must("experiment", "kill", str(experiment))
    check(f"experiment {experiment} is stopped already: nothing to kill" in out, out)
    code, out, err = cluster.cli("experiment", "pause", str(experiment))
    check(code == 1 and f"experiment {experiment} is stopped; only an active experiment can be "
          "paused" in err, f"{code}\n{err}")

    # Checkpoints: listed, and one exported whole; a second export is refused.
    listed = json.loads(cluster.must("checkpoint", "list", str(experiment), "--json"))
    check({row["trial_id"] for row in listed} == {first, second}, listed)
    only_second = json.loads(cluster.must("checkpoint", "list", str(experiment), "--trial",
                                          str(second), "--json"))
    check(only_second and all(row["trial_id"] == second for row in only_second), only_second)
    table = cluster.must("checkpoint", "list", str(experiment))
    check(table.splitlines()[0].split() == ["CHECKPOINT", "TRIAL", "BATCHES", "METRIC", "SIZE",
                                            "STATE", "PATH"], table)
    check(all(row["state"] == "whole" and row["problem"] is None for row in listed), listed)
    row = listed[-1]
    export_dir = os.path.join(tmp, "exported")
    out = cluster.must("checkpoint", "export", row["id"], export_dir)
    copy = os.path.join(export_dir, row["id"])
    check(f"exported to {copy}" in out, out)
    for name in os.listdir(row["path"]):
        check(read_bytes(os.path.join(copy, name)) == read_bytes(os.path.join(row["path"], name)),
              f"{name} differs in the copy")
    check(sorted(os.listdir(copy)) == sorted(os.listdir(row["path"])), os.listdir(copy))
    code, out, err = cluster.cli("checkpoint", "export", row["id"], export_dir)
    check(code == 1 and "already exists; not replaced" in err, f"{code}\n{err}")
    code, out, err = cluster.cli("checkpoint", "export", f"trial-{first}-batch-7", export_dir)
    check(code == 1 and f"trial {first} keeps no checkpoint trial-{first}-batch-7" in err,
          f"{code}\n{err}")
    code, out, err = cluster.cli("checkpoint", "export", "latest", export_dir)
    check(code == 2 and "CHECKPOINT_ID must name a checkpoint" in err, f"{code}\n{err}")
    # A damaged checkpoint is refused, saying what to do, and leaves no folder it made behind.
    parameters = os.path.join(row["path"], "parameters")
    whole = read_bytes(parameters)
    with open(parameters, "wb") as f:
        f.write(bytes([whole[0] ^ 1]) + whole[1:])
    damaged_dir = os.path.join(tmp, "damaged")
    code, out, err = cluster.cli("checkpoint", "export", row["id"],
                                 os.path.join(damaged_dir, "deeper"))
    check(code == 1 and "fails its checksum" in err and "the checkpoint is damaged; export another"
          in err and not os.path.exists(damaged_dir), f"{code}\n{err}")
    # The list shows what a resume would pass over: a file that lost its end, a folder gone.
    with open(parameters, "wb") as f:
        f.write(whole[:-1])
    shown = {r["id"]: r for r in json.loads(cluster.must("checkpoint", "list", str(experiment),
                                                          "--json"))}[row["id"]]
    check(shown["state"] == "damaged" and "parameters" in shown["problem"], shown)
    table = cluster.must("checkpoint", "list", str(experiment))
    check(f"{row['id']} is damaged: " in table and "a resume or restart passes over these" in table,
          table)
    with open(parameters, "wb") as f:
        f.write(whole)
    os.rename(row["path"], row["path"] + ".away")
    shown = {r["id"]: r for r in json.loads(cluster.must("checkpoint", "list", str(experiment),
                                                          "--json"))}[row["id"]]
    check(shown["state"] == "missing" and shown["problem"] == f"no folder {row['path']}", shown)
    os.rename(row["path"] + ".away", row["path"])

    # Archive hides it from the list, --all shows it, unarchive brings it back.
    cluster.must("experiment", "archive", str(experiment))
    check(str(experiment) not in [line.split()[0] for line in
                                  cluster.must("experiment", "list").splitlines()[1:]],
          cluster.must("experiment", "list"))
    everything = json.loads(cluster.must("experiment", "list", "--all", "--json"))
    check([e["archived"] for e in everything if e["id"] == experiment] == [True], everything)
    out = cluster.must("experiment", "archive", str(experiment))
    check(f"experiment {experiment} is archived already: nothing to archive" in out, out)
    cluster.must("experiment", "unarchive", str(experiment))
    out = cluster.must("experiment", "unarchive", str(experiment))
    check(f"experiment {experiment} is not archived: nothing to unarchive" in out, out)
    check(cluster.state_of(experiment) == "stopped", cluster.must("experiment", "list"))

    # Delete: off a terminal it wants --yes; then the run folder and checkpoints are gone.
    run_folder = os.path.join(cluster.state, "experiments", str(experiment))
    storage = os.path.dirname(row["path"])
    code, out, err = cluster.cli("experiment", "delete", str(experiment))
    check(code == 2 and "add --yes" in err and os.path.isdir(run_folder), f"{code}\n{err}")
    out = cluster.must("experiment", "delete", str(experiment), "--yes")
    check(f"experiment {experiment}: deleted" in out, out)
    check(not os.path.exists(run_folder) and not os.path.exists(storage),
          f"left behind: {os.listdir(os.path.dirname(run_folder))}")
    code, out, err = cluster.cli("experiment", "describe", str(experiment))
    check(code == 1 and f"no experiment {experiment}" in err, f"{code}\n{err}")
    check(os.path.isdir(copy), "the exported copy is the user's: a delete leaves it")

    # `submit --follow` of a trial that validates many times a second shows every validation once,
    # in order, and exits 0 when it completes; describe names its best checkpoint.
    followed = mlp_config(tmp, name="followed", batches=1000, period=100, file_name="followed.yaml")
    code, out, err = cluster.cli("submit", followed, "--follow")
    check(code == 0, f"submit --follow: exit {code}\n{out}\n{err}")
    shown = [int(b) for b in re.findall(r"^trial \d+ validation after (\d+) batches: ", out, re.M)]
    check(shown == list(range(100, 1001, 100)), f"validations shown {shown}:\n{out}")
    followed_id = int(re.search(r"experiment (\d+) submitted", out).group(1))
    described = json.loads(cluster.must("experiment", "describe", str(followed_id), "--json"))
    trial = described["trials"][0]
    check(trial["best_checkpoint"] == f"trial-{trial['id']}-batch-{trial['best_metric_batches']}",
          trial)
    # Its last line names the best trial and checkpoint, as describe does.
    check(out.splitlines()[-1] == (
        f"experiment {followed_id} completed, best trial {trial['id']} (accuracy "
        f"{trial['best_metric']:.6g} after {trial['best_metric_batches']} batches, checkpoint "
        f"{trial['best_checkpoint']})"), out)
    # The lines stand in the order of their batches.
    order = [int(b) for b in re.findall(r"^trial \d+ (?:validation after|at batch) (\d+)", out,
                                        re.M)]
    check(order == sorted(order), f"lines out of order {order}:\n{out}")
    best = json.loads(cluster.must("checkpoint", "list", str(followed_id), "--best", "1", "--json"))
    check([row["id"] for row in best] == [trial["best_checkpoint"]], (best, trial))
    code, out, err = cluster.cli("checkpoint", "list", str(followed_id), "--best", "0")
    check(code == 2 and "--best needs a count >= 1, not '0'" in err, f"{code}\n{err}")
    print("pause, activate, trial kill and describe, checkpoint list and export, archive and "
          "delete, submit --follow: ok")

    # `submit --follow` waits out an orchestrator that stops answering (held 13 s, past the
    # client's 10 s for an answer) and follows on once it answers again; it used to exit 1 while
    # the experiment went on.
    waited = mlp_config(tmp, name="waited", batches=4000, period=1000, file_name="waited.yaml")
    with open(waited) as f:  # 5 ms a batch: still training when the orchestrator is held
        paced = f.read().replace("hyperparameters:\n",
                                 "hyperparameters:\n  slow_rank: 0\n  slow_rank_ms: 5\n")
    with open(waited, "w") as f:
        f.write(paced)
    follower = subprocess.Popen([COHORT, "submit", waited, "--follow", "--orchestrator",
                                 cluster.client_endpoint], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Held once it follows: its first look at the experiment answered (a trial's line).
        seen = []
        while not any(line.startswith("trial ") for line in seen):
            line = follower.stdout.readline()
            check(line, f"submit --follow ended before it followed:\n{''.join(seen)}")
            seen.append(line)
        cluster.orchestrator.send_signal(signal.SIGSTOP)
        time.sleep(13)
        cluster.orchestrator.send_signal(signal.SIGCONT)
        out, err = follower.communicate(timeout=300)
        out = "".join(seen) + out
    finally:
        cluster.orchestrator.send_signal(signal.SIGCONT)
        if follower.poll() is None:
            follower.kill()
    check(follower.returncode == 0 and "still following for up to 300 s" in err and
          "the orchestrator answers again: following" in err and
          out.splitlines()[-1].startswith("experiment ") and " completed" in out.splitlines()[-1],
          f"submit --follow across a held orchestrator: exit {follower.returncode}\n{out}\n{err}")
    print("submit --follow waited out an orchestrator that did not answer for 13 s")
