"""cohort/torch.hpp's GPU path end to end: the torch_cnn and torch_gpt example plugins built
against a LibTorch with CUDA (scripts/build-torch-plugins, PyTorch 2.x from pip) training on the
GPU. Exits 77 (skipped) without an NVIDIA GPU, or when PLUGIN_DIR's torch plugins were built
without CUDA (the Meson build's, against Debian's LibTorch).

- torch_cnn (synthetic shapes, width 8, SGD with momentum, global batch 32, as the CPU test
  torch_cnn_test) under `cohort run --gpus`: it learns (final validation accuracy above ACCURACY)
  and tracks the same plugin on one CPU slot (each training report's loss within LOSS_TRACK, the
  final accuracies within ACCURACY_TRACK: cuDNN and cuBLAS add in other orders than the CPU, so
  the two take different paths);
- the same trial at 2 slots over two agents (one GPU each, NCCL over sockets): learns, tracks the
  1-slot GPU run as closely, and exchanged gradients in every report;
- a worker killed after the first checkpoint: the trial restarts from it and ends with the final
  parameters and validation of an untouched GPU run, bit for bit (the plugin makes cuDNN
  deterministic on a GPU; BatchNorm's statistics come back from the checkpoint);
- torch_gpt (torch_gpt_test's small model) under `cohort run --gpus` with Adam: the validation
  loss starts near ln 56 and falls by more than FALL.
Prints each run's records/s.
"""
import os
import sys

GPUS = "/proc/driver/nvidia/gpus"
if not (os.path.isdir(GPUS) and os.listdir(GPUS)):
    print("skipped: no NVIDIA GPU on this machine")
    sys.exit(77)

from cohort_cli import *  # noqa: E402 (after the skip: it reads the arguments)
from cluster import two_agent_cluster  # noqa: E402

BATCHES = 600
ACCURACY = 0.7  # torch_cnn_test's bound on the CPU (which measured 0.904 at 1 slot)
LOSS_TRACK = 0.25
ACCURACY_TRACK = 0.15
KILL_BATCHES = 200
KILL_PERIOD = 100
GPT_BATCHES = 200
FALL = 1.2  # torch_gpt_test's bound on the CPU, the same model (which measured a fall of 2.03)

CNN = """\
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
resources:
  slots_per_trial: {slots}
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

GPT = """\
name: gpt-gpu
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 32
  optimizer: adam
  learning_rate: 0.003
  context: 16
  embedding: 32
  heads: 2
  layers: 1
searcher:
  name: single
  metric: loss
  max_length:
    batches: {batches}
perform_initial_validation: true
min_validation_period:
  batches: 100
scheduling_unit: 100
reproducibility:
  experiment_seed: 7
