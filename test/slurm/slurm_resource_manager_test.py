"""`cohort orchestrator --resource-manager slurm` against a real Slurm started by this test
(slurm_cluster.py: one node of 2 CPUs), as docs/cluster.md ("On Slurm") shows it:

1. `scancel` of a running trial's job: the trial is placed again (a new job) from its latest
   checkpoint, without using a restart, and ends bitwise equal to an uninterrupted `cohort run`
   (the orchestrator's first trial, as `cohort run`'s only one: its seed is the same);
2. a grid of three 1-slot trials: each trial's task is a Slurm job of 1 CPU (with the
   experiment's slurm.sbatch_args), so that on 2 CPUs one waits, `cohort task list` showing its
   job id and Slurm's reason (Resources); every trial completes and no job is left;
3. while its `sbatch` is held back, the orchestrator still answers, the task waiting with
   `asking Slurm for a job`; then a killed experiment cancels its job;
4. docs/cluster.md's example, examples/mlp_grid.yaml, completes;
5. with CURVE (`--curve always`), the jobs' agents register with the key named slurm that they
   share (--slurm-agent-key), and a trial completes.

Bad flags are refused first, with or without Slurm. Exits 77 (skipped), saying why, only where Slurm
is not installed or its daemons cannot start.
"""
import os
import re
import shutil
import stat

from cluster import Cluster, two_rate_grid
from cohort_cli import *
from slurm_cluster import start_or_skip

def jobs(slurm):
    """This user's Slurm jobs still queued or running: {job id: state}."""
    code, out, err = slurm.run(["squeue", "-h", "--me", "-o", "%i %T"])
    check(code == 0, f"squeue failed: {err}")
    return dict(line.split() for line in out.splitlines() if line.strip())


def rows(cluster):
    """`cohort task list` rows as dicts of its columns (REASON may hold spaces)."""
    lines = cluster.must("task", "list").splitlines()
    if not lines:
        return []
    header = lines[0].split()
    listed = []
    for line in lines[1:]:
        fields = line.split(None, len(header) - 1)
        listed.append(dict(zip(header, fields + [""] * (len(header) - len(fields)))))
    return listed


