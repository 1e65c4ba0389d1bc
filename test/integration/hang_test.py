"""A rank that stops taking part is an error within optimizations.collective_timeout, not a hang:
c_quadratic never returns from rank 1's third train_batch. Rank 0 gives up on the gradient
exchange after the timeout, naming the batch, the phase and the bucket; rank 1's watchdog says
in the trial log that rank 1 is the one stuck, inside the plugin, at batch 3; the run ends (the
agent stops the stuck rank) well within a bound."""
import os
import time

from cohort_cli import *

with temp_dir() as tmp:
    config = write_config(tmp, f"""\
name: hang
entrypoint: {os.path.join(PLUGINS, 'test', 'c_quadratic.so')}
hyperparameters:
  global_batch_size: 4
  learning_rate: 0.25
  hang_batch: 3
  hang_rank: 1
resources:
  slots_per_trial: 2
optimizations:
  collective_timeout: 2
searcher:
  name: single
  metric: loss
  max_length:
    batches: 6
max_restarts: 0
""")
    run_dir = os.path.join(tmp, "run")
    started = time.monotonic()
    code, out, err = run("run", config, "--output", run_dir, "--cpu-slots", "2", timeout=120)
    elapsed = time.monotonic() - started
    check(code == 1, f"exit {code}:\n{out}\n{err}")
    check(elapsed < 60, f"took {elapsed:.1f} s to give up on a 2 s timeout")
    trial = experiment(run_dir)["trials"][0]
    error = trial["error"]
    check("rank 0" in error and "batch 3, gradient exchange: bucket 1 of 1" in error, error)
    check("optimizations.collective_timeout is 2 s): a rank stopped taking part" in error, error)
    with open(os.path.join(run_dir, "trials", "1", "log.txt")) as f:
        log = f.read()
    check("[rank 1] rank 1 has been inside the plugin's train_batch of batch 3 for" in log, log)
    check("rank 0 has been" not in log, log)
print("ok")
