"""profiling.enabled: a 2-slot trial leaves trials/<id>/timeline.json, Chrome trace JSON that
Perfetto and chrome://tracing open, whether `cohort run` trains it or an orchestrator spreads it
over two agents. check_timeline holds it to what those viewers need and to what it must show:
- a process per rank named "rank r" and three named threads each, with ids no other rank uses and
  never 0 (the viewers' idle process); integer times; no lists in events and no \\u escapes;
- on every thread, each slice wholly inside the one it starts in (viewers nest slices by time);
- the training thread: every phase of every batch, validation, and each gradient bucket's
  "ready" moment;
- rank 0's checkpoint writes thread: a write of each checkpoint the training thread took;
- the exchange thread: every bucket of every batch, holding its allreduce (with its bytes) and
  the codec's work around it;
- one time axis for all ranks: rank 0's and rank 1's allreduce of the same bucket overlap.
A restart shows as the restore of the checkpoint that begins the next attempt.
profiling.begin_on_batch and end_after_batch keep it to their batches. Without profiling there is
no timeline."""
import collections
import glob
import json
import os
import signal

from cohort_cli import *
from cluster import Cluster

BATCHES = 40
TRAINING_PHASES = {"choosing the batch's records", "inside the plugin's train_batch",
                   "waiting for the gradient exchange", "in the optimizer step"}
SLACK_US = 1000  # how far two ranks' clocks may disagree and still count as one axis


def check_nesting(events, where):
    """Every slice (and instant) ends inside the slice it starts in, per thread."""
    by_thread = collections.defaultdict(list)
    for e in events:
        if e["ph"] in ("X", "i"):
            by_thread[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e.get("dur", 0), e["name"]))
    for thread, spans in by_thread.items():
        open_spans = []
        for begin, end, name in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
            while open_spans and open_spans[-1][1] <= begin and not (
                    open_spans[-1][1] == begin == end and open_spans[-1][0] < begin):
                open_spans.pop()
            if open_spans:
                check(end <= open_spans[-1][1],
                      f"{where}: {name} [{begin}, {end}] on {thread} overlaps the end of "
                      f"{open_spans[-1][2]} [{open_spans[-1][0]}, {open_spans[-1][1]}]")
            if end > begin:
                open_spans.append((begin, end, name))


def check_timeline(path, ranks, batches, checkpoint_period=20):
    with open(path) as f:
        text = f.read()
    events = json.loads(text)["traceEvents"]
    # Perfetto's JSON importer has read events without lists inside and strings without \u
    # escapes in every version.
    check("\\u" not in text, "a \\u escape in the timeline")
    check(all(not isinstance(v, list) for e in events for v in [*e.values(), *e["args"].values()]
              if "args" in e), "an event holding a list")
    processes = {e["pid"]: e["args"]["name"] for e in events
                 if e["ph"] == "M" and e["name"] == "process_name"}
    check(sorted(processes.values()) == [f"rank {r}" for r in range(ranks)], processes)
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    check(sorted(threads.values()) ==
          sorted(["checkpoint writes", "gradient exchange", "training"] * ranks), threads)
    tids = [tid for pid, tid in threads]
    check(len(set(tids)) == len(tids) and 0 not in tids and 0 not in processes,
          f"thread ids shared or 0: {threads}")
    check(all(e["ph"] == "M" or (e["pid"], e["tid"]) in threads for e in events),
          "an event on an unnamed thread")
    spans = [e for e in events if e["ph"] in ("X", "i")]
    check(all(isinstance(e["ts"], int) and e["ts"] > 1.6e15 for e in spans),
          "times are not whole Unix microseconds")
    check(all(e.get("dur", 0) >= 0 for e in spans), "an event with a negative length")
    check_nesting(events, path)

    rank_of = {pid: int(name.split()[1]) for pid, name in processes.items()}
    thread_of = {key: name for key, name in threads.items()}
    allreduces = {}
    for pid, rank in rank_of.items():
        mine = [e for e in spans if e["pid"] == pid]
        training = [e for e in mine if thread_of[(pid, e["tid"])] == "training"]
        exchange = [e for e in mine if thread_of[(pid, e["tid"])] == "gradient exchange"]
        for phase in TRAINING_PHASES:
            seen = sorted(e["args"]["batch"] for e in training if e["name"] == phase)
            check(seen == list(range(1, batches + 1)), f"rank {rank} {phase}: {seen}")
        check(any(e["name"] == "validating" for e in training), f"rank {rank}: no validation")
        # Rank 0 writes each checkpoint on its own thread (checkpoint_storage.async) after the
        # training thread took it, one write at a time (check_nesting: no overlap).
        taken = sorted(e["args"]["batch"] for e in training if e["name"] == "taking a checkpoint")
        written = sorted(e["args"]["batch"] for e in mine
                         if thread_of[(pid, e["tid"])] == "checkpoint writes")
        check(taken == list(range(checkpoint_period, batches + 1, checkpoint_period)),
              f"rank {rank} took checkpoints at {taken}")
        check(written == (taken if rank == 0 else []), f"rank {rank} wrote {written}")
        buckets = sorted({e["name"] for e in exchange if e["name"].startswith("bucket ")})
        check(buckets, f"rank {rank}: no bucket on the exchange thread")
        for bucket in buckets:
            for kind, where in ((bucket, exchange), (bucket + " ready", training)):
                seen = sorted(e["args"]["batch"] for e in where if e["name"] == kind)
                check(seen == list(range(1, batches + 1)), f"rank {rank} {kind}: {seen}")
        calls = [e for e in exchange if e["name"] == "allreduce"]
        check(calls and all(e["args"]["bytes"] > 0 for e in calls), f"rank {rank}: {calls[:2]}")
        check(any(e["name"] == "codec" for e in exchange), f"rank {rank}: no codec slice")
        # The n-th allreduce of a batch is the same collective on every rank.
        per_batch = collections.defaultdict(list)
        for e in sorted(calls, key=lambda e: e["ts"]):
            per_batch[e["args"]["batch"]].append(e)
        allreduces[rank] = {(b, i): e for b, es in per_batch.items() for i, e in enumerate(es)}
    if ranks > 1:
        check(allreduces[0].keys() == allreduces[1].keys(), "ranks ran different allreduces")
        for key, first in allreduces[0].items():
            other = allreduces[1][key]
            check(first["ts"] <= other["ts"] + other["dur"] + SLACK_US and
                  other["ts"] <= first["ts"] + first["dur"] + SLACK_US,
                  f"allreduce {key} does not overlap across ranks: {first} {other}")
    return events


