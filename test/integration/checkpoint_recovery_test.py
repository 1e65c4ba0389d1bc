"""A checkpoint interrupted mid-write, or damaged (a lost end, or one changed byte that only its
checksum shows), is never used: resuming takes the previous whole checkpoint, with a warning naming
the damaged one, and still ends bitwise where an uninterrupted run does."""
import json
import os
import shutil
import signal

from cohort_cli import *

BATCHES = interruptible(1500)


def reported_once(run_dir):
    """Every report of trial 1 in metrics.jsonl once, in batch order: a resume that went back
    further than the record did would report the batches in between twice."""
    with open(os.path.join(run_dir, "trials", "1", "metrics.jsonl")) as f:
        reports = [json.loads(line) for line in f if line.strip()]
    for kind in ("training", "validation"):
        batches = [r["batches"] for r in reports if r["kind"] == kind]
        check(batches and batches == sorted(set(batches)),
              f"{run_dir}: {kind} reports at batches {batches}")

with temp_dir() as tmp:
    config = mlp_config(tmp, batches=BATCHES, period=50, hidden_size=128)
    a = os.path.join(tmp, "a")
    code, out, err = run("run", config, "--output", a)
    check(code == 0, f"run A failed:\n{out}\n{err}")
    expected = final_parameters(a, BATCHES)

    b = os.path.join(tmp, "b")
    process = start("run", config, "--output", b, "--set", "checkpoint_storage.save_trial_latest=5")
    wait_for(lambda: experiment(b)["trials"][0]["checkpoints"], what="B's first checkpoint")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    check(process.returncode == 130, f"exit {process.returncode}:\n{out}\n{err}")
    stopped_at = experiment(b)["trials"][0]["batches_trained"]
    storage = os.path.join(b, "checkpoints")
    latest = os.path.join(storage, f"trial-1-batch-{stopped_at}")
    check(os.path.isdir(latest), os.listdir(storage))

    # A later checkpoint whose write died half-way: a temporary folder with part of the files.
    partial = os.path.join(storage, f".tmp-trial-1-batch-{BATCHES + 60}")
    os.makedirs(partial)
    with open(os.path.join(partial, "parameters"), "wb") as f:
        f.write(read_bytes(os.path.join(latest, "parameters"))[:100])
    # And one that looks finished but lost the end of a file.
    damaged = os.path.join(storage, f"trial-1-batch-{BATCHES + 50}")
    shutil.copytree(latest, damaged)
    with open(os.path.join(damaged, "parameters"), "r+b") as f:
        f.truncate(10)

    code, out, err = run("run", "--resume", b)
    check(code == 0, f"resume failed:\n{out}\n{err}")
    check(f"resuming from checkpoint trial-1-batch-{stopped_at}\n" in err, err)
    # The damaged one is not passed over in silence.
    check(f"warning: checkpoint trial-1-batch-{BATCHES + 50} of trial 1 is damaged (" in out + err
          and f"trial 1 resumes from trial-1-batch-{stopped_at}" in out + err, out + err)
    check(final_parameters(b, BATCHES) == expected, "final parameters differ after recovery")

    # A whole-looking checkpoint with one byte changed (same size: only its checksum tells) is
    # passed over by the worker, which restores the newest whole one before it, and the run still
    # ends bitwise where run A did. It used to end the trial in ERROR with restarts unused.
    c = os.path.join(tmp, "c")
    process = start("run", config, "--output", c, "--set", "checkpoint_storage.save_trial_latest=5")
    wait_for(lambda: len(experiment(c)["trials"][0]["checkpoints"]) >= 2, what="C's 2 checkpoints")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    check(process.returncode == 130, f"exit {process.returncode}:\n{out}\n{err}")
    storage = os.path.join(c, "checkpoints")
    ids = sorted((d for d in os.listdir(storage) if d.startswith("trial-1-batch-")),
                 key=lambda d: int(d.rsplit("-", 1)[1]))
    check(len(ids) >= 2, f"C kept {ids}")
    newest, before = ids[-1], ids[-2]
    with open(os.path.join(storage, newest, "parameters"), "r+b") as f:
        f.seek(7)
        byte = f.read(1)
        f.seek(7)
        f.write(bytes([byte[0] ^ 0x01]))
    code, out, err = run("run", "--resume", c)
    check(code == 0, f"resume past a flipped byte failed:\n{out}\n{err}")
    # The workers say so in the trial's log (`cohort trial logs` under an orchestrator).
    with open(os.path.join(c, "trials", "1", "log.txt")) as f:
        log = f.read()
    check(f"warning: checkpoint {newest} is damaged (" in log and "fails its checksum" in log
          and f"trial 1 resumes from {before}, the newest whole checkpoint" in log, log)
    check(final_parameters(c, BATCHES) == expected, "final parameters differ after a flipped byte")
    # The record went back with the worker: the batches after the checkpoint it resumed from are
    # recorded once, not once before the damage and again after it.
    check(f"trial 1 resumed from {before} at batch " in out + err, out + err)
    # And the damaged checkpoint is gone (whole or absent): from storage, so it is never named
    # or kept again, and from the record, where it would have counted against save_trial_latest
    # and stood as a best checkpoint.
    check(f"trial 1: removed the damaged checkpoint {newest}" in out + err, out + err)
    # (A stop that fell on a checkpoint period has its batch written again, whole, as training
    # passes it: then it is there and recorded; else neither.)
    kept = [checkpoint["id"] for checkpoint in experiment(c)["trials"][0]["checkpoints"]]
    check(os.path.exists(os.path.join(storage, newest)) == (newest in kept),
          (os.listdir(storage), kept))
    for run_dir in (a, b, c):
        reported_once(run_dir)
print("ok")
