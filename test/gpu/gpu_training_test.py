"""The GPU path end to end, on a machine with an NVIDIA GPU; exits 77 (skipped) without one.

- mlp_cuda trains with `cohort run --gpus` (device arena, device optimizer, the plugin's stream)
  to within a small margin of what the CPU mlp reaches on the same data, seed and settings.
- A Ctrl-C and `--resume` on the GPU ends with bitwise the final parameters of an uninterrupted
  GPU run: device checkpoints and the device optimizer's state round-trip.
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


def records_per_second(run_dir):
    reports = [r for r in metrics(run_dir) if r["kind"] == "training"]
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
    on_gpu, on_cpu = final_validation(a), final_validation(cpu)
    check(abs(on_gpu["loss"] - on_cpu["loss"]) <= 0.05 * on_cpu["loss"] + 0.01,
          f"validation loss on the GPU {on_gpu}, on the CPU {on_cpu}")
    check(on_gpu["accuracy"] >= on_cpu["accuracy"] - 0.02,
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
print("ok")
