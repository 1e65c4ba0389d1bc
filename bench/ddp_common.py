"""What bench/ddp_comparison.py (CPUs, Gloo) and bench/ddp_gpu_comparison.py (one GPU, NCCL) share:
both time the same MLP under PyTorch DDP, each rank a process of the script itself, and under
Cohort's mlp plugins, and compare records/s.

- The command line: parse_arguments, which also turns a process started as a rank into that
  rank.
- The PyTorch side: the script starts its ranks with run_ranks; each rank joins the group
  (join_group), builds the model (mlp_model), draws one batch (synthetic_batch), and times its
  steps (adam_step, time_training), rank 0 printing the records/s that run_ranks returns.
- The Cohort side: write_experiment writes the experiment, run_cohort runs a `cohort` command, and
  training_rate reads the figure from the trial's training reports.

Imported from the scripts' own folder (Python puts a script's folder first on sys.path), so it
must sit beside them, in the repository and in the GPU check kit alike. torch is imported only
inside the functions that need it.
"""
import argparse
import collections
import json
import os
import socket
import subprocess
import sys
import time

# Untimed steps of each rank before its timing starts.
WARMUP = 20

# The model and batch both sides train: INPUTS -> HIDDEN -> HIDDEN -> CLASSES with ReLU between,
# Adam at LEARNING_RATE, BATCH records per global batch (split evenly over the ranks).
Mlp = collections.namedtuple("Mlp", "inputs hidden classes batch learning_rate")


def log(name, message):
    """One progress line on stderr, prefixed with the script's NAME."""
    print(f"{name}: {message}", file=sys.stderr, flush=True)


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_arguments(parser, torch_rank):
    """The command line of a comparison script: PARSER (with the script's own options) gets the
    positional COHORT_EXE and PLUGIN_DIR and the hidden arguments that run_ranks passes to a rank
    (--torch-rank, set only there, --world and --port). In a rank process, runs torch_rank(args)
    and exits 0; otherwise returns the arguments, COHORT_EXE and PLUGIN_DIR required."""
    parser.add_argument("cohort", nargs="?")
    parser.add_argument("plugin_dir", nargs="?")
    parser.add_argument("--torch-rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--world", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_rank is not None:
        torch_rank(args)
        sys.exit(0)
    if not args.cohort or not args.plugin_dir:
        parser.error("COHORT_EXE and PLUGIN_DIR are required")
    return args


def skip(name, reason):
    """Ends this benchmark as skipped (exit status 77), saying why."""
    print(f"{name}: skipped: {reason}", flush=True)
    sys.exit(77)


def require_gpu_torch(name):
    """Skips (skip) unless this machine has an NVIDIA GPU that this Python's PyTorch sees."""
    gpus = "/proc/driver/nvidia/gpus"
    if not (os.path.isdir(gpus) and os.listdir(gpus)):
        skip(name, "no NVIDIA GPU on this machine")
    try:
        import torch
    except ImportError as error:
        skip(name, f"needs PyTorch with CUDA ({error})")
    if not torch.cuda.is_available():
        skip(name, f"PyTorch {torch.__version__} sees no CUDA device")


def use_cli_helpers(cohort, plugin_dir):
    """Makes the integration tests' helpers (test/integration: cohort_cli, cluster) importable,
    for the `cohort` executable and plugin folder given: they read both from the command line."""
    sys.argv[1:] = [cohort, plugin_dir]
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "test", "integration"))


# --- the PyTorch side ---------------------------------------------------------------------------

def run_ranks(name, script, world, arguments, env_of, timeout):
    """Runs `python SCRIPT --torch-rank R --world WORLD --port P ARGUMENTS...` for each rank R
    at once, with env_of(R) as its whole environment, all meeting on one free loopback port P.
    Waits up to `timeout` seconds and kills the ranks still running then. Returns the
    records_per_second of the JSON line that rank 0 printed last (time_training); a rank that
    exits non-zero ends this process with its stderr, prefixed with NAME."""
    port = free_port()
    ranks = [subprocess.Popen(
        [sys.executable, os.path.abspath(script), "--torch-rank", str(rank),
         "--world", str(world), "--port", str(port), *arguments],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_of(rank))
        for rank in range(world)]
    try:
        outputs = [rank.communicate(timeout=timeout) for rank in ranks]
    finally:
        for rank in ranks:
            if rank.poll() is None:
                rank.kill()
    for rank, (out, err) in zip(ranks, outputs):
        if rank.returncode != 0:
            raise SystemExit(f"{name}: a PyTorch rank exited {rank.returncode}:\n{err}")
    return json.loads(outputs[0][0].strip().splitlines()[-1])["records_per_second"]


def join_group(backend, rank, world, port):
    """Seeds torch with the rank (so each rank draws its own batch) and joins the process group
    of `world` ranks that meets at 127.0.0.1:PORT over `backend`."""
    import torch
    import torch.distributed as dist
    torch.manual_seed(rank)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)


