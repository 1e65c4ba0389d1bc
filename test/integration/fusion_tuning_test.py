"""optimizations.tensor_fusion_threshold: auto on `cohort run` of the mlp example at 2 slots. Rank 0
says which bucket sizes it compares; after each has been measured, every rank says the same size
kept and the figures compared. At 2 slots a sum is the same whatever the bucket cut, so the run
ends bitwise where a fixed threshold's does. A run stopped (SIGINT) after the choice and resumed
keeps the checkpoint's size without comparing again, and ends bitwise as the uninterrupted run. A
small model has one size only and says so (left out under the sanitizers, as is the
fixed-threshold run); a trial too short to measure every size says so, as does one of 1 slot, which has nothing to
tune; `auto` beside auto_tune_tensor_fusion: false is refused naming both keys."""
import os
import re

from cohort_cli import *

BATCHES = 200  # candidates are settled in the first 20 or so exchanged batches; stopped at 100
CHOICE = re.compile(r"\[rank (\d)\] optimizations\.tensor_fusion_threshold auto: keeps (.*)")


def config(tmp, name, hidden_size, threshold, batches=BATCHES):
    text = read_bytes(mlp_config(tmp, name=name, batches=batches, period=100,
                                 hidden_size=hidden_size)).decode()
    text = text.replace("hyperparameters:\n", "hyperparameters:\n  synthetic_input_dim: 256\n")
    text += ("resources:\n  slots_per_trial: 2\n"
             f"optimizations:\n  tensor_fusion_threshold: {threshold}\n")
    return write_config(tmp, text, file_name=name + ".yaml")


def log_of(folder):
    with open(os.path.join(folder, "trials", "1", "log.txt")) as f:
        return f.read()


def trained(tmp, name, hidden_size, threshold):
    folder = os.path.join(tmp, name)
    code, out, err = run("run", config(tmp, name, hidden_size, threshold), "--output", folder,
                         "--cpu-slots", "2")
    check(code == 0, f"{name} failed:\n{out}\n{err}")
    return folder


def choices(log):
    """Each rank's line of the size it kept, rank by rank (without the rank)."""
    found = {}
    for match in CHOICE.finditer(log):
        found[int(match.group(1))] = match.group(2)
    return [found[rank] for rank in sorted(found)]


with temp_dir() as tmp:
    # hidden_size 384 over 256 inputs: a 1 MB gradient, in tensors of 0.4 and 0.6 MB and small ones.
    tuned = trained(tmp, "auto", 384, "auto")
    log = log_of(tuned)
    compared = re.search(r"auto: comparing (\d+) bucket sizes \(([^)]*)\) over 6 exchanged "
                         r"batches each", log)
    check(compared and int(compared.group(1)) >= 2, log)
    kept = choices(log)
    check(len(kept) == 2 and kept[0] == kept[1], f"the ranks' choices differ or are missing:\n{log}")
    sizes = re.findall(r"(\d+(?:\.\d)? [KM]iB) [\d.]+ ms", kept[0])
    check(len(sizes) == int(compared.group(1)) and kept[0].count("(kept)") == 1, kept[0])
    # The sizes named at the start are the ones compared.
    check(compared.group(2).split(", ") == sizes, (compared.group(0), kept[0]))
    print("kept", kept[0])

    # Under the sanitizers the runs whose C++ the others take too are left out.
    if not SANITIZED:
        fixed = trained(tmp, "fixed", 384, 64)
        check("tensor_fusion_threshold auto" not in log_of(fixed), log_of(fixed))
        check(final_parameters(tuned, BATCHES) == final_parameters(fixed, BATCHES),
              "tuning the bucket size changed the 2-slot run's parameters")

    resumed = os.path.join(tmp, "resumed")
    stopped_at = run_stopped_at_checkpoint(config(tmp, "resumed", 384, "auto"), resumed,
                                           "--cpu-slots", "2")
    first = choices(log_of(resumed))
    check(len(first) == 2, f"the choice was not made before the first checkpoint:\n"
                           f"{log_of(resumed)}")
    code, out, err = run("run", "--resume", resumed, "--cpu-slots", "2")
    check(code == 0, f"the resume failed:\n{out}\n{err}")
    log = log_of(resumed)
    size = first[0].split(" buckets")[0]
    check(f"auto: {size} buckets, as the checkpoint kept" in log, log)
    check(len(CHOICE.findall(log)) == 2, f"the resumed run compared sizes again:\n{log}")
    check(final_parameters(resumed, BATCHES) == final_parameters(tuned, BATCHES),
          f"the run stopped at batch {stopped_at} and resumed ended elsewhere")

    if not SANITIZED:
        small = trained(tmp, "small", 32, "auto")
        check("auto: one bucket size (256 KiB) cuts this model's gradient; nothing to compare"
              in log_of(small), log_of(small))

    # Too short a trial to measure every size is told so.
    short = os.path.join(tmp, "short")
    code, out, err = run("run", config(tmp, "short", 384, "auto", batches=8), "--output", short,
                         "--cpu-slots", "2")
    check(code == 0, f"the short run failed:\n{out}\n{err}")
    told = re.search(r"exchanged batches each; this trial has 8 exchanged batches left, fewer than "
                     r"the (\d+) that takes: it trains with the sizes in turn and keeps none",
                     log_of(short))
    check(told and int(told.group(1)) == 6 * int(compared.group(1)), log_of(short))
    check(not choices(log_of(short)), log_of(short))

    # At 1 slot no gradient is exchanged, so nothing is tuned, and the log says so.
    one = os.path.join(tmp, "one")
    text = read_bytes(config(tmp, "one", 32, "auto", batches=8)).decode()
    path = write_config(tmp, text.replace("slots_per_trial: 2", "slots_per_trial: 1"), "one.yaml")
    code, out, err = run("run", path, "--output", one)
    check(code == 0, f"the 1-slot run failed:\n{out}\n{err}")
    check("auto: nothing to tune at 1 slot, where no gradient is exchanged" in log_of(one),
          log_of(one))

    refused = os.path.join(tmp, "refused")
    text = read_bytes(config(tmp, "refused", 32, "auto")).decode()
    path = write_config(tmp, text + "  auto_tune_tensor_fusion: false\n", "refused.yaml")
    code, out, err = run("run", path, "--output", refused, "--cpu-slots", "2")
    check(code != 0 and "optimizations.tensor_fusion_threshold: auto, but "
          "optimizations.auto_tune_tensor_fusion is false" in err, f"{code}\n{out}\n{err}")
    check(not os.path.exists(refused), "a refused run left a folder")
print("ok")
