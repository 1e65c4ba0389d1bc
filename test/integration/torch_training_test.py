"""A LibTorch model (the torch_classifier test plugin, through cohort/torch.hpp) on CPU slots:

- `cohort plugin check` passes it (its gradients against finite differences, its state);
- under `cohort run`, one slot and two slots both learn (the validation loss ends well below
  ln 3, where it starts); at two slots the gradients go through the exchange as autograd reports
  them, and the two runs end close (BatchNorm's statistics are each slot's own, as under DDP, so
  not bitwise);
- a worker killed mid-way restarts from its checkpoint (parameters, optimizer state, and the
  module's buffers as state tensors) and ends with bitwise the parameters of a run never
  killed.
"""
import math
import os

from cohort_cli import *

BATCHES = 400

CONFIG = """\
name: {name}
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 16
  optimizer: sgd
  learning_rate: 0.1
  momentum: 0.9
searcher:
  name: single
  metric: loss
  max_length:
    batches: {batches}
min_validation_period:
  batches: {period}
min_checkpoint_period:
  batches: {period}
scheduling_unit: 10
max_restarts: 1
reproducibility:
  experiment_seed: 7
"""


def config(tmp, name, period=BATCHES):
    return write_config(tmp, CONFIG.format(name=name, entrypoint=plugin_path(), batches=BATCHES,
                                           period=period), file_name=f"{name}.yaml")


def plugin_path():
    return os.path.join(PLUGINS, "test", "torch_classifier.so")


def validation_losses(run_dir):
    return [r["metrics"]["loss"] for r in metrics(run_dir) if r["kind"] == "validation"]


code, out, err = run("plugin", "check", plugin_path())
check(code == 0 and "gradient check" in out and "plugin check passed" in out,
      f"plugin check ({code}):\n{out}\n{err}")

with temp_dir() as tmp:
    one = os.path.join(tmp, "one")
    code, out, err = run("run", config(tmp, "one"), "--output", one, "--cpu-slots", "2")
    check(code == 0, f"1 slot failed:\n{out}\n{err}")
    two = os.path.join(tmp, "two")
    code, out, err = run("run", config(tmp, "two"), "--output", two, "--cpu-slots", "2",
                         "--set", "resources.slots_per_trial=2")
    check(code == 0, f"2 slots failed:\n{out}\n{err}")
    for run_dir in (one, two):
        losses = validation_losses(run_dir)
        check(losses and losses[-1] < 0.5 * math.log(3), f"{run_dir} did not learn: {losses}")
    check(abs(validation_losses(one)[-1] - validation_losses(two)[-1]) < 0.1,
          f"1 slot {validation_losses(one)}, 2 slots {validation_losses(two)}")
    training = [r for r in metrics(two) if r["kind"] == "training"]
    check(training and all(r["timings"]["exchange"] > 0 and r["exchanged_bytes"] > 0
                           for r in training), training)

    # A worker killed mid-way, restarted from its checkpoint, ends where an untouched run does.
    untouched = os.path.join(tmp, "untouched")
    code, out, err = run("run", config(tmp, "untouched", period=50), "--output", untouched)
    check(code == 0, f"untouched run failed:\n{out}\n{err}")
    killed = os.path.join(tmp, "killed")
    process = start("run", config(tmp, "killed", period=50), "--output", killed)
    wait_for(lambda: experiment(killed)["trials"][0]["checkpoints"], what="the first checkpoint")
    kill_the_worker(killed)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"restarted run exited {process.returncode}:\n{out}\n{err}")
    check("restart 1 of 1" in err, err)
    check(final_parameters(killed, BATCHES) == final_parameters(untouched, BATCHES),
          "the restarted run's final parameters differ from the untouched run's")
print("ok")
