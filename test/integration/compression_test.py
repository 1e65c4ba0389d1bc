"""Compressed gradient exchange still trains, at 2 slots, with real workers.

- fp16 and bf16 land within a documented distance of the uncompressed run's parameters after
  PARAMETER_BATCHES plain SGD steps (longer runs of a non-convex model drift apart from any
  rounding difference, compressed or not), and within a documented factor of its final loss;
- top-k and PowerSGD (with error feedback) still converge: on `mlp` and `linreg` their final
  validation loss is within a documented factor of the uncompressed run's after the same batches.

The bounds are the ones docs/config.md states for `optimizations.gradient_compression`.
"""
import array
import os

from cohort_cli import *

BATCHES = 400
PARAMETER_BATCHES = 20
FP16_PARAMETER_TOLERANCE = 1e-3   # of the largest parameter, after PARAMETER_BATCHES
BF16_PARAMETER_TOLERANCE = 5e-3
LOSS_FACTOR = 1.3                 # compressed final validation loss against uncompressed

COMPRESSIONS = {
    "none": "false",
    "fp16": "fp16",
    "bf16": "bf16",
    "topk": "{type: topk, ratio: 0.05}",
    "powersgd": "{type: powersgd, rank: 2, start_iter: 20}",
}

LINREG_CONFIG = """\
name: {name}
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 16
  optimizer: sgd
  learning_rate: 0.05
  dim: 16
  train_records: 2048
  validation_records: 256
resources:
  slots_per_trial: 2
searcher:
  name: single
  metric: loss
  smaller_is_better: true
  max_length:
    batches: {batches}
min_validation_period:
  batches: {batches}
scheduling_unit: 50
optimizations:
  gradient_compression: {compression}
reproducibility:
  experiment_seed: 5
"""


def parameters(run_dir, batches):
    values = array.array("f")
    values.frombytes(final_parameters(run_dir, batches))
    return values


def validation_loss(run_dir):
    reports = [r for r in metrics(run_dir) if r["kind"] == "validation"]
    check(reports and reports[-1]["batches"] == BATCHES, f"{run_dir}: no final validation")
    return reports[-1]["metrics"]["loss"]


def first_training_loss(run_dir):
    return next(r for r in metrics(run_dir) if r["kind"] == "training")["metrics"]["loss"]


def train(config, run_dir):
    code, out, err = run("run", config, "--output", run_dir, "--cpu-slots", "2")
    check(code == 0, f"{run_dir} failed ({code}):\n{out}\n{err}")
    return run_dir


def train_mlp(tmp, compression, batches=BATCHES, momentum=0.9):
    name = f"mlp-{compression}-{batches}"
    config = mlp_config(tmp, name=name, batches=batches, period=batches)
    os.rename(config, os.path.join(tmp, name + ".yaml"))
    config = os.path.join(tmp, name + ".yaml")
    with open(config, "a") as f:
        f.write("resources:\n  slots_per_trial: 2\n")
        f.write(f"optimizations:\n  gradient_compression: {COMPRESSIONS[compression]}\n")
    code, out, err = run("run", config, "--output", os.path.join(tmp, name), "--cpu-slots", "2",
                         "--set", f"hyperparameters.momentum={momentum}")
    check(code == 0, f"{name} failed ({code}):\n{out}\n{err}")
    return os.path.join(tmp, name)


def train_linreg(tmp, compression):
    name = f"linreg-{compression}"
    config = write_config(tmp, LINREG_CONFIG.format(
        name=name, entrypoint=plugin("linreg"), batches=BATCHES,
        compression=COMPRESSIONS[compression]), file_name=name + ".yaml")
    return train(config, os.path.join(tmp, name))


def largest_difference(a, b):
    check(len(a) == len(b), f"{len(a)} against {len(b)} parameters")
    return max(abs(x - y) for x, y in zip(a, b)) / max(max(abs(x) for x in b), 1e-12)


with temp_dir() as tmp:
    short = {c: train_mlp(tmp, c, batches=PARAMETER_BATCHES, momentum=0)
             for c in ("none", "fp16", "bf16")}
    exact = parameters(short["none"], PARAMETER_BATCHES)
    for compression, tolerance in (("fp16", FP16_PARAMETER_TOLERANCE),
                                   ("bf16", BF16_PARAMETER_TOLERANCE)):
        difference = largest_difference(parameters(short[compression], PARAMETER_BATCHES), exact)
        print(f"mlp {compression}: largest parameter difference {difference:.3g} "
              f"after {PARAMETER_BATCHES} batches")
        check(difference <= tolerance,
              f"mlp {compression}: parameters differ by {difference:.3g} of the largest, "
              f"more than {tolerance}")

    mlp = {c: train_mlp(tmp, c) for c in COMPRESSIONS}
    reference = validation_loss(mlp["none"])
    for compression in ("fp16", "bf16", "topk", "powersgd"):
        loss = validation_loss(mlp[compression])
        print(f"mlp {compression}: validation loss {loss:.4g} against {reference:.4g}")
        check(loss <= LOSS_FACTOR * reference,
              f"mlp {compression}: validation loss {loss:.4g} is more than {LOSS_FACTOR} x "
              f"the uncompressed {reference:.4g}")
        check(loss < 0.5 * first_training_loss(mlp[compression]),
              f"mlp {compression}: did not learn")
        with open(os.path.join(mlp[compression], "trials", "1", "log.txt")) as f:
            log = f.read()
        check(compression in log, f"the worker log does not name {compression}:\n{log}")

    linreg = {c: train_linreg(tmp, c) for c in ("none", "topk", "powersgd")}
    reference = validation_loss(linreg["none"])
    for compression in ("topk", "powersgd"):
        loss = validation_loss(linreg[compression])
        print(f"linreg {compression}: validation loss {loss:.4g} against {reference:.4g}")
        check(loss <= LOSS_FACTOR * reference + 1e-6,
              f"linreg {compression}: validation loss {loss:.4g} is more than {LOSS_FACTOR} x "
              f"the uncompressed {reference:.4g}")
        check(loss < 0.1 * first_training_loss(linreg[compression]),
              f"linreg {compression}: did not learn")
print("ok")