with temp_dir() as tmp:
    profiled_text = read_bytes(mlp_config(tmp, batches=BATCHES, period=20)).decode() + \
        "profiling:\n  enabled: true\n"
    config = write_config(tmp, profiled_text, file_name="profiled.yaml")
    run_dir = os.path.join(tmp, "profiled")
    code, out, err = run("run", config, "--output", run_dir, "--cpu-slots", "2",
                         "--set", "resources.slots_per_trial=2")
    check(code == 0, f"profiled run failed:\n{out}\n{err}")
    timeline = os.path.join(run_dir, "trials", "1", "timeline.json")
    check(f"timeline of trial 1: {timeline}" in out, out)
    check_timeline(timeline, 2, BATCHES)

    # An orchestrator and two agents of one slot: the ranks of the trial run on different
    # agents, leave their timelines in the checkpoint storage, and the orchestrator merges them.
    spread = write_config(tmp, profiled_text + "resources:\n  slots_per_trial: 2\n",
                          file_name="spread.yaml")
    with Cluster(tmp) as cluster:
        for agent_id in ("agent-a", "agent-b"):
            cluster.add_agent(agent_id, 1, "--advertise-address", "127.0.0.1")
        experiment_id = cluster.submit(spread)
        check(cluster.wait_ended(experiment_id) == "completed", cluster.logs())
        folder = os.path.join(cluster.state, "experiments", str(experiment_id))
        trial_id = experiment(folder)["trials"][0]["id"]
        merged = os.path.join(folder, "trials", str(trial_id), "timeline.json")
        wait_for(lambda: os.path.exists(merged), 30, "the merged timeline")
        check_timeline(merged, 2, BATCHES)
        ranks = glob.glob(os.path.join(cluster.state, "**", ".timelines",
                                       f"trial{trial_id}-attempt0-rank*.json"), recursive=True)
        check(len(ranks) == 2, f"rank timelines in the checkpoint storage: {ranks}")

    # A worker killed after a checkpoint: the timeline shows the restart as the restore that
    # begins the next attempt, and training goes on after it.
    restarted = os.path.join(tmp, "restarted")
    batches = interruptible(3000)
    config = write_config(tmp, read_bytes(mlp_config(
        tmp, name="restarted", batches=batches, period=100, hidden_size=128, max_restarts=1)).decode() +
        "profiling:\n  enabled: true\n", file_name="restarted.yaml")
    process = start("run", config, "--output", restarted)
    wait_for(lambda: experiment(restarted)["trials"][0]["checkpoints"], what="a checkpoint")
    pid = worker_pid(0, restarted)
    check(pid is not None, "no worker process found")
    os.kill(pid, signal.SIGKILL)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"restarted run exited {process.returncode}:\n{out}\n{err}")
    restarted_timeline = os.path.join(restarted, "trials", "1", "timeline.json")
    with open(restarted_timeline) as f:
        events = json.load(f)["traceEvents"]
    check_nesting(events, restarted_timeline)
    spans = [e for e in events if e["ph"] == "X"]
    restores = [e for e in spans
                if e["name"].startswith("restart 1: restoring checkpoint trial-1-batch-")]
    check(len(restores) == 1, f"{len(restores)} restores of a checkpoint in the timeline")
    after = [e["args"]["batch"] for e in spans
             if e["name"] == "inside the plugin's train_batch" and e["ts"] > restores[0]["ts"]]
    check(after and min(after) == restores[0]["args"]["batch"] + 1 and max(after) == batches,
          f"training after the restore at batch {restores[0]['args']['batch']}: {after[:3]}...")

    # profiling.begin_on_batch and end_after_batch keep the timeline to a window of batches.
    windowed = os.path.join(tmp, "windowed")
    config = write_config(tmp, read_bytes(mlp_config(tmp, name="windowed", batches=30,
                                                     period=30)).decode() +
                          "profiling: {enabled: true, begin_on_batch: 10, end_after_batch: 12}\n",
                          file_name="windowed.yaml")
    code, out, err = run("run", config, "--output", windowed)
    check(code == 0, f"windowed run failed:\n{out}\n{err}")
    with open(os.path.join(windowed, "trials", "1", "timeline.json")) as f:
        events = json.load(f)["traceEvents"]
    seen = {e["args"]["batch"] for e in events if e["ph"] != "M"}
    check(seen == {10, 11, 12}, f"batches in a timeline of batches 10 to 12: {sorted(seen)}")

    plain = os.path.join(tmp, "plain")
    code, out, err = run("run", mlp_config(tmp, batches=20, period=20), "--output", plain)
    check(code == 0, f"plain run failed:\n{out}\n{err}")
    check(not os.path.exists(os.path.join(plain, "trials", "1", "timeline.json")),
          "a timeline without profiling")
    check(not glob.glob(os.path.join(plain, "**", ".timelines"), recursive=True),
          "a timelines folder without profiling")
print("ok")