def mlp_model(mlp):
    """The Mlp's network, on the CPU, initialised from torch's random generator."""
    import torch
    return torch.nn.Sequential(
        torch.nn.Linear(mlp.inputs, mlp.hidden), torch.nn.ReLU(),
        torch.nn.Linear(mlp.hidden, mlp.hidden), torch.nn.ReLU(),
        torch.nn.Linear(mlp.hidden, mlp.classes))


def synthetic_batch(mlp, world, device=None):
    """One rank's share of a global batch (BATCH // WORLD records) on `device`: random inputs
    and labels, drawn once, so that loading data costs nothing."""
    import torch
    per_rank = mlp.batch // world
    inputs = torch.randn(per_rank, mlp.inputs, device=device)
    labels = torch.randint(0, mlp.classes, (per_rank,), device=device)
    return inputs, labels


def adam_step(model, learning_rate, inputs, labels):
    """A function that trains `model` on the batch once: cross-entropy loss, backward (where DDP
    exchanges the gradients), an Adam step."""
    import torch
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(inputs), labels).backward()
        optimizer.step()

    return step


def time_training(rank, records_per_step, batches, step, settle):
    """Runs WARMUP steps, then times BATCHES steps from one settle() to the next (settle: the
    ranks' barrier, after the device has finished its work). Rank 0 prints
    {"records_per_second": RECORDS_PER_STEP * BATCHES / seconds} on stdout, for run_ranks."""
    for _ in range(WARMUP):
        step()
    settle()
    start = time.perf_counter()
    for _ in range(batches):
        step()
    settle()
    seconds = time.perf_counter() - start
    if rank == 0:
        print(json.dumps({"records_per_second": records_per_step * batches / seconds}))


def time_worlds(name, script, passed, shape):
    """Times the DDP ranks of SCRIPT (started with the arguments PASSED, one compute thread each)
    at 1 and 2 processes and prints one JSON result line: records/s at 2 against 1, named after
    SHAPE, with the scaling efficiency as its ratio."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    rates = {}
    for world in (1, 2):
        rates[world] = run_ranks(name, script, world, passed, lambda rank: env, timeout=1800)
        log(name, f"PyTorch DDP, {world} process(es): {rates[world]:.0f} records/s")
    print(json.dumps({"name": f"pytorch_{shape}_records_per_s_2", "value": round(rates[2], 1),
                      "unit": "records/s", "peer": f"pytorch_{shape}_records_per_s_1",
                      "peer_value": round(rates[1], 1),
                      "ratio": round(rates[2] / (2 * rates[1]), 4)}), flush=True)


# --- the Cohort side ----------------------------------------------------------------------------

def write_experiment(path, name, entrypoint, mlp, slots, batches, hyperparameters="",
                     sections=""):
    """Writes at PATH (returned) the experiment NAME of the plugin ENTRYPOINT training the Mlp
    on synthetic data at SLOTS slots per trial for BATCHES batches and one scheduling unit more
    (the unit: a twentieth of BATCHES, at least 10), validating and checkpointing only at the
    end. HYPERPARAMETERS (YAML lines indented by two) add to the hyperparameters; SECTIONS
    (top-level YAML) go at the end."""
    unit = max(10, batches // 20)
    with open(path, "w") as f:
        f.write(f"""\
name: {name}
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: {mlp.batch}
  optimizer: adam
  learning_rate: {mlp.learning_rate}
  hidden_size: {mlp.hidden}
  hidden_layers: 2
  synthetic_input_dim: {mlp.inputs}
  synthetic_classes: {mlp.classes}
{hyperparameters}resources:
  slots_per_trial: {slots}
searcher:
  name: single
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: {batches + unit}
min_validation_period:
  batches: {batches + unit}
min_checkpoint_period:
  batches: {batches + unit}
scheduling_unit: {unit}
reproducibility:
  experiment_seed: 1
{sections}""")
    return path


def run_cohort(name, command, env=None, timeout=None):
    """Runs the `cohort` COMMAND (a list) with no input, in ENV (None: this process's), for up to
    TIMEOUT seconds; if it exits non-zero, ends this process with its output, prefixed with
    NAME."""
    result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            env=env, timeout=timeout)
    if result.returncode != 0:
        raise SystemExit(f"{name}: {' '.join(command)} exited {result.returncode}:\n"
                         f"{result.stdout}\n{result.stderr}")


def training_rate(run_dir, trial_id):
    """(records/s, timings) of a trial of the run or experiment folder RUN_DIR, from its
    metrics.jsonl: the records between the first and the last training report over the seconds
    between them (start-up, the final validation and the checkpoint fall outside), and the last
    report's seconds per phase, rounded to 0.1 ms."""
    with open(os.path.join(run_dir, "trials", str(trial_id), "metrics.jsonl")) as f:
        reports = [json.loads(line) for line in f if line.strip()]
    training = [r for r in reports if r["kind"] == "training"]
    first, last = training[0], training[-1]
    rate = (last["records"] - first["records"]) / (last["time"] - first["time"])
    timings = {phase: round(seconds, 4) for phase, seconds in last.get("timings", {}).items()}
    return rate, timings