with temp_dir() as tmp:
    # Refusals need no Slurm: each names the flag, exits 2 and makes no state directory.
    state = os.path.join(tmp, "refused-state")
    for flags, said in [
            (["--slurm-partition", "gpu"], "--slurm-partition needs --resource-manager slurm"),
            (["--resource-manager", "pbs"], "--resource-manager needs agents or slurm, not 'pbs'"),
            (["--resource-manager", "slurm", "--listen", "tcp://127.0.0.1:*"],
             "needs a fixed --listen port"),
            (["--resource-manager", "slurm", "--listen", "tcp://0.0.0.0:29555"],
             "uses CURVE: give --slurm-agent-key"),
            (["--resource-manager", "slurm", "--slurm-slots-per-node", "0"],
             "--slurm-slots-per-node needs a count of slots > 0, not '0'")]:
        code, out, err = run("orchestrator", "--state-dir", state, *flags)
        check(code == 2 and said in err, f"{flags}: exit {code}, {err}")
        check(not os.path.exists(state), f"{flags} made {state}")
    print("bad --resource-manager flags refused, naming the flag")

    slurm = start_or_skip(os.path.join(tmp, "slurm"))
    os.environ["SLURM_CONF"] = slurm.conf  # for the orchestrator's sbatch, squeue and scancel
    # The orchestrator's sbatch: the real one, held back (at most 60 s) while the file HOLD
    # exists, having said so in HOLD.begun.
    hold = os.path.join(tmp, "hold-sbatch")
    gate_bin = os.path.join(tmp, "gate-bin")
    os.makedirs(gate_bin)
    held_sbatch = os.path.join(gate_bin, "sbatch")
    with open(held_sbatch, "w") as f:
        f.write(f"""#!/bin/sh
if [ -e '{hold}' ]; then
  touch '{hold}.begun'
  i=0
  while [ -e '{hold}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
fi
exec '{shutil.which("sbatch")}' "$@"
""")
    os.chmod(held_sbatch, os.stat(held_sbatch).st_mode | stat.S_IXUSR)
    os.environ["PATH"] = gate_bin + os.pathsep + os.environ["PATH"]
    try:
        with Cluster(tmp, "--resource-manager", "slurm") as cluster:
            def why(text):
                return f"{text}\n{cluster.logs()}\n--- squeue\n{jobs(slurm)}"

            def wait(predicate, seconds, what):
                try:
                    wait_for(predicate, seconds, what)
                except AssertionError as timed_out:
                    raise AssertionError(why(timed_out)) from None

            wait(lambda: cluster.cli("task", "list")[0] == 0, 30, "the orchestrator")

            # 1. scancel of a running job: placed again from the latest checkpoint.
            batches = interruptible(50000)
            config = mlp_config(tmp, name="slurm-scancel", batches=batches, period=1000)
            reference = os.path.join(tmp, "reference")
            code, out, err = run("run", config, "--output", reference, "--cpu-slots", "1")
            check(code == 0, f"the reference run failed:\n{out}\n{err}")
            scancel_id = cluster.submit(config)
            checkpoints = os.path.join(cluster.state, "checkpoints", f"experiment-{scancel_id}")
            wait(lambda: any(name.startswith("trial-") for name in os.listdir(checkpoints)),
                     120, "a first checkpoint")
            listed = [r for r in rows(cluster) if r["STATE"] == "running"]
            check(len(listed) == 1, why(listed))
            first_job = listed[0]["JOB"]
            code, out, err = slurm.run(["scancel", first_job])
            check(code == 0, f"scancel failed: {err}")
            check(cluster.wait_ended(scancel_id) == "completed", why("no completion after scancel"))
            log = cluster.log()
            check(re.search(r"placing it again from trial-\d+-batch-\d+", log), why("no re-place"))
            trial = experiment(os.path.join(cluster.state, "experiments", str(scancel_id)))
            check(trial["trials"][0]["restarts"] == 0, why(trial))
            trial_id = trial["trials"][0]["id"]
            final = os.path.join(checkpoints, f"trial-{trial_id}-batch-{batches}", "parameters")
            check(read_bytes(final) == final_parameters(reference, batches),
                  why("the trial resumed after scancel differs from the uninterrupted run"))
            print(f"scancel {first_job}: placed again from its checkpoint, bitwise equal to "
                  "cohort run")

            # 2. Three 1-CPU jobs on a node of 2 CPUs: one waits for Resources. The trials last
            # several seconds, so that the job waiting is still pending when the orchestrator
            # reads Slurm's reason (every second; Slurm gives it after a scheduling pass).
            grid = two_rate_grid(tmp, "slurm-grid", batches=interruptible(200000),
                                 validation_period=10000, scheduling_unit=100,
                                 rates=(0.01, 0.02, 0.05))
            with open(grid, "a") as f:  # the experiment's own sbatch options
                f.write("slurm:\n  sbatch_args: [--comment=cohort-grid]\n")
            grid_id = cluster.submit(grid)
            pending = []

            def one_pends():
                pending[:] = [r for r in rows(cluster) if "pending: Resources" in r["REASON"]]
                return pending
            wait(one_pends, 120, "a trial pending for Resources")
            check(re.fullmatch(r"\d+", pending[0]["JOB"]) is not None, why(pending))
            check(pending[0]["REASON"] == f"Slurm job {pending[0]['JOB']} pending: Resources",
                  why(pending))
            code, out, err = slurm.run(["squeue", "-h", "-j", pending[0]["JOB"], "-o", "%k"])
            check(out.strip() == "cohort-grid", why(f"the job's comment is {out!r} ({err})"))
            print(f"task list: {pending[0]['REASON']}")
            check(cluster.wait_ended(grid_id) == "completed", why("the grid did not complete"))
            wait(lambda: not jobs(slurm), 30, "the grid's jobs to end")
            print("grid of 3 trials on 1-CPU Slurm jobs: completed, one job waited for Resources")

            # 3. An sbatch held back holds nothing else up; then a killed experiment cancels its
            # job.
            with open(hold, "w"):
                pass
            long_run = mlp_config(tmp, name="slurm-killed", batches=1000000, period=1000)
            killed_id = cluster.submit(long_run)
            wait(lambda: os.path.exists(hold + ".begun"), 60, "the held sbatch to begin")
            waiting = rows(cluster)  # answered while sbatch is held
            check(os.path.exists(hold), why("the hold ended before the orchestrator answered"))
            check(len(waiting) == 1 and waiting[0]["REASON"] == "asking Slurm for a job",
                  why(waiting))
            os.remove(hold)
            print("while sbatch was held back, task list answered: asking Slurm for a job")
            wait(lambda: any(r["STATE"] == "running" for r in rows(cluster)), 120,
                     "the long trial to run")
            job = rows(cluster)[0]["JOB"]
            check(job in jobs(slurm), why(f"job {job} not in squeue"))
            cluster.must("experiment", "kill", str(killed_id))
            check(cluster.wait_ended(killed_id, 60) == "stopped", why("the kill did not stop it"))
            wait(lambda: job not in jobs(slurm), 30, f"job {job} to end after the kill")
            print(f"killed experiment {killed_id}: its job {job} ended")

            # 4. docs/cluster.md's example: examples/mlp_grid.yaml (4 trials, 2 at a time).
            example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                   "examples", "mlp_grid.yaml")
            example_id = cluster.submit(example)
            check(cluster.wait_ended(example_id) == "completed", why("mlp_grid did not complete"))
            wait(lambda: not jobs(slurm), 30, "mlp_grid's jobs to end")
            print("examples/mlp_grid.yaml: 4 trials completed on Slurm jobs")

        # 5. CURVE: the jobs' agents share the key named slurm (--curve always: on loopback too).
        keys = os.path.join(tmp, "keys")
        authorized = os.path.join(tmp, "authorized")
        os.makedirs(authorized)
        for name in ("orchestrator", "slurm", "alice"):
            code, out, err = run("keygen", "--out", keys, "--name", name)
            check(code == 0, f"cohort keygen --name {name}: {err}")
            if name == "orchestrator":
                os.environ["COHORT_ORCHESTRATOR_KEY"] = out.split()[0]  # for the client commands
            else:
                shutil.copy(os.path.join(keys, name + ".pub"), authorized)
        os.environ["COHORT_KEY"] = os.path.join(keys, "alice.key")
        curve_dir = os.path.join(tmp, "curve")
        os.makedirs(curve_dir)
        with Cluster(curve_dir, "--resource-manager", "slurm", "--curve", "always",
                     "--key", os.path.join(keys, "orchestrator.key"),
                     "--authorized-keys", authorized,
                     "--slurm-agent-key", os.path.join(keys, "slurm.key")) as cluster:
            wait_for(lambda: cluster.cli("task", "list")[0] == 0, 30, "the CURVE orchestrator")
            single = mlp_config(curve_dir, name="slurm-curve", batches=200, period=100)
            curve_id = cluster.submit(single)
            check(cluster.wait_ended(curve_id, 120) == "completed",
                  f"no completion over CURVE:\n{cluster.logs()}")
            check("agent slurm-" in cluster.log(), cluster.log())
            print("over CURVE: the job's agent registered with the shared slurm key; completed")
    finally:
        slurm.__exit__(None, None, None)
print("ok")
