"""Two slots train like one: the same records by construction, gradients averaged through Gloo.

- 2 slots x per-slot batch b against 1 slot x 2b: parameters agree to 1e-6 relative;
- aggregation_frequency 2 at global batch B against 1 at 2B: the same agreement;
- a global batch the slots cannot split trains an epoch of every record, in batches of what the
  slots train;
- two identical 2-slot runs are bitwise identical;
- stop-and-resume of a 2-slot run (stopped by SIGTERM, as a preempted machine is) is bitwise
  identical to an uninterrupted one.
"""
import array
import os
import signal

from cohort_cli import *

STEPS = 50


def parameters(run_dir, batches):
    values = array.array("f")
    values.frombytes(final_parameters(run_dir, batches))
    return values


def assert_close(a, b, what, tolerance=1e-6):
    check(len(a) == len(b), f"{what}: {len(a)} against {len(b)} parameters")
    scale = max(max(abs(x) for x in a), 1e-12)
    worst = max(abs(x - y) for x, y in zip(a, b)) / scale
    check(worst <= tolerance, f"{what}: largest difference {worst:.3g} of the largest parameter")


def train(tmp, name, *sets, batches=STEPS, slots=1):
    config = mlp_config(tmp, name=name, batches=batches, period=batches)
    run_dir = os.path.join(tmp, name)
    args = ["run", config, "--output", run_dir, "--cpu-slots", "2",
            "--set", f"resources.slots_per_trial={slots}",
            "--set", "hyperparameters.momentum=0"]
    for s in sets:
        args += ["--set", s]
    code, out, err = run(*args)
    check(code == 0, f"{name} failed ({code}):\n{out}\n{err}")
    return run_dir


with temp_dir() as tmp:
    one = train(tmp, "one-slot", "hyperparameters.global_batch_size=16")
    two = train(tmp, "two-slots", "hyperparameters.global_batch_size=16", slots=2)
    assert_close(parameters(two, STEPS), parameters(one, STEPS), "2 slots x 8 vs 1 slot x 16")
    with open(os.path.join(two, "trials", "1", "log.txt")) as f:
        log = f.read()
    check("[rank 0] trial 1 rank 0 of 2" in log and "[rank 1] trial 1 rank 1 of 2" in log, log)
    check("no heartbeat" not in log, log)
    # At 2 slots a training report also says how long the exchange's own thread spent in the
    # collectives and in the rest of the buckets' work.
    training = [r for r in metrics(two) if r["kind"] == "training"]
    check(training and all({"exchange", "codec", "compute"} <= set(r["timings"])
                           for r in training), training)
    check(all(r["timings"]["exchange"] > 0 for r in training), training)
    # And the bytes rank 0 handed to the collectives then: at least the float32 gradient of every
    # batch since the previous report.
    check(all(r["exchanged_bytes"] > 0 for r in training), training)

    again = train(tmp, "two-slots-again", "hyperparameters.global_batch_size=16", slots=2)
    check(final_parameters(again, STEPS) == final_parameters(two, STEPS),
          "two identical 2-slot runs differ")

    aggregated = train(tmp, "aggregated", "hyperparameters.global_batch_size=8",
                       "optimizations.aggregation_frequency=2", batches=2 * STEPS, slots=2)
    assert_close(parameters(aggregated, 2 * STEPS), parameters(one, STEPS),
                 "aggregation 2 at batch 8 vs 1 at batch 16")

    # A global batch the slots cannot split drops its remainder (33 at 2 slots trains 32 records a
    # batch), and an epoch counts batches of what they train: every one of the 2048 records once.
    # Its 3 validation records are all rank 0's: rank 1 validates an empty share, and the trial
    # still validates them.
    config = mlp_config(tmp, name="uneven", batches=STEPS, period=STEPS, file_name="uneven.yaml")
    with open(config) as f:
        text = f.read().replace(f"max_length:\n    batches: {STEPS}", "max_length:\n    epochs: 1")
    text += "records_per_epoch: 2048\n"
    write_config(tmp, text, file_name="uneven.yaml")
    uneven = os.path.join(tmp, "uneven")
    code, out, err = run("run", config, "--output", uneven, "--cpu-slots", "2",
                         "--set", "resources.slots_per_trial=2",
                         "--set", "hyperparameters.global_batch_size=33",
                         "--set", "hyperparameters.synthetic_validation_records=3")
    check(code == 0, f"uneven failed ({code}):\n{out}\n{err}")
    check("so a global batch holds 32 (lengths and periods in records or epochs count batches of "
          "32)" in out + err, out + err)
    trial = experiment(uneven)["trials"][0]
    check(trial["batches_trained"] == 64 and trial["records_trained"] == 2048, trial)
    validations = [r for r in metrics(uneven) if r["kind"] == "validation"]
    check(validations and "accuracy" in validations[-1]["metrics"], validations)

    # Stop a longer 2-slot run after its first checkpoint, resume, compare with uninterrupted.
    long_batches = 700
    straight = train(tmp, "straight", "hyperparameters.global_batch_size=16",
                     "hyperparameters.hidden_size=128", batches=long_batches, slots=2)
    config = mlp_config(tmp, name="stopped", batches=long_batches, period=50, hidden_size=128)
    stopped = os.path.join(tmp, "stopped")
    process = start("run", config, "--output", stopped, "--cpu-slots", "2",
                    "--set", "resources.slots_per_trial=2", "--set", "hyperparameters.momentum=0",
                    "--set", f"min_validation_period.batches={long_batches}",
                    "--set", f"min_checkpoint_period.batches=50")
    wait_for(lambda: experiment(stopped)["trials"][0]["checkpoints"], what="the first checkpoint")
    # SIGTERM, as a preempted machine gets: the same graceful stop as Ctrl-C.
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 130, f"stopped run exited {process.returncode}:\n{out}\n{err}")
    check(experiment(stopped)["state"] == "STOPPED", experiment(stopped))
    at = experiment(stopped)["trials"][0]["batches_trained"]
    check(0 < at < long_batches, f"stopped at {at}")
    code, out, err = run("run", "--resume", stopped, "--cpu-slots", "2")
    check(code == 0, f"resume failed:\n{out}\n{err}")
    check(final_parameters(stopped, long_batches) == final_parameters(straight, long_batches),
          "the resumed 2-slot run differs from the uninterrupted one")
print("ok")
