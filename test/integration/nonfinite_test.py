"""The guard against non-finite gradients at 2 slots, with real workers: c_quadratic puts a NaN in
rank 1's gradient of batch 3. With `fail` the trial ends in error naming the batch and the tensor,
and rank 1's log says the NaN was its own; with `skip` both ranks drop that step together (the
summed gradient is the same on both) and the trial completes with finite parameters. The same
under optimizations.zero_stage 2, where each rank holds the sum of its own shard only and the
ranks agree on what any of them found."""
import array
import math
import os

from cohort_cli import *


def config(tmp, policy, zero_stage=0):
    return write_config(tmp, f"""\
name: nonfinite-{policy}-{zero_stage}
entrypoint: {os.path.join(PLUGINS, 'test', 'c_quadratic.so')}
hyperparameters:
  global_batch_size: 4
  learning_rate: 0.25
  nan_batch: 3
  nan_rank: 1
resources:
  slots_per_trial: 2
optimizations:
  nonfinite_gradients: {policy}
  zero_stage: {zero_stage}
searcher:
  name: single
  metric: loss
  max_length:
    batches: 6
max_restarts: 0
""", file_name=f"{policy}-{zero_stage}.yaml")


def trial_log(run_dir):
    with open(os.path.join(run_dir, "trials", "1", "log.txt")) as f:
        return f.read()


with temp_dir() as tmp:
    failed = os.path.join(tmp, "fail")
    code, out, err = run("run", config(tmp, "fail"), "--output", failed, "--cpu-slots", "2")
    check(code == 1, f"exit {code}:\n{out}\n{err}")
    trial = experiment(failed)["trials"][0]
    check("batch 3: the gradient is not finite (tensor 'x' element 0 is nan after the sum)"
          in trial["error"], trial)
    log = trial_log(failed)
    check("[rank 1] batch 3: rank 1 computed a gradient that is not finite: "
          "tensor 'x' element 0 is nan" in log, log)
    check("rank 0 computed" not in log, log)

    for zero_stage in (0, 2):
        skipped = os.path.join(tmp, f"skip-{zero_stage}")
        code, out, err = run("run", config(tmp, "skip", zero_stage), "--output", skipped,
                             "--cpu-slots", "2")
        check(code == 0, f"exit {code}:\n{out}\n{err}")
        log = trial_log(skipped)
        check("[rank 0] batch 3: the gradient is not finite" in log and
              "optimizer step skipped" in log, log)
        values = array.array("f")
        values.frombytes(final_parameters(skipped, 6))
        check(len(values) == 3 and all(math.isfinite(v) for v in values), list(values))

    sharded = os.path.join(tmp, "fail-2")
    code, out, err = run("run", config(tmp, "fail", 2), "--output", sharded, "--cpu-slots", "2")
    check(code == 1, f"exit {code}:\n{out}\n{err}")
    trial = experiment(sharded)["trials"][0]
    check("batch 3: the gradient is not finite (" in trial["error"], trial)
print("ok")
