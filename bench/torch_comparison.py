"""Cohort's LibTorch examples beside a plain LibTorch loop and PyTorch DDP, on CPUs: torch_cnn
and torch_gpt, each at 1 and 2 processes, in one run, the sides taking turns.

The same kernels run on every side: the plugins, the plain loops and Debian's python3-torch all
call the same LibTorch (1.13), one compute thread per process.

- plain: bench/torch_<model>_loop, the plugin's model, data and optimizer in a hand-written
  LibTorch loop with no runtime (1 process);
- pytorch: bench/torch_<model>_ddp.py under /usr/bin/python3, DistributedDataParallel over Gloo at
  1 and 2 processes (one batch drawn once per rank, so data costs nothing there);
- cohort: `cohort run` of the plugin with examples/torch_<model>.yaml's hyperparameters, at 1 and
  2 slots (`--cpu-slots 2`), for --batches batches; records/s between the first and the last
  training report (start-up, validation and checkpoint fall outside). At 2 slots the last report's
  `exchange_wait` over its batches is the exchange left exposed per step.

The global batch is the same at 1 and 2 processes (strong scaling), so the scaling efficiency is
records/s at 2 over twice records/s at 1.

With --zero-stage S (1 or 2; torch_gpt only, whose Adam is Cohort's built-in one), Cohort's side
runs optimizations.zero_stage S and PyTorch's wraps its Adam in ZeroRedundancyOptimizer, and the
names below end in _zero<S>.

Usage: torch_comparison.py COHORT_EXE PLUGIN_DIR CNN_LOOP GPT_LOOP [--models cnn,gpt]
                           [--batches N] [--repeats R] [--zero-stage S]

Prints a table per model, then JSON lines, each a median over R repeats:
  cohort_<model>_records_per_s_1 against plain_<model>_records_per_s (target >= 0.98), and
  cohort_<model>_records_per_s_2 against pytorch_ddp_<model>_records_per_s_2 (target >= 1.0).
Exits 77 (skipped) when /usr/bin/python3 has no torch.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import ddp_common  # beside this script

NAME = "torch_comparison"
HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM_PYTHON = "/usr/bin/python3"

# Each model: the example's hyperparameters (examples/torch_<model>.yaml), the twin's flags for
# the same model and training, and the plain loop's arguments after BATCH BATCHES.
MODELS = {
    "cnn": {
        "batch": 32,
        "hyperparameters": {"optimizer": "sgd", "learning_rate": 0.05, "momentum": 0.9,
                            "width": 8},
        "twin": ["--width", "8", "--learning-rate", "0.05", "--momentum", "0.9"],
        "loop": ["8"],
        "batches": 400,
    },
    "gpt": {
        "batch": 32,
        "hyperparameters": {"optimizer": "adam", "learning_rate": 0.003, "context": 32,
                            "embedding": 64, "heads": 4, "layers": 2},
        "twin": ["--context", "32", "--embedding", "64", "--heads", "4", "--layers", "2",
                 "--learning-rate", "0.003"],
        "loop": ["32", "64", "4", "2", "0.003"],
        "batches": 100,
    },
}


def last_json(name, output):
    for line in reversed(output.splitlines()):
        if line.lstrip().startswith("{"):
            return json.loads(line)
    raise SystemExit(f"{NAME}: {name} printed no JSON line:\n{output}")


def run(name, command, env=None):
    result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            env=env, timeout=3600)
    if result.returncode != 0:
        raise SystemExit(f"{NAME}: {name} exited {result.returncode}:\n{result.stdout}\n"
                         f"{result.stderr}")
    return result.stdout


def run_plain(args, model, loop, batches):
    spec = MODELS[model]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = run(f"{model} loop", [loop, str(spec["batch"]), str(batches)] + spec["loop"], env)
    rate = last_json(f"{model} loop", out)["records_per_second"]
    ddp_common.log(NAME, f"{model}: plain LibTorch loop, 1 process: {rate:.0f} records/s")
    return rate


def run_pytorch(args, model, batches):
    spec = MODELS[model]
    out = run(f"{model} DDP", [SYSTEM_PYTHON, os.path.join(HERE, f"torch_{model}_ddp.py"),
                               "--batch", str(spec["batch"]), "--batches", str(batches)]
              + spec["twin"] + (["--zero"] if args.zero_stage else []))
    entry = last_json(f"{model} DDP", out)
    one, two = entry["peer_value"], entry["value"]
    ddp_common.log(NAME, f"{model}: PyTorch DDP: {one:.0f} records/s at 1 process, {two:.0f} at 2")
    return one, two


def write_config(path, entrypoint, model, slots, batches, batch=None, zero_stage=0):
    """Writes at PATH the experiment of MODEL's plugin ENTRYPOINT at SLOTS slots for BATCHES
    batches of global batch BATCH (default: the model's), at ZERO_STAGE; returns (PATH, its
    scheduling unit)."""
    spec = MODELS[model]
    unit = max(10, batches // 10)
    hyperparameters = "".join(f"  {key}: {value}\n" for key, value in spec["hyperparameters"].items())
    with open(path, "w") as f:
        f.write(f"""\
name: torch-comparison-{model}
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: {batch or spec["batch"]}
{hyperparameters}resources:
  slots_per_trial: {slots}
