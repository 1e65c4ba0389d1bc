"""The GPU path end to end, on a machine with an NVIDIA GPU; exits 77 (skipped) without one.

- mlp_cuda trains with `cohort run --gpus` (device arena, device optimizer, the plugin's stream)
  along the CPU mlp's path on the same data, seed and settings: the training losses of the first
  200 batches agree to 1e-4 (relative). Later the two drift apart: cuBLAS sums in another order,
  and at this learning rate and momentum the last-bit differences grow until the runs follow
  different paths to the same end (both fit the training set), so the final validation is
  compared loosely.
- A Ctrl-C and `--resume` on the GPU ends with bitwise the final parameters of an uninterrupted
  GPU run: device checkpoints and the device optimizer's state round-trip.
- With COHORT_EXCHANGE_AT_ONE_SLOT=1 the gradients go through NCCL (a group of one rank) and the
  final parameters are still bitwise the uninterrupted run's.
- Each run's training throughput (records/s between its first and last training report) is
  printed, for docs/performance.md.
"""
import os
import signal
import sys

GPUS = "/proc/driver/nvidia/gpus"
if not (os.path.isdir(GPUS) and os.listdir(GPUS)):
    print("skipped: no NVIDIA GPU on this machine")
    sys.exit(77)

from cohort_cli import *  # noqa: E402 (after the skip: it reads the arguments)

BATCHES = 4000  # long enough on a GPU to be stopped after the first checkpoint
HIDDEN = 256


EARLY_BATCHES = 200  # training reports compared closely up to here


def training_reports(run_dir):
    return [r for r in metrics(run_dir) if r["kind"] == "training"]


def records_per_second(run_dir):
    reports = training_reports(run_dir)
    check(len(reports) >= 2, f"too few training reports in {run_dir}")
    return ((reports[-1]["records"] - reports[0]["records"]) /
            (reports[-1]["time"] - reports[0]["time"]))


def final_validation(run_dir):
    return [r for r in metrics(run_dir) if r["kind"] == "validation"][-1]["metrics"]


with temp_dir() as tmp:
    # mlp_config writes experiment.yaml: each config is copied out before the next is written.
    gpu_config = write_config(tmp, read_bytes(mlp_config(
        tmp, name="gpu", batches=BATCHES, period=250, hidden_size=HIDDEN,
        entrypoint=plugin("mlp_cuda"))).decode(), file_name="gpu.yaml")
    cpu_config = write_config(tmp, read_bytes(mlp_config(
        tmp, name="cpu", batches=BATCHES, period=250, hidden_size=HIDDEN)).decode(),
        file_name="cpu.yaml")

    # A: the GPU, uninterrupted; the CPU with the same settings.
    a = os.path.join(tmp, "a")
    code, out, err = run("run", "--gpus", gpu_config, "--output", a)
    check(code == 0, f"GPU run failed:\n{out}\n{err}")
    cpu = os.path.join(tmp, "cpu")
    code, out, err = run("run", cpu_config, "--output", cpu, "--cpu-slots", "1")
    check(code == 0, f"CPU run failed:\n{out}\n{err}")
    early = [(g, c) for g, c in zip(training_reports(a), training_reports(cpu))
             if g["batches"] <= EARLY_BATCHES]
    check(len(early) >= 5, f"only {len(early)} training reports in the first {EARLY_BATCHES} batches")
    for g, c in early:
        check(g["batches"] == c["batches"], f"reports at different batches: {g}, {c}")
        check(abs(g["metrics"]["loss"] - c["metrics"]["loss"]) <= 1e-4 * c["metrics"]["loss"],
              f"training loss after {g['batches']} batches: GPU {g['metrics']}, CPU {c['metrics']}")
    on_gpu, on_cpu = final_validation(a), final_validation(cpu)
    check(training_reports(a)[-1]["metrics"]["accuracy"] >= 0.99,
          f"the GPU run did not fit the training set: {training_reports(a)[-1]}")
    check(on_gpu["accuracy"] >= on_cpu["accuracy"] - 0.1,
          f"validation accuracy on the GPU {on_gpu}, on the CPU {on_cpu}")
    print(f"records/s: GPU {records_per_second(a):.0f}, CPU {records_per_second(cpu):.0f} "
          f"(mlp, hidden {HIDDEN} x 2, batch 16)")

    # B: Ctrl-C after the first checkpoint, then --resume, on the GPU.
    expected = final_parameters(a, BATCHES)
    b = os.path.join(tmp, "b")
    process = start("run", "--gpus", gpu_config, "--output", b)
    wait_for(lambda: experiment(b)["trials"][0]["checkpoints"], what="B's first checkpoint")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    check(process.returncode == 130, f"stopped run exited {process.returncode}:\n{out}\n{err}")
    code, out, err = run("run", "--resume", b, "--gpus")
    check(code == 0, f"resume failed:\n{out}\n{err}")
    check(final_parameters(b, BATCHES) == expected, "B's final parameters differ from A's")

    # C: A again with the exchange at one slot, so the gradients go through NCCL (a group of one
    # rank on the communication stream, ordered by events): the same bits, and its cost.
    c = os.path.join(tmp, "c")
    os.environ["COHORT_EXCHANGE_AT_ONE_SLOT"] = "1"
    code, out, err = run("run", "--gpus", gpu_config, "--output", c)
    del os.environ["COHORT_EXCHANGE_AT_ONE_SLOT"]
    check(code == 0, f"GPU run with the one-slot exchange failed:\n{out}\n{err}")
    check(all("exchange" in r["timings"] for r in training_reports(c)),
          "the one-slot exchange left no exchange timings")
    check(final_parameters(c, BATCHES) == expected, "C's final parameters differ from A's")
    print(f"records/s with the gradients through NCCL at one slot: {records_per_second(c):.0f}")
print("ok")
