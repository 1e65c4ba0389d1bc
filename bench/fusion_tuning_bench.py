"""What optimizations.tensor_fusion_threshold: auto buys: the training rate of the mlp example at 2
CPU slots with the bucket size the exchange picks for itself, against the default threshold
(64 MB, whose buckets FitBucketLimits sizes to a quarter of the gradient), in one run, for a few
gradient sizes.

Each run is `cohort run` of the mlp plugin (two hidden layers of HIDDEN units over INPUTS inputs,
Adam, a global batch of BATCH) for BATCHES batches at 2 slots. The rate is records/s between the
first and the last training report (bench/ddp_common.py's training_rate), so the sizes tried by
`auto` in its first exchanged batches count against it from the first report on. Each pair of
runs is repeated REPEATS times, alternating, and the medians are compared.

Usage: fusion_tuning_bench.py COHORT_EXE PLUGIN_DIR [--repeats N] [--batches N]

Prints a table and JSON lines {"name": "fusion_auto_<inputs>x<hidden>_records_per_s", "value",
"unit": "records/s", "peer": "tensor_fusion_threshold 64", "peer_value", "ratio",
"kept": the size auto kept}. The target: a ratio of at least 1 (auto is never slower than the
default beyond noise).
"""
import argparse
import json
import os
import re
import statistics
import tempfile

import ddp_common  # beside this script: write_experiment, run_cohort, training_rate

NAME = "fusion_tuning_bench"
SHAPES = [(256, 384), (1024, 1024)]  # (inputs, hidden): gradients of about 1 and 9 MB
BATCH = 64
KEPT = re.compile(r"\[rank 0\] optimizations\.tensor_fusion_threshold auto: keeps (\S+ \S+) "
                  r"buckets; .*?: (.*)")


def one_run(args, folder, inputs, hidden, threshold, index):
    mlp = ddp_common.Mlp(inputs=inputs, hidden=hidden, classes=10, batch=BATCH,
                         learning_rate=0.001)
    name = f"fusion-{inputs}x{hidden}-{threshold}-{index}"
    config = ddp_common.write_experiment(
        os.path.join(folder, name + ".yaml"), name,
        os.path.join(args.plugin_dir, "mlp", "mlp.so"), mlp, 2, args.batches,
        sections=f"optimizations:\n  tensor_fusion_threshold: {threshold}\n")
    run_dir = os.path.join(folder, name)
    ddp_common.run_cohort(NAME, [args.cohort, "run", config, "--output", run_dir,
                                 "--cpu-slots", "2"])
    rate, _ = ddp_common.training_rate(run_dir, 1)
    with open(os.path.join(run_dir, "trials", "1", "log.txt")) as f:
        kept = KEPT.search(f.read())
    return rate, (kept.group(1), kept.group(2)) if kept else ("one size", "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batches", type=int, default=600)
    args = ddp_common.parse_arguments(parser, torch_rank=None)
    rows = []
    with tempfile.TemporaryDirectory(prefix="cohort-fusion-bench-") as folder:
        for inputs, hidden in SHAPES:
            fixed, tuned, kept = [], [], []
            for index in range(args.repeats):
                fixed.append(one_run(args, folder, inputs, hidden, 64, index)[0])
                rate, choice = one_run(args, folder, inputs, hidden, "auto", index)
                tuned.append(rate)
                kept.append(choice)
                ddp_common.log(NAME, f"{inputs}x{hidden} run {index + 1}: 64 MB {fixed[-1]:.0f}, "
                               f"auto {rate:.0f} records/s, kept {choice[0]} ({choice[1]})")
            rows.append((inputs, hidden, statistics.median(fixed), statistics.median(tuned),
                         kept))
    print(f"{'mlp (inputs x hidden)':>22} {'threshold 64':>14} {'auto':>10} {'ratio':>6}  kept")
    for inputs, hidden, fixed, tuned, kept in rows:
        sizes = ", ".join(choice[0] for choice in kept)
        print(f"{inputs:>12} x {hidden:<7} {fixed:>14.0f} {tuned:>10.0f} {tuned / fixed:>6.2f}  "
              f"{sizes}")
    for inputs, hidden, fixed, tuned, kept in rows:
        print(json.dumps({"name": f"fusion_auto_{inputs}x{hidden}_records_per_s",
                          "value": round(tuned, 1), "unit": "records/s",
                          "peer": "tensor_fusion_threshold 64", "peer_value": round(fixed, 1),
                          "ratio": round(tuned / fixed, 3),
                          "kept": [choice[0] for choice in kept]}))


if __name__ == "__main__":
    main()
