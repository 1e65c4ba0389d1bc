"""A rank whose process is stopped (SIGSTOP) is named: the other rank gives up after
optimizations.collective_timeout, and the trial's error says which rank was stopped, not only the
healthy rank that timed out waiting for it."""
import os
import signal
import time

from cohort_cli import *

with temp_dir() as tmp:
    text = read_bytes(mlp_config(tmp, name="stopped", batches=10**6, period=10**6)).decode()
    config = write_config(tmp, text + "resources:\n  slots_per_trial: 2\n"
                          "optimizations:\n  collective_timeout: 5\n", file_name="stopped.yaml")
    run_dir = os.path.join(tmp, "run")
    process = start("run", config, "--output", run_dir, "--cpu-slots", "2")
    try:
        wait_for(lambda: worker_pid(1, run_dir) is not None and
                 experiment(run_dir)["trials"][0]["batches_trained"] > 0, 120,
                 "rank 1 to train")
        stopped_at = time.monotonic()
        os.kill(worker_pid(1, run_dir), signal.SIGSTOP)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    elapsed = time.monotonic() - stopped_at
    check(process.returncode == 1, f"exit {process.returncode}:\n{out}\n{err}")
    check(elapsed < 60, f"took {elapsed:.0f} s to give up on a 5 s timeout")
    error = experiment(run_dir)["trials"][0]["error"]
    check("rank 1's process is stopped (SIGSTOP or a debugger): it is the rank the others waited "
          "for" in error, error)
print("ok")
