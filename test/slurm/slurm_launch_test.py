"""`cohort launch` under a real Slurm: munged, slurmctld and slurmd started by this test
(slurm_cluster.py, one node of 2 CPUs), then `srun -n 2 cohort launch` as docs/cluster.md shows
it. The node list names this machine by its host name, not loopback, so the ranks meet over CURVE
with the job's keys (`cohort keygen --launch 2`): the trial trains bitwise equal to `cohort run`
at 2 slots. Exits 77 (skipped), saying why, only where Slurm is not installed or its daemons
cannot start here.
"""
import os

from cohort_cli import *
from slurm_cluster import start_or_skip

BATCHES = 200

with temp_dir() as tmp:
    slurm = start_or_skip(os.path.join(tmp, "slurm"))
    try:
        config = mlp_config(tmp, name="slurm-launched", batches=BATCHES, period=100)
        reference = os.path.join(tmp, "reference")
        code, out, err = run("run", config, "--output", reference, "--cpu-slots", "2",
                             "--set", "resources.slots_per_trial=2")
        check(code == 0, f"the reference run failed:\n{out}\n{err}")

        keys = os.path.join(tmp, "keys")
        code, out, err = run("keygen", "--out", keys, "--launch", "2")
        check(code == 0, err)
        launched = os.path.join(tmp, "launched")
        code, out, err = slurm.run(["srun", "-n", "2", COHORT, "launch", config, "--keys", keys,
                                    "--output", launched])
        check(code == 0, f"srun -n 2 cohort launch exited {code}:\n{out}\n{err}")
        check("rank 0 of 2 (slurm)" in err, err)
        check(experiment(launched)["state"] == "COMPLETED", experiment(launched))
        check(final_parameters(launched, BATCHES) == final_parameters(reference, BATCHES),
              "srun's trial differs from cohort run's at 2 slots")
        print("srun -n 2 cohort launch: bitwise equal to cohort run at 2 slots")
    finally:
        slurm.__exit__(None, None, None)
print("ok")
