"""The torch_cnn example plugin (a small ResNet with BatchNorm in LibTorch, through
cohort/torch.hpp) on CPU slots, on its synthetic shapes (width 8, SGD at 0.05 with momentum 0.9,
global batch 32):

- `cohort plugin check` passes it (gradients against finite differences in float32, with the
  default step and tolerances; BatchNorm in train mode makes the loss depend on the whole batch,
  which the check allows), and a data_dir without MNIST's files fails model creation with an
  error naming the missing file;
- under `cohort run`, one slot and two slots both learn: the final validation accuracy is above
  ACCURACY (guessing gives 0.1, a linear model about 0.3);
- two slots track one slot: each training report's loss within LOSS_TRACK of the other run's,
  the final validation accuracies within ACCURACY_TRACK. They are not bitwise alike: at two
  slots each slot's BatchNorm normalises over its own 16 records, as under DDP;
- a worker killed mid-way restarts from its checkpoint and ends bitwise where a run never killed
  does: the same final parameters, and the same final validation metrics, which BatchNorm's
  running statistics (the module's buffers, checkpointed as the model's state tensors) decide.

Takes 30 to 50 s on 2 cores.
"""
import os

from cohort_cli import *

BATCHES = 600
# Measured (LibTorch 1.13, Debian, x86-64; experiment seed 7): final validation accuracy 0.904
# at 1 slot and 0.855 at 2 slots (0.79 to 0.93 over experiment seeds 7, 8, 9); required: above
# 0.7, a margin for other LibTorch builds, whose rounding changes the path training takes.
ACCURACY = 0.7
# Measured: training reports' losses at most 0.111 apart (1.823 vs 1.870 at batch 100, 0.247 vs
# 0.330 at batch 600), final validation accuracies 0.049 apart (0.115 at seed 8); allowed:
LOSS_TRACK = 0.25
ACCURACY_TRACK = 0.15
# The killed run: a checkpoint every KILL_PERIOD batches, the worker killed after the first.
KILL_BATCHES = 200
KILL_PERIOD = 100

CONFIG = """\
name: {name}
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 32
  optimizer: sgd
  learning_rate: 0.05
  momentum: 0.9
  width: 8
  synthetic_train_records: 20000
  synthetic_validation_records: 1000
searcher:
  name: single
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: {batches}
min_validation_period:
  batches: {period}
min_checkpoint_period:
  batches: {checkpoint_period}
scheduling_unit: 100
max_restarts: {max_restarts}
reproducibility:
  experiment_seed: 7
"""


def config(tmp, name, batches=BATCHES, period=200, checkpoint_period=0, max_restarts=0):
    return write_config(tmp, CONFIG.format(
        name=name, entrypoint=plugin("torch_cnn"), batches=batches, period=period,
        checkpoint_period=checkpoint_period, max_restarts=max_restarts),
        file_name=f"{name}.yaml")


def reports(run_dir, kind):
    return [r for r in metrics(run_dir) if r["kind"] == kind]


code, out, err = run("plugin", "check", plugin("torch_cnn"))
check(code == 0 and "gradient check" in out and "plugin check passed" in out,
      f"plugin check ({code}):\n{out}\n{err}")

with temp_dir() as tmp:
    code, out, err = run("plugin", "check", plugin("torch_cnn"), "--hparam", f"data_dir={tmp}")
    said = out + err
    check(code != 0 and f"data_dir '{tmp}' has no file 'train-images-idx3-ubyte'" in said,
          f"data_dir without MNIST: expected an error naming the file ({code}):\n{out}\n{err}")

    runs = {}
    for slots in (1, 2):
        run_dir = os.path.join(tmp, f"slots{slots}")
        code, out, err = run("run", config(tmp, f"cnn{slots}"), "--output", run_dir,
                             "--cpu-slots", "2", "--set", f"resources.slots_per_trial={slots}")
        check(code == 0, f"{slots} slot(s) failed:\n{out}\n{err}")
        validations = reports(run_dir, "validation")
        training = reports(run_dir, "training")
        print(f"{slots} slot(s): validation accuracy "
              f"{[round(r['metrics']['accuracy'], 3) for r in validations]}, training loss "
              f"{[round(r['metrics']['loss'], 3) for r in training]}")
        check(validations and validations[-1]["batches"] == BATCHES,
              f"{slots} slot(s): validations {validations}")
        check(validations[-1]["metrics"]["accuracy"] > ACCURACY,
              f"{slots} slot(s) did not learn: {validations}")
        check(len(training) == BATCHES // 100, f"{slots} slot(s): training reports {training}")
        runs[slots] = (validations, training)
    one, two = runs[1], runs[2]
    check(all(abs(a["metrics"]["loss"] - b["metrics"]["loss"]) < LOSS_TRACK
              for a, b in zip(one[1], two[1])),
          f"training losses: 1 slot {one[1]}, 2 slots {two[1]}")
    check(abs(one[0][-1]["metrics"]["accuracy"] - two[0][-1]["metrics"]["accuracy"])
          < ACCURACY_TRACK, f"final validations: 1 slot {one[0][-1]}, 2 slots {two[0][-1]}")
    check(all(r["exchanged_bytes"] > 0 for r in two[1]), two[1])

    # A worker killed mid-way, restarted from its checkpoint, ends where an untouched run does.
    untouched = os.path.join(tmp, "untouched")
    code, out, err = run("run", config(tmp, "untouched", KILL_BATCHES, KILL_PERIOD, KILL_PERIOD,
                                       max_restarts=1), "--output", untouched)
    check(code == 0, f"untouched run failed:\n{out}\n{err}")
    killed = os.path.join(tmp, "killed")
    process = start("run", config(tmp, "killed", KILL_BATCHES, KILL_PERIOD, KILL_PERIOD,
                                  max_restarts=1), "--output", killed)
    wait_for(lambda: experiment(killed)["trials"][0]["checkpoints"], what="the first checkpoint")
    kill_the_worker(killed)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"restarted run exited {process.returncode}:\n{out}\n{err}")
    check("restart 1 of 1" in err, err)
    check(final_parameters(killed, KILL_BATCHES) == final_parameters(untouched, KILL_BATCHES),
          "the restarted run's final parameters differ from the untouched run's")
    final = {name: reports(run_dir, "validation")[-1]
             for name, run_dir in (("untouched", untouched), ("killed", killed))}
    check(final["killed"]["batches"] == final["untouched"]["batches"] == KILL_BATCHES and
          final["killed"]["metrics"] == final["untouched"]["metrics"],
          f"the final validations differ (BatchNorm's running statistics were not restored?): "
          f"{final}")
print("ok")
