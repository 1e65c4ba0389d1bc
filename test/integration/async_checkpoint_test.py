"""Checkpoints written in the background (checkpoint_storage.async, the default): a worker
SIGKILLed while rank 0 writes one leaves only the write's temporary folder; the restart resumes
from the checkpoint before it, cleans the temporary folder away, and ends bitwise where an
uninterrupted run does, which also equals a run whose checkpoints were written with training
waiting (checkpoint_storage.async: false). A checkpoint written in the background, and so reported
after the validations that followed it, keeps the searcher metric of its own validation, and the
best one is kept."""
import os
import signal

from cohort_cli import *

BATCHES = 20
# About 9 MB per checkpoint (parameters and momentum of a 1024-wide MLP; a quarter of it under the
# sanitizers, which slow the write as much as the training), one every 5 batches: each write lasts
# long enough to be caught in the act.
HIDDEN = 512 if SANITIZED else 1024
PERIOD = 5


def being_written(storage):
    """The checkpoint folders a write is assembling now (without their lock files)."""
    try:
        names = os.listdir(storage)
    except FileNotFoundError:
        return []
    return [n for n in names if n.startswith(".partial-") and not n.endswith(".lock")]


with temp_dir() as tmp:
    config = mlp_config(tmp, batches=BATCHES, period=PERIOD, hidden_size=HIDDEN, max_restarts=1)

    whole = os.path.join(tmp, "whole")
    code, out, err = run("run", config, "--output", whole)
    check(code == 0, f"the uninterrupted run failed:\n{err}")
    expected = final_parameters(whole, BATCHES)

    waiting = os.path.join(tmp, "waiting")
    code, out, err = run("run", config, "--output", waiting, "--set",
                         "checkpoint_storage.async=false")
    check(code == 0, f"the run with synchronous checkpoints failed:\n{err}")
    check(final_parameters(waiting, BATCHES) == expected,
          "synchronous and background checkpoints trained differently")

    def check_kept_checkpoints(run_dir):
        """Each kept checkpoint has its own validation's accuracy, and the best one is kept."""
        accuracy = {m["batches"]: m["metrics"]["accuracy"] for m in metrics(run_dir)
                    if m["kind"] == "validation"}
        kept = experiment(run_dir)["trials"][0]["checkpoints"]
        for checkpoint in kept:
            check(checkpoint["searcher_metric"] == accuracy.get(checkpoint["batches"]),
                  f"{run_dir}: {checkpoint} does not have its validation's accuracy {accuracy}")
        best = [b for b in accuracy if accuracy[b] == max(accuracy.values())]  # ties: any one
        check(any(c["batches"] in best for c in kept),
              f"{run_dir}: no best validation (batches {best}) has a checkpoint: {kept}")

    check_kept_checkpoints(whole)
    check_kept_checkpoints(waiting)
    # A validation two batches after a checkpoint's: its write, in the background, is reported
    # after that validation. Both checkpoints are kept, so each shows the metric it was given.
    late = os.path.join(tmp, "late")
    os.mkdir(late + "-config")
    code, out, err = run("run", mlp_config(late + "-config", batches=BATCHES + 2, period=BATCHES,
                                           hidden_size=HIDDEN), "--output", late,
                         "--set", "checkpoint_storage.save_trial_latest=2")
    check(code == 0, f"the run with a late validation failed:\n{err}")
    check_kept_checkpoints(late)
    check(len(experiment(late)["trials"][0]["checkpoints"]) == 2,
          f"{late}: {experiment(late)['trials'][0]['checkpoints']}")

    killed = os.path.join(tmp, "killed")
    storage = os.path.join(killed, "checkpoints")
    process = start("run", config, "--output", killed)
    wait_for(lambda: worker_pid(0, killed) is not None, what="the worker")
    pid = worker_pid(0, killed)
    # After a first checkpoint is whole, the moment a later one is being written.
    wait_for(lambda: experiment(killed)["trials"][0]["checkpoints"] and being_written(storage),
             what="a checkpoint being written")
    os.kill(pid, signal.SIGKILL)
    caught = being_written(storage)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"the killed run exited {process.returncode}:\n{out}\n{err}")
    check(caught, "the write ended before the kill: nothing was caught being written")
    batch = int(caught[0][len(".partial-trial-1-batch-"):].split("-")[0])
    resumed = [line for line in (out + err).splitlines() if "resuming from checkpoint" in line]
    check(resumed and all(int(line.rsplit("-", 1)[1]) < batch for line in resumed),
          f"killed while writing batch {batch}'s checkpoint; {resumed}")
    check(final_parameters(killed, BATCHES) == expected,
          "the run killed during a background write ended elsewhere")
    check(not being_written(storage) and not os.path.exists(os.path.join(storage, caught[0])),
          f"left behind: {os.listdir(storage)}")
    print(f"killed while checkpoint {batch} was being written; resumed from "
          f"{resumed[0].rsplit(' ', 1)[1]} and ended bitwise equal")
print("ok")
