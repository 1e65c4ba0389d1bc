"""A rank whose process is stopped (SIGSTOP) is named: the other rank gives up after
optimizations.collective_timeout, and the trial's error says which rank was stopped, not only the
healthy rank that timed out waiting for it: the stopped rank's agent finds its process stopped when
it comes to kill it, and the orchestrator puts that rank first in the error. Under `cohort run`
both ranks share the one agent; flight_recorder_test.py stops rank 1 of a trial over two agents
and checks the same error there."""
import os
import signal
import time

from cohort_cli import *

NAMED = "process was stopped (SIGSTOP or a debugger): it is the rank the others waited for"


def stopped_config(tmp, name):
    text = read_bytes(mlp_config(tmp, name=name, batches=10**6, period=10**6)).decode()
    return write_config(tmp, text + "resources:\n  slots_per_trial: 2\n"
                        "optimizations:\n  collective_timeout: 5\n",
                        file_name=name + ".yaml")


def stop_rank_1(run_dir, trained):
    """Waits for rank 1's worker under RUN_DIR and for `trained()`, stops it with SIGSTOP and
    returns (pid, when)."""
    wait_for(lambda: worker_pid(1, run_dir) is not None and trained(), 120, "rank 1 to train")
    pid = worker_pid(1, run_dir)
    os.kill(pid, signal.SIGSTOP)
    return pid, time.monotonic()


with temp_dir() as tmp:
    # One agent: `cohort run` with two CPU slots.
    run_dir = os.path.join(tmp, "run")
    process = start("run", stopped_config(tmp, "stopped"), "--output", run_dir, "--cpu-slots", "2")
    try:
        pid, stopped_at = stop_rank_1(
            run_dir, lambda: experiment(run_dir)["trials"][0]["batches_trained"] > 0)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    elapsed = time.monotonic() - stopped_at
    check(process.returncode == 1, f"exit {process.returncode}:\n{out}\n{err}")
    check(elapsed < 60, f"took {elapsed:.0f} s to give up on a 5 s timeout")
    error = experiment(run_dir)["trials"][0]["error"]
    check(error.startswith("rank 1 ") and NAMED in error and "then rank 0 exited" in error, error)
print("ok")
