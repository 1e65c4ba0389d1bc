"""The collective flight recorder, on a real trial of two ranks (two agents of one CPU slot each,
Gloo between them):

1. rank 1's worker is stopped (SIGSTOP) mid-training; while rank 0 waits for it, `cohort trial
   diagnose` names the collective the ranks part at, rank 0 in it, and rank 1 as the rank missing
   from it or gone silent; the gathered records are in the trial's folder;
2. when the collective timeout ends the trial, its error names rank 1 first as the stopped rank
   its peer waited for (as stopped_rank_test.py checks on one agent), ends with the same
   diagnosis, and the trial's folder holds the records of both ranks;
3. a 2-slot trial that completes leaves no flight record behind, and `cohort trial diagnose` says
   there is none; so does a trial of one slot;
4. rank 1's worker is SIGKILLed mid-training: rank 0 fails within the same heartbeat, so the records
   alone cannot tell which went first, but the diagnosis names rank 1, killed by signal 9, as the
   likely cause, in the trial's error and again when `cohort trial diagnose` asks later;
5. a look at a running task never replaces what a failed one left: after a killed rank's task
   is restarted, `cohort trial diagnose` of the new task writes its own snapshot, the failed
   task's record stays as it was, and once the new task ends the snapshot is gone and the record
   is the one diagnosed.
"""
import json
import os
import signal
import time

from cohort_cli import *
from cluster import Cluster


def config(tmp, name, batches, slots, timeout, max_restarts=0):
    text = read_bytes(mlp_config(tmp, name=name, batches=batches, period=10**6,
                                 max_restarts=max_restarts)).decode()
    return write_config(tmp, text + f"resources:\n  slots_per_trial: {slots}\n"
                        f"optimizations:\n  collective_timeout: {timeout}\n",
                        file_name=name + ".yaml")


