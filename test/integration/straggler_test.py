"""Straggler scores on a real trial of two ranks (two agents of one CPU slot each, Gloo between
them) whose rank 1 is slowed by the mlp plugin's `slow_rank` hyperparameter (it sleeps 8 ms in
every train_batch, several times a batch's own work):

1. every training report in metrics.jsonl carries both ranks' pace, rank 1 scored well below the
   fastest (rank 0, scored 1);
2. the orchestrator names rank 1 as the straggler, with its agent, in its log and the trial's;
3. `cohort trial describe` shows the scores, and the orchestrator's Prometheus page has them per
   rank while the trial runs;
4. with `optimizations.straggler_threshold: 0` the scores are still reported, and nobody is warned.
"""
import json
import os

from cluster import Cluster, free_port
from cohort_cli import *
from prometheus_scrape import scrape, value

CONFIG = """\
name: {name}
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 16
  learning_rate: 0.05
  hidden_size: 16
  synthetic_train_records: 2048
  slow_rank: 1
  slow_rank_ms: 8
searcher:
  name: single
  metric: loss
  max_length:
    batches: {batches}
min_checkpoint_period:
  batches: 100000
scheduling_unit: 10
resources:
  slots_per_trial: 2
optimizations:
  straggler_threshold: {threshold}
reproducibility:
  experiment_seed: 5
"""
WARNING = "rank 1 is a straggler: its step took "


def submit(cluster, tmp, name, batches, threshold):
    path = write_config(tmp, CONFIG.format(name=name, entrypoint=plugin("mlp"), batches=batches,
                                           threshold=threshold), file_name=name + ".yaml")
    return cluster.submit(path)


def training_reports(folder, trial_id):
    with open(os.path.join(folder, "trials", str(trial_id), "metrics.jsonl")) as f:
        reports = [json.loads(line) for line in f if line.strip()]
    return [r for r in reports if r["kind"] == "training"]


with temp_dir() as tmp:
    port = free_port()
    with Cluster(tmp, "--metrics-address", f"127.0.0.1:{port}") as cluster:
        cluster.add_agent("agent-a", 1)
        cluster.add_agent("agent-b", 1)

        slowed = submit(cluster, tmp, "slowed", 400, 0.2)
        folder = os.path.join(cluster.state, "experiments", str(slowed))
        trial_id = cluster.first_trial(slowed)
        # 3. Prometheus, while the trial runs.
        wait_for(lambda: (value(scrape(port), "cohort_orchestrator_trial_rank_vs_fastest",
                                experiment=str(slowed), trial=str(trial_id), rank="1") or 1) < 0.5,
                 120, "rank 1's score on the orchestrator's page")
        samples = scrape(port)
        check(value(samples, "cohort_orchestrator_trial_rank_vs_fastest", experiment=str(slowed),
                    trial=str(trial_id), rank="0") == 1, samples)
        step = value(samples, "cohort_orchestrator_trial_rank_step_seconds",
                     experiment=str(slowed), trial=str(trial_id), rank="1")
        check(step is not None and step >= 0.008, f"rank 1's step: {step}")
        check(cluster.wait_ended(slowed, 300) == "completed", cluster.logs())

        # 1. The scores in metrics.jsonl.
        reports = training_reports(folder, trial_id)
        check(len(reports) >= 10, f"{len(reports)} training reports")
        for report in reports:
            ranks = report["ranks"]
            check([r["rank"] for r in ranks] == [0, 1], report)
            check(ranks[0]["vs_fastest"] == 1 and ranks[1]["vs_fastest"] < 0.5, report)
            check(ranks[1]["compute_seconds"] >= 0.008, report)
            check(0 < ranks[1]["vs_best"] <= 1, report)

        # 2. The warning, naming the rank and its agent, once for the stretch.
        with open(os.path.join(folder, "trials", str(trial_id), "log.txt")) as f:
            log = f.read()
        warnings = [line for line in log.splitlines() if WARNING in line]
        check(len(warnings) == 1, log)
        check("it runs on agent agent-b" in warnings[0] and
              "for 3 training reports in a row" in warnings[0], warnings[0])
        check(WARNING in cluster.logs(), "not in the orchestrator's log")
        print(warnings[0])

        # 3. describe.
        described = cluster.must("trial", "describe", str(trial_id))
        check("VS FASTEST" in described, described)
        print(described)
        described = cluster.must("experiment", "describe", str(slowed))
        check(f"trial {trial_id} rank 1: step " in described and "of the fastest" in described,
              described)
        as_json = json.loads(cluster.must("trial", "describe", str(trial_id), "--json"))
        check([r["rank"] for r in as_json["trial"]["latest_ranks"]] == [0, 1], as_json)

        # 4. No warning at threshold 0, the scores still reported.
        quiet = submit(cluster, tmp, "quiet", 60, 0)
        check(cluster.wait_ended(quiet, 300) == "completed", cluster.logs())
        quiet_folder = os.path.join(cluster.state, "experiments", str(quiet))
        quiet_trial = cluster.first_trial(quiet)
        check(all(r["ranks"][1]["vs_fastest"] < 0.5
                  for r in training_reports(quiet_folder, quiet_trial)), "no scores")
        with open(os.path.join(quiet_folder, "trials", str(quiet_trial), "log.txt")) as f:
            check(WARNING not in f.read(), "warned at threshold 0")
print("ok")
