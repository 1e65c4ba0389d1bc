"""A checkpoint interrupted mid-write, or damaged, is never used: resuming takes the previous whole
checkpoint, with a warning naming the damaged one, and still ends bitwise where an uninterrupted
run does."""
import os
import shutil
import signal

from cohort_cli import *

BATCHES = 1500

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
print("ok")
