"""A plugin that crashes (SIGSEGV in train_batch) becomes a trial error naming the signal; the CLI
itself exits cleanly with status 1 and records the error."""
import os

from cohort_cli import *

with temp_dir() as tmp:
    config = write_config(tmp, f"""\
name: crash
entrypoint: {os.path.join(PLUGINS, 'test', 'defect_crash_in_train.so')}
hyperparameters:
  global_batch_size: 2
  learning_rate: 0.1
searcher:
  name: single
  metric: loss
  max_length:
    batches: 10
max_restarts: 2
""")
    run_dir = os.path.join(tmp, "run")
    code, out, err = run("run", config, "--output", run_dir)
    check(code == 1, f"exit {code}:\n{out}\n{err}")
    check("signal" in err, err)
    state = experiment(run_dir)
    check(state["state"] == "ERROR", state)
    trial = state["trials"][0]
    check("signal" in trial["error"], trial)
    # Each restart crashes again at the same batch; the limit is honoured.
    check(trial["restarts"] == 2, trial)
    check("restart 2 of 2" in err, err)
print("ok")
