"""GPU step time: mlp_cuda under `cohort run --gpus` (one slot) against the same model's plain CUDA
loop (bench/mlp_cuda_loop.cc: the plugin's kernels and cuBLAS calls, no runtime), at batch 16
(where a per-batch host round trip would dominate) and batch 1024, in the same run, taking turns.

    mlp_cuda_step.py COHORT PLUGIN_DIR LOOP_BINARY [--repeats N] [--timelines DIR]

Both train the mlp plugin's synthetic set (2048 records of 32 features, 10 classes) with two
hidden layers of 256, plain SGD at 0.05, and read the loss every 20 batches (Cohort's
scheduling_unit, the loop's REPORT_EVERY). Cohort's records/s is taken between its first and last
training report (start-up, the final validation and checkpoint left out); the loop's after its
first 20 batches. Prints one JSON line per batch size, {"name": "mlp_cuda_step_batch<B>",
"value": Cohort records/s, "unit": "records/s", "peer": "plain_cuda_loop", "peer_value", "ratio"},
each the median of the repeats, and on stderr every run's figure and Cohort's phase timings.
With --timelines, Cohort also runs once more per batch size with profiling on, and its timeline
goes to DIR/cohort-batch<B>.json. Exits 77 where there is no NVIDIA GPU.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

GPUS = "/proc/driver/nvidia/gpus"
HIDDEN = 256
RECORDS = 2048
REPORT_EVERY = 20
BATCHES = {16: 10000, 1024: 8000}

CONFIG = """\
name: step-{batch}
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: {batch}
  optimizer: sgd
  learning_rate: 0.05
  hidden_size: {hidden}
  hidden_layers: 2
  synthetic_train_records: {records}
  synthetic_validation_records: 256
searcher:
  name: single
  metric: loss
  max_length:
    batches: {batches}
scheduling_unit: {report_every}
checkpoint_policy: none
reproducibility:
  experiment_seed: 11
profiling:
  enabled: {profiling}
"""


def cohort_records_per_second(cohort, plugins, batch, work, timeline=None):
    os.makedirs(work, exist_ok=True)
    run_dir = os.path.join(work, f"cohort-{batch}")
    config = os.path.join(work, f"step-{batch}.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(batch=batch, entrypoint=os.path.join(plugins, "mlp_cuda",
                                                                   "mlp_cuda.so"),
                              hidden=HIDDEN, records=RECORDS, batches=BATCHES[batch],
                              report_every=REPORT_EVERY,
                              profiling="true" if timeline else "false"))
    subprocess.run([cohort, "run", "--gpus", config, "--output", run_dir], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    with open(os.path.join(run_dir, "trials", "1", "metrics.jsonl")) as f:
        reports = [r for r in map(json.loads, filter(str.strip, f)) if r["kind"] == "training"]
    if timeline:
        shutil.copyfile(os.path.join(run_dir, "trials", "1", "timeline.json"), timeline)
    first, last = reports[0], reports[-1]
    rate = (last["records"] - first["records"]) / (last["time"] - first["time"])
    timings = {}
    for report in reports[1:]:
        for name, seconds in report.get("timings", {}).items():
            timings[name] = timings.get(name, 0.0) + seconds
    return rate, timings


def loop_records_per_second(loop, batch):
    out = subprocess.run([loop, str(batch), str(BATCHES[batch]), str(HIDDEN), "2", str(RECORDS),
                          str(REPORT_EVERY)], check=True, capture_output=True, text=True,
                         timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])["records_per_second"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cohort")
    parser.add_argument("plugins")
    parser.add_argument("loop")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timelines", help="a folder for one profiled Cohort run per batch size")
    args = parser.parse_args()
    if not (os.path.isdir(GPUS) and os.listdir(GPUS)):
        print("skipped: no NVIDIA GPU on this machine", file=sys.stderr)
        return 77
    with tempfile.TemporaryDirectory() as work:
        for batch in sorted(BATCHES):
            ours, theirs = [], []
            for repeat in range(args.repeats):
                loop_rate = loop_records_per_second(args.loop, batch)
                rate, timings = cohort_records_per_second(args.cohort, args.plugins, batch,
                                                          os.path.join(work, str(repeat)))
                theirs.append(loop_rate)
                ours.append(rate)
                phases = ", ".join(f"{k} {v:.3f} s" for k, v in sorted(timings.items()))
                print(f"batch {batch} run {repeat + 1}: plain loop {loop_rate:.0f} records/s, "
                      f"Cohort {rate:.0f} records/s ({phases})", file=sys.stderr, flush=True)
            if args.timelines:
                os.makedirs(args.timelines, exist_ok=True)
                path = os.path.join(args.timelines, f"cohort-batch{batch}.json")
                rate, _ = cohort_records_per_second(args.cohort, args.plugins, batch,
                                                    os.path.join(work, "profiled"), timeline=path)
                print(f"batch {batch} profiled: Cohort {rate:.0f} records/s, timeline {path}",
                      file=sys.stderr, flush=True)
            value, peer = statistics.median(ours), statistics.median(theirs)
            print(json.dumps({"name": f"mlp_cuda_step_batch{batch}", "value": round(value),
                              "unit": "records/s", "peer": "plain_cuda_loop",
                              "peer_value": round(peer), "ratio": round(value / peer, 3)}),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