optimizations:
  zero_stage: {zero_stage}
searcher:
  name: single
  metric: loss
  max_length:
    batches: {batches + unit}
min_validation_period:
  batches: {batches + unit}
min_checkpoint_period:
  batches: {batches + unit}
scheduling_unit: {unit}
reproducibility:
  experiment_seed: 7
""")
    return path, unit


def run_cohort(args, model, slots, batches, directory):
    plugin = os.path.join(args.plugin_dir, f"torch_{model}", f"torch_{model}.so")
    config, unit = write_config(os.path.join(directory, f"{model}-{slots}.yaml"), plugin, model,
                                slots, batches, zero_stage=args.zero_stage)
    run_dir = os.path.join(directory, f"run-{model}-{slots}-{time.monotonic_ns()}")
    ddp_common.run_cohort(NAME, [args.cohort, "run", config, "--output", run_dir,
                                 "--cpu-slots", "2"], timeout=3600)
    rate, timings = ddp_common.training_rate(run_dir, 1)
    exposed_ms = 1000 * timings.get("exchange_wait", 0.0) / unit
    ddp_common.log(NAME, f"{model}: Cohort, {slots} slot(s): {rate:.0f} records/s; the last "
                         f"report's seconds: {timings}")
    return rate, exposed_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cohort")
    parser.add_argument("plugin_dir")
    parser.add_argument("cnn_loop")
    parser.add_argument("gpt_loop")
    parser.add_argument("--models", default="cnn,gpt")
    parser.add_argument("--batches", type=int, default=0,
                        help="batches per run (default: 400 for the CNN, 100 for the GPT)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--zero-stage", type=int, default=0, choices=(0, 1, 2))
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    if any(m not in MODELS for m in models) or args.repeats < 1:
        parser.error(f"--models takes a list of {', '.join(MODELS)}; --repeats >= 1")
    if args.zero_stage and models != ["gpt"]:
        parser.error("--zero-stage needs --models gpt (only torch_gpt_ddp.py takes --zero)")
    if subprocess.run([SYSTEM_PYTHON, "-c", "import torch"], capture_output=True).returncode != 0:
        print(f"{NAME}: skipped, {SYSTEM_PYTHON} has no torch (Debian: apt install python3-torch)",
              file=sys.stderr)
        sys.exit(77)
    loops = {"cnn": args.cnn_loop, "gpt": args.gpt_loop}

    results = []
    with tempfile.TemporaryDirectory(prefix="cohort-torch-comparison-") as tmp:
        for model in models:
            batches = args.batches or MODELS[model]["batches"]
            rates = {key: [] for key in ("plain", "pytorch1", "pytorch2", "cohort1", "cohort2",
                                          "exposed")}
            for _ in range(args.repeats):
                rates["plain"].append(run_plain(args, model, loops[model], batches))
                one, two = run_pytorch(args, model, batches)
                rates["pytorch1"].append(one)
                rates["pytorch2"].append(two)
                for slots in (1, 2):
                    rate, exposed_ms = run_cohort(args, model, slots, batches, tmp)
                    rates[f"cohort{slots}"].append(rate)
                    if slots == 2:
                        rates["exposed"].append(exposed_ms)
            median = {key: statistics.median(values) for key, values in rates.items()}
            batch = MODELS[model]["batch"]
            print(f"torch_{model}, global batch {batch}, {batches} batches; records/s, median of "
                  f"{args.repeats}")
            print(f"{'':14} {'1 process':>10} {'2 processes':>12} {'efficiency':>11}")
            print(f"{'plain LibTorch':14} {median['plain']:10.0f}")
            for side, label in (("pytorch", "PyTorch DDP"), ("cohort", "Cohort")):
                one, two = median[f"{side}1"], median[f"{side}2"]
                print(f"{label:14} {one:10.0f} {two:12.0f} {two / (2 * one):11.2f}")
            print(f"Cohort at 1 slot / plain loop: {median['cohort1'] / median['plain']:.3f}; "
                  f"Cohort / DDP at 2: {median['cohort2'] / median['pytorch2']:.3f}; exchange "
                  f"left exposed at 2 slots: {median['exposed']:.2f} ms per batch")
            results.append({"name": f"cohort_{model}_records_per_s_1",
                            "value": round(median["cohort1"], 1), "unit": "records/s",
                            "peer": f"plain_{model}_records_per_s",
                            "peer_value": round(median["plain"], 1),
                            "ratio": round(median["cohort1"] / median["plain"], 4)})
            results.append({"name": f"cohort_{model}_records_per_s_2",
                            "value": round(median["cohort2"], 1), "unit": "records/s",
                            "peer": f"pytorch_ddp_{model}_records_per_s_2",
                            "peer_value": round(median["pytorch2"], 1),
                            "ratio": round(median["cohort2"] / median["pytorch2"], 4)})
    for entry in results:
        if args.zero_stage:
            entry["name"] += f"_zero{args.zero_stage}"
            if entry["peer"].startswith("pytorch"):  # ZeroRedundancyOptimizer
                entry["peer"] += "_zero"
        print(json.dumps(entry), flush=True)


if __name__ == "__main__":
    main()
