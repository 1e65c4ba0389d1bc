"""An adaptive_asha run stopped after its searcher had heard some results, then resumed, makes
the same decisions as the same run never stopped: its searcher hears the recorded results again
(experiment.json's searcher_events), so the resumed run promotes and closes the same trials at
the same rungs, and no trial that had reported at its rung trains for it again (and a resume under
other searcher settings is refused). One trial at a time keeps the order of the results, and so
the decisions, the same in both runs."""
import os
import signal

from cohort_cli import *

CONFIG = """\
name: asha-resume
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 16
  optimizer: sgd
  learning_rate:
    type: log
    base: 10
    minval: -3
    maxval: -1
  momentum: 0.9
  hidden_size: 64
  hidden_layers: 2
  synthetic_train_records: 2048
  synthetic_validation_records: 512
  slow_rank: 0
  slow_rank_ms: 2  # paced, so that the stop comes well before the end on a fast machine
searcher:
  name: adaptive_asha
  metric: accuracy
  smaller_is_better: false
  max_trials: 4
  max_concurrent_trials: 1
  bracket_rungs: [2]
  divisor: 2
  max_length:
    batches: {batches}
min_validation_period:
  batches: 100
min_checkpoint_period:
  batches: 100
scheduling_unit: 20
reproducibility:
  experiment_seed: 5
"""

BATCHES = interruptible(800)


def decisions(run_dir):
    """The searcher's events of the run, as (trial, validated batches or 'exited', metric)."""
    return [(e["trial"], "exited" if e.get("exited") else e["validated"],
             e.get("searcher_metric")) for e in experiment(run_dir)["searcher_events"]]


def segments(run_dir, trial):
    """The batches at which the trial's validations were reported, in order."""
    return [r["batches"] for r in metrics(run_dir, trial) if r["kind"] == "validation"]


with temp_dir() as tmp:
    config = write_config(tmp, CONFIG.format(entrypoint=plugin("mlp"), batches=BATCHES))

    # A: never stopped.
    a = os.path.join(tmp, "a")
    code, out, err = run("run", config, "--output", a, timeout=600)
    check(code == 0, f"run A failed:\n{out}\n{err}")
    expected = decisions(a)
    check(len(expected) >= 5, f"A's searcher heard too little to test a resume: {expected}")

    # B: stopped (Ctrl-C) once its searcher has heard two results, then resumed.
    b = os.path.join(tmp, "b")
    process = start("run", config, "--output", b)
    wait_for(lambda: len(experiment(b)["searcher_events"]) >= 2, timeout=300,
             what="two results told to the searcher")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    check(process.returncode == 130, f"the stopped run exited {process.returncode}:\n{out}\n{err}")
    heard = decisions(b)
    check(len(heard) < len(expected), f"B ran to its end before the stop: {heard}")
    check(heard == expected[:len(heard)], f"B before the stop: {heard}\nA: {expected}")

    code, out, err = run("run", "--resume", b, timeout=600)
    check(code == 0, f"the resume failed:\n{out}\n{err}")
    check(experiment(b)["state"] == "COMPLETED", experiment(b))
    check(decisions(b) == expected, f"the resumed run decided otherwise:\n{decisions(b)}\nA: {expected}")
    for trial in experiment(a)["trials"]:
        tid = trial["id"]
        check(segments(b, tid) == segments(a, tid),
              f"trial {tid} validated at {segments(b, tid)}, not {segments(a, tid)} as in A")
        resumed = next(t for t in experiment(b)["trials"] if t["id"] == tid)
        check(resumed["state"] == trial["state"] and
              resumed["batches_trained"] == trial["batches_trained"],
              f"trial {tid}: {resumed['state']} after {resumed['batches_trained']} batches, not "
              f"{trial['state']} after {trial['batches_trained']} as in A")

    # Other searcher settings would decide other promotions: refused, naming them, changing nothing.
    before = folder_bytes(b)
    code, out, err = run("run", "--resume", b, "--set", "searcher.divisor=3")
    check(code != 0, f"a resume with another divisor ran:\n{out}\n{err}")
    check("searcher.divisor: 2 before, 3 now" in err, err)
    check(folder_bytes(b) == before, "the refused resume changed the run folder")
