"""profiling.enabled: a 2-slot run leaves trials/1/timeline.json, Chrome trace JSON that Perfetto
and chrome://tracing open: a process per rank named "rank r", a training thread with every phase
of every batch and an exchange thread with the gradient buckets, each event whole (non-negative
duration) and tagged with its batch. A restart shows as the restore of the checkpoint that begins
the next attempt. Without profiling there is no timeline."""
import json
import os
import signal

from cohort_cli import *

BATCHES = 40
TRAINING_PHASES = {"choosing the batch's records", "inside the plugin's train_batch",
                   "waiting for the gradient exchange", "in the optimizer step"}

with temp_dir() as tmp:
    config = write_config(tmp, read_bytes(mlp_config(tmp, batches=BATCHES, period=20)).decode() +
                          "profiling:\n  enabled: true\n", file_name="profiled.yaml")
    run_dir = os.path.join(tmp, "profiled")
    code, out, err = run("run", config, "--output", run_dir, "--cpu-slots", "2",
                         "--set", "resources.slots_per_trial=2")
    check(code == 0, f"profiled run failed:\n{out}\n{err}")
    timeline = os.path.join(run_dir, "trials", "1", "timeline.json")
    check(f"timeline of trial 1: {timeline}" in out, out)
    with open(timeline) as f:
        events = json.load(f)["traceEvents"]

    names = {(e["pid"], e["args"]["name"]) for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    check(names == {(0, "rank 0"), (1, "rank 1")}, names)
    spans = [e for e in events if e["ph"] == "X"]
    check(all(e["dur"] >= 0 and e["ts"] > 0 for e in spans), "an event with a negative length")
    for rank in (0, 1):
        training = [e for e in spans if e["pid"] == rank and e["tid"] == 0]
        for phase in TRAINING_PHASES:
            batches = sorted(e["args"]["batch"] for e in training if e["name"] == phase)
            check(batches == list(range(1, BATCHES + 1)), f"rank {rank} {phase}: {batches}")
        check(any(e["name"] == "validating" for e in training), f"rank {rank}: no validation")
        buckets = [e for e in spans if e["pid"] == rank and e["tid"] == 1]
        check(buckets and all(e["name"].startswith("bucket ") for e in buckets), buckets[:3])
        check({e["args"]["batch"] for e in buckets} == set(range(1, BATCHES + 1)),
              f"rank {rank}: buckets of some batches are missing")

    # A worker killed after a checkpoint: the timeline shows the restart as the restore that
    # begins the next attempt, and training goes on after it.
    restarted = os.path.join(tmp, "restarted")
    config = write_config(tmp, read_bytes(mlp_config(
        tmp, name="restarted", batches=3000, period=100, hidden_size=128, max_restarts=1)).decode() +
        "profiling:\n  enabled: true\n", file_name="restarted.yaml")
    process = start("run", config, "--output", restarted)
    wait_for(lambda: experiment(restarted)["trials"][0]["checkpoints"], what="a checkpoint")
    pid = worker_pid(0, restarted)
    check(pid is not None, "no worker process found")
    os.kill(pid, signal.SIGKILL)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"restarted run exited {process.returncode}:\n{out}\n{err}")
    with open(os.path.join(restarted, "trials", "1", "timeline.json")) as f:
        spans = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    restores = [e for e in spans
                if e["name"].startswith("restart 1: restoring checkpoint trial-1-batch-")]
    check(len(restores) == 1, f"{len(restores)} restores of a checkpoint in the timeline")
    after = [e["args"]["batch"] for e in spans
             if e["name"] == "inside the plugin's train_batch" and e["ts"] > restores[0]["ts"]]
    check(after and min(after) == restores[0]["args"]["batch"] + 1 and max(after) == 3000,
          f"training after the restore at batch {restores[0]['args']['batch']}: {after[:3]}...")

    plain = os.path.join(tmp, "plain")
    code, out, err = run("run", mlp_config(tmp, batches=20, period=20), "--output", plain)
    check(code == 0, f"plain run failed:\n{out}\n{err}")
    check(not os.path.exists(os.path.join(plain, "trials", "1", "timeline.json")),
          "a timeline without profiling")
print("ok")
