"""A plugin that crashes (SIGSEGV in train_batch) becomes a trial error naming the signal; the CLI
itself exits cleanly with status 1 and records the error.

And a plugin whose train_batch fails on rank 1 of 2: the trial's error names that rank and its
plugin's error first, before rank 0's lost connection in the gradient exchange, whichever of the
two exits the orchestrator heard first."""
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

    failing = quadratic_config(tmp, "rank-error", batches=100, file_name="rank_error.yaml",
                               hyperparameters={"error_batch": 30, "error_rank": 1})
    failed_dir = os.path.join(tmp, "rank-error")
    code, out, err = run("run", failing, "--output", failed_dir, "--cpu-slots", "2")
    check(code == 1, f"exit {code}:\n{out}\n{err}")
    error = experiment(failed_dir)["trials"][0]["error"]
    check(error.startswith("rank 1 exited with code 1 (") and
          "a deliberate error at training batch 30" in error.split("; then ")[0], error)
    check("  error: rank 1 exited with code 1" in out + err, f"{out}\n{err}")
print("ok")