with temp_dir() as tmp:
    cluster_dir = os.path.join(tmp, "cluster")
    os.makedirs(cluster_dir)
    with Cluster(cluster_dir) as cluster:
        cluster.add_agent("agent-a", 1)
        cluster.add_agent("agent-b", 1)

        # 1. A stopped rank, diagnosed while the other waits for it.
        experiment_id = cluster.submit(config(tmp, "stopped", 10**6, 2, 8))
        folder = os.path.join(cluster.state, "experiments", str(experiment_id))
        wait_for(lambda: worker_pid(1, cluster_dir) is not None
                 and experiment(folder)["trials"][0]["batches_trained"] > 0, 120,
                 "rank 1 to train")
        trial_id = cluster.first_trial(experiment_id)
        pid = worker_pid(1, cluster_dir)
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(2.5)  # past the 1 s after which a record that is not stamped is silent
            out = cluster.must("trial", "diagnose", str(trial_id))
            trial_folder = os.path.join(folder, "trials", str(trial_id))
            snapshot_path = os.path.join(trial_folder, "flight_snapshot.json")
            report_path = os.path.join(trial_folder, "flight_record.json")
            with open(snapshot_path) as f:
                report = json.load(f)
            diagnosis = report["diagnosis"]
            check(diagnosis["collective"] and diagnosis["collective"] in out, f"{out}\n{report}")
            check(0 in diagnosis["entered"], diagnosis)
            # Stopped between two collectives, rank 1 is missing from the one rank 0 waits in;
            # stopped inside it, it entered it too. Either way it is silent, and named.
            check(diagnosis["silent"] == [1], diagnosis)
            check(diagnosis["missing"] == [1] or diagnosis["entered"] == [0, 1], diagnosis)
            check("rank 1 " in diagnosis["summary"] and "gone silent" in diagnosis["summary"],
                  diagnosis)
            check(sorted(r["rank"] for r in report["records"]) == [0, 1], report["records"])
            check(all(r["collectives"] for r in report["records"]), "an empty record")
            check("(running)" in out and "records: " + snapshot_path in out, out)
            check("this may be the collective in flight" in out, out)
            print(out)

            # 2. The timeout ends the trial; its error carries the diagnosis.
            state = cluster.wait_ended(experiment_id, 120)
        finally:
            release(pid)
        check(state == "error", f"the experiment ended {state}:\n{cluster.logs()}")
        error = experiment(folder)["trials"][0]["error"] or ""
        check(error.startswith("rank 1 ") and "Flight record: " in error, error)
        check("process was stopped (SIGSTOP or a debugger): it is the rank the others waited for"
              in error and "then rank 0 exited" in error, error)
        print("the trial's error:", error)
        with open(report_path) as f:
            after = json.load(f)
        check(after["diagnosis"]["collective"] in error, f"{after['diagnosis']}\n{error}")
        check(not os.path.exists(snapshot_path), "the running task's snapshot outlived it")
        out = cluster.must("trial", "diagnose", str(trial_id))
        check("(ended)" in out, out)

        # 3. A trial that completes removes its records; one slot keeps none.
        done_id = cluster.submit(config(tmp, "done", 40, 2, 20))
        check(cluster.wait_ended(done_id, 120) == "completed", cluster.logs())
        done_trial = cluster.first_trial(done_id)
        code, out, err = cluster.cli("trial", "diagnose", str(done_trial))
        check(code != 0 and "no task of it is running, and none failed" in err,
              f"{code}\n{out}\n{err}")
        one_id = cluster.submit(config(tmp, "one", 20, 1, 20))
        check(cluster.wait_ended(one_id, 120) == "completed", cluster.logs())
        code, out, err = cluster.cli("trial", "diagnose", str(cluster.first_trial(one_id)))
        check(code != 0 and "a trial of one slot keeps none" in err, f"{code}\n{out}\n{err}")

        # 4. A rank killed from outside is named as the cause, then and later.
        killed_id = cluster.submit(config(tmp, "killed", 10**6, 2, 20))  # max_restarts: 0
        killed_folder = os.path.join(cluster.state, "experiments", str(killed_id))
        wait_for(lambda: worker_pid(1, cluster_dir) is not None
                 and experiment(killed_folder)["trials"][0]["batches_trained"] > 0, 120,
                 "rank 1 of the last trial to train")
        os.kill(worker_pid(1, cluster_dir), signal.SIGKILL)
        check(cluster.wait_ended(killed_id, 120) == "error", cluster.logs())
        error = experiment(killed_folder)["trials"][0]["error"] or ""
        print("the killed trial's error:", error)
        check(error.startswith("rank 1 was killed by signal 9"), error)
        killed_trial = cluster.first_trial(killed_id)
        with open(os.path.join(killed_folder, "trials", str(killed_trial),
                               "flight_record.json")) as f:
            diagnosis = json.load(f)["diagnosis"]
        check(diagnosis["silent"] == [1], diagnosis)
        check("rank 1 was killed by signal 9" in diagnosis["summary"]
              and diagnosis["summary"].endswith(", the likely cause."), diagnosis)
        check(("Flight record: " in error) == bool(diagnosis["collective"]), f"{error}\n{diagnosis}")
        out = cluster.must("trial", "diagnose", str(killed_trial))
        check("(ended)" in out and "rank 1 was killed by signal 9" in out, out)

        # 5. A look at the restarted task leaves the failed task's record alone.
        again_id = cluster.submit(config(tmp, "again", 10**6, 2, 20, max_restarts=1))
        again_folder = os.path.join(cluster.state, "experiments", str(again_id))
        wait_for(lambda: worker_pid(1, cluster_dir) is not None
                 and experiment(again_folder)["trials"][0]["batches_trained"] > 0, 120,
                 "rank 1 of the restarted trial's first task to train")
        first_pid = worker_pid(1, cluster_dir)
        os.kill(first_pid, signal.SIGKILL)
        again_trial = cluster.first_trial(again_id)
        again_trial_folder = os.path.join(again_folder, "trials", str(again_trial))
        record_path = os.path.join(again_trial_folder, "flight_record.json")
        wait_for(lambda: os.path.exists(record_path) and worker_pid(1, cluster_dir) not in
                 (None, first_pid), 120, "the trial's second task to start")
        record = read_bytes(record_path)
        failed_task = json.loads(record)["task_id"]
        looks = []  # the new task's ranks may not have written a record yet
        wait_for(lambda: looks.append(cluster.cli("trial", "diagnose", str(again_trial)))
                 or looks[-1][0] == 0, 60, "a diagnosis of the second task")
        out = looks[-1][1]
        check("(running)" in out and f"task {failed_task} " not in out, out)
        with open(os.path.join(again_trial_folder, "flight_snapshot.json")) as f:
            check(json.load(f)["task_id"] != failed_task, "the snapshot is of the failed task")
        check(read_bytes(record_path) == record, "a look at the running task rewrote the record")
        cluster.must("experiment", "kill", str(again_id))
        cluster.wait_ended(again_id, 120)
        check(not os.path.exists(os.path.join(again_trial_folder, "flight_snapshot.json")),
              "the snapshot outlived its task")
        out = cluster.must("trial", "diagnose", str(again_trial))
        check(f"task {failed_task} (ended)" in out and "rank 1 was killed by signal 9" in out, out)
print("ok")