"""


def cnn_config(tmp, name, slots=1, batches=BATCHES, period=200, checkpoint_period=0,
               max_restarts=0):
    return write_config(tmp, CNN.format(
        name=name, entrypoint=plugin("torch_cnn"), slots=slots, batches=batches, period=period,
        checkpoint_period=checkpoint_period, max_restarts=max_restarts), file_name=f"{name}.yaml")


def reports(run_dir, kind, trial=1):
    return [r for r in metrics(run_dir, trial) if r["kind"] == kind]


def records_per_second(run_dir, trial=1):
    training = reports(run_dir, "training", trial)
    check(len(training) >= 2, f"too few training reports in {run_dir}")
    return ((training[-1]["records"] - training[0]["records"]) /
            (training[-1]["time"] - training[0]["time"]))


def learned(label, run_dir, trial=1):
    """The run's (validations, training reports), after checking it learned."""
    validations, training = reports(run_dir, "validation", trial), reports(run_dir, "training", trial)
    print(f"{label}: validation accuracy {[round(r['metrics']['accuracy'], 3) for r in validations]}"
          f", training loss {[round(r['metrics']['loss'], 3) for r in training]}, "
          f"{records_per_second(run_dir, trial):.0f} records/s")
    check(validations and validations[-1]["batches"] == BATCHES, f"{label}: {validations}")
    check(validations[-1]["metrics"]["accuracy"] > ACCURACY, f"{label} did not learn")
    check(len(training) == BATCHES // 100, f"{label}: training reports {training}")
    return validations, training


def tracks(label, a, b):
    check(all(abs(x["metrics"]["loss"] - y["metrics"]["loss"]) < LOSS_TRACK
              for x, y in zip(a[1], b[1])), f"{label}: training losses {a[1]} against {b[1]}")
    check(abs(a[0][-1]["metrics"]["accuracy"] - b[0][-1]["metrics"]["accuracy"]) < ACCURACY_TRACK,
          f"{label}: final validations {a[0][-1]} against {b[0][-1]}")


if not os.path.exists(plugin("torch_cnn")) or not os.path.exists(plugin("torch_gpt")):
    print(f"skipped: no torch_cnn and torch_gpt plugins in {sys.argv[2]} "
          "(scripts/build-torch-plugins builds them against PyTorch with CUDA)")
    sys.exit(77)

with temp_dir() as tmp:
    # torch_cnn on the GPU and on one CPU slot.
    gpu = os.path.join(tmp, "gpu")
    code, out, err = run("run", "--gpus", cnn_config(tmp, "cnn-gpu"), "--output", gpu)
    if code != 0 and "without COHORT_TORCH_CUDA" in out + err:
        print(f"skipped: {plugin('torch_cnn')} was built without CUDA")
        sys.exit(77)
    check(code == 0, f"the GPU run failed:\n{out}\n{err}")
    cpu = os.path.join(tmp, "cpu")
    code, out, err = run("run", cnn_config(tmp, "cnn-cpu"), "--output", cpu, "--cpu-slots", "1")
    check(code == 0, f"the CPU run failed:\n{out}\n{err}")
    on_gpu, on_cpu = learned("torch_cnn, 1 GPU", gpu), learned("torch_cnn, 1 CPU slot", cpu)
    tracks("GPU against CPU", on_gpu, on_cpu)

    # Two slots over two agents, NCCL between them.
    os.environ.update(NCCL_SOCKET_IFNAME="lo", NCCL_IB_DISABLE="1")
    with two_agent_cluster(os.path.join(tmp, "cluster")) as cluster:
        experiment_id = cluster.submit(cnn_config(tmp, "cnn-gpu-2", slots=2))
        state = cluster.wait_ended(experiment_id, 300)
        check(state == "completed", f"the 2-slot trial ended {state}:\n{cluster.logs()[-6000:]}")
        two_dir = os.path.join(cluster.state, "experiments", str(experiment_id))
        trial = experiment(two_dir)["trials"][0]["id"]
        two = learned("torch_cnn, 2 GPU slots over two agents", two_dir, trial)
    tracks("2 slots against 1", two, on_gpu)
    check(all(r["exchanged_bytes"] > 0 for r in two[1]), f"no gradients exchanged: {two[1]}")

    # A killed worker restarts from its checkpoint and ends where an untouched run does.
    untouched = os.path.join(tmp, "untouched")
    code, out, err = run("run", "--gpus", cnn_config(tmp, "untouched", batches=KILL_BATCHES,
                                                     period=KILL_PERIOD,
                                                     checkpoint_period=KILL_PERIOD,
                                                     max_restarts=1), "--output", untouched)
    check(code == 0, f"the untouched run failed:\n{out}\n{err}")
    killed = os.path.join(tmp, "killed")
    process = start("run", "--gpus", cnn_config(tmp, "killed", batches=KILL_BATCHES,
                                                period=KILL_PERIOD,
                                                checkpoint_period=KILL_PERIOD, max_restarts=1),
                    "--output", killed)
    wait_for(lambda: experiment(killed)["trials"][0]["checkpoints"], what="the first checkpoint")
    kill_the_worker(killed)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"the restarted run exited {process.returncode}:\n{out}\n{err}")
    check("restart 1 of 1" in err, err)
    check(final_parameters(killed, KILL_BATCHES) == final_parameters(untouched, KILL_BATCHES),
          "the restarted GPU run's final parameters differ from the untouched run's")
    final = [reports(d, "validation")[-1] for d in (untouched, killed)]
    check(final[0]["metrics"] == final[1]["metrics"], f"final validations differ: {final}")
    print("torch_cnn on the GPU: a killed worker restarted and ended bitwise equal")

    # torch_gpt on the GPU.
    gpt = os.path.join(tmp, "gpt")
    code, out, err = run("run", "--gpus", write_config(
        tmp, GPT.format(entrypoint=plugin("torch_gpt"), batches=GPT_BATCHES),
        file_name="gpt.yaml"), "--output", gpt)
    check(code == 0, f"the GPT run failed:\n{out}\n{err}")
    losses = [r["metrics"]["loss"] for r in reports(gpt, "validation")]
    print(f"torch_gpt, 1 GPU: validation losses {[round(x, 3) for x in losses]}, "
          f"{records_per_second(gpt):.0f} records/s")
    check(abs(losses[0] - 4.03) < 0.1, f"the GPT did not start near ln 56: {losses}")
    check(losses[-1] < losses[0] - FALL, f"the GPT did not learn: {losses}")
print("ok")
