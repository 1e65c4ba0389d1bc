"""`cohort run` trains the mlp plugin end to end and leaves a complete run folder."""
import json
import os
import shutil

from cohort_cli import *

with temp_dir() as tmp:
    config = mlp_config(tmp, batches=300, period=100)
    run_dir = os.path.join(tmp, "run")
    code, out, err = run("run", config, "--output", run_dir)
    check(code == 0, f"cohort run failed ({code}):\n{out}\n{err}")

    state = experiment(run_dir)
    check(state["state"] == "COMPLETED", state)
    trial = state["trials"][0]
    check(trial["state"] == "COMPLETED" and trial["batches_trained"] == 300, trial)
    check(trial["total_batches"] == 300, trial)
    check(trial["latest_validation"]["batches"] == 300, trial)
    best = trial["best_validation"]
    check(best is not None and 0.0 <= best["metrics"]["accuracy"] <= 1.0, best)
    # Retention (save_trial_latest 1, save_trial_best 1): the final checkpoint and the best one.
    ids = [c["id"] for c in trial["checkpoints"]]
    check("trial-1-batch-300" in ids and 1 <= len(ids) <= 2, ids)
    check(sorted(os.listdir(os.path.join(run_dir, "checkpoints"))) == sorted(ids),
          os.listdir(os.path.join(run_dir, "checkpoints")))
    check(f"trial-1-batch-{best['batches']}" in ids, (best, ids))
    # The best checkpoint is the one validated best; the run names it, and the best trial.
    check(trial["best_checkpoint"] == f"trial-1-batch-{best['batches']}", trial)
    check(state["best_trial"] == {"id": 1, "batches": best["batches"],
                                  "searcher_metric": best["metrics"]["accuracy"],
                                  "best_checkpoint": trial["best_checkpoint"]}, state["best_trial"])
    roles = {"trial-1-batch-300": "best, latest" if best["batches"] == 300 else "latest"}
    if best["batches"] != 300:
        roles[trial["best_checkpoint"]] = "best"
    for checkpoint, role in roles.items():
        check(f"  checkpoint {checkpoint} ({role})\n" in out, (roles, out))

    reports = metrics(run_dir)
    training = [r["batches"] for r in reports if r["kind"] == "training"]
    validation = [r["batches"] for r in reports if r["kind"] == "validation"]
    check(training == list(range(20, 301, 20)), training)
    check(validation == [100, 200, 300], validation)
    base = {"kind", "batches", "records", "time", "metrics"}
    phases = {"data", "compute", "exchange_wait", "optimizer", "metrics", "validation",
              "checkpoint", "checkpoint_write", "exchange", "codec"}
    for report in reports:
        training_report = report["kind"] == "training"
        check(set(report) == (base | {"timings", "records_per_second"} if training_report
                              else base), report)
        check(report["records"] == report["batches"] * 16, report)
        check("loss" in report["metrics"], report)
        if training_report:
            # Where rank 0's time went since the previous training report, and the throughput.
            check(set(report["timings"]) <= phases and "compute" in report["timings"], report)
            check(all(seconds >= 0 for seconds in report["timings"].values()), report)
            check(report["records_per_second"] > 0, report)

    with open(os.path.join(run_dir, "config.yaml")) as f:
        stored = f.read()
    check("experiment_seed: 11" in stored, stored)
    with open(os.path.join(run_dir, "trials", "1", "log.txt")) as f:
        log = f.read()
    check("trial 1 rank 0 of 1: plugin mlp" in log, log)
    check("no heartbeat" not in log and "no heartbeat" not in err, (log, err))
    check("COMPLETED" in out and run_dir in out, out)

    # The run is a one-machine cluster: the orchestrator's and agent's own files are in local/.
    with open(os.path.join(run_dir, "local", "orchestrator.log")) as f:
        check("agent local registered" in f.read(), "orchestrator.log")
    check(os.path.isdir(os.path.join(run_dir, "local", "tasks", "1")),
          os.listdir(os.path.join(run_dir, "local")))

    # A completed run resumed as it stands has nothing left to train: it says so, prints its
    # summary again and leaves every byte of its folder as it was (it used to start a task).
    before = folder_bytes(run_dir)
    code, again, err = run("run", "--resume", run_dir)
    check(code == 0 and "has completed: nothing to resume" in err, f"{code}\n{again}\n{err}")
    check(again == out, f"the summary differs:\n{again}\nagainst\n{out}")
    check(folder_bytes(run_dir) == before, "a resume of the completed run changed its folder")
    # The folder described later, with no orchestrator: the summary the run ended with, and its
    # experiment.json as it is; describing reads and changes nothing.
    code, described, err = run("experiment", "describe", run_dir)
    check(code == 0 and described == out, f"{code}\n{described}\nagainst\n{out}\n{err}")
    code, described, err = run("experiment", "describe", run_dir, "--json")
    check(code == 0 and json.loads(described) == experiment(run_dir), f"{code}\n{err}")
    check(folder_bytes(run_dir) == before, "describing the run folder changed it")
    code, _, err = run("experiment", "describe", os.path.join(tmp, "no-such-run"))
    check(code == 2 and "is no experiment id, and no such run folder exists" in err, err)
    # A length edited into its config.yaml is something left to train: it trains on.
    longer = os.path.join(tmp, "longer")
    shutil.copytree(run_dir, longer)
    with open(os.path.join(longer, "config.yaml")) as f:
        stored = f.read()
    check("  max_length:\n    batches: 300\n" in stored, stored)
    with open(os.path.join(longer, "config.yaml"), "w") as f:
        f.write(stored.replace("  max_length:\n    batches: 300\n",
                               "  max_length:\n    batches: 400\n"))
    code, _, err = run("run", "--resume", longer)
    check(code == 0 and "nothing to resume" not in err and
          experiment(longer)["trials"][0]["batches_trained"] == 400, f"{code}\n{err}")

    # A trial shorter than one report period still shows its total in its progress line: the
    # agent passes a task's first progress on at once, ahead of the report that follows it.
    short = mlp_config(tmp, name="short", batches=10, period=10, file_name="short.yaml")
    code, short_out, short_err = run("run", short, "--output", os.path.join(tmp, "short"))
    check(code == 0 and "trial 1  10/10 batches  loss " in short_err, f"{code}\n{short_err}")

    # Any searcher runs: a grid of two trials shares the machine's two slots.
    grid_config = write_config(tmp, open(config).read().replace(
        "  hidden_size: 32\n", "  hidden_size:\n    type: categorical\n    vals: [16, 32]\n").replace(
        "  name: single\n", "  name: grid\n").replace("batches: 300", "batches: 40"), "grid.yaml")
    grid_dir = os.path.join(tmp, "grid")
    code, out, err = run("run", grid_config, "--output", grid_dir, "--cpu-slots", "2")
    check(code == 0, f"grid run failed ({code}):\n{out}\n{err}")
    state = experiment(grid_dir)
    check(state["state"] == "COMPLETED" and len(state["trials"]) == 2, state)
    check(sorted(t["hyperparameters"]["hidden_size"] for t in state["trials"]) == [16, 32], state)
    for trial in state["trials"]:
        check(trial["state"] == "COMPLETED" and trial["batches_trained"] == 40, trial)
        check(metrics(grid_dir, trial["id"])[-1]["batches"] == 40, trial)
    check("COMPLETED, 2 trials" in out and "trial 2 COMPLETED after 40 of 40 batches" in out, out)
    # A completed search resumed as it stands, from its folder or from the file it ran, has
    # nothing left to train either (it used to start a task for every trial).
    before = folder_bytes(grid_dir)
    for asked in (("--resume", grid_dir), (grid_config, "--resume", grid_dir)):
        code, again, err = run("run", *asked)
        check(code == 0 and "has completed: nothing to resume" in err and
              "trains its trials on" in err and "task" not in err, f"{code}\n{again}\n{err}")
        check(again == out, f"the summary differs:\n{again}\nagainst\n{out}")
    check(folder_bytes(grid_dir) == before, "a resume of the completed search changed its folder")
    # The metric it ranked its trials by chose the checkpoints kept as their best: a resume under
    # another is refused, naming both, and changes nothing (retention used to delete them).
    code, _, err = run("run", "--resume", grid_dir, "--set", "searcher.smaller_is_better=true")
    check(code == 1 and "kept their best checkpoints under another searcher or metric "
          "(searcher.smaller_is_better: false before, true now)" in err, f"{code}\n{err}")
    check(folder_bytes(grid_dir) == before, "a refused resume changed the folder")

    # A second run into the same folder is refused; nothing there is touched.
    code, out, err = run("run", config, "--output", run_dir)
    check(code != 0 and "--resume" in err, (code, err))

    # Help for the CLI and for the subcommand.
    code, out, _ = run("--help")
    check(code == 0 and "run EXPERIMENT.yaml" in out, out)
    code, out, _ = run("run", "--help")
    check(code == 0 and "--resume DIR" in out and "--set KEY=VALUE" in out, out)
    code, out, _ = run("plugin", "check", "--help")
    check(code == 0 and "cohort plugin check PLUGIN" in out, out)
print("ok")
