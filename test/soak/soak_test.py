"""The soak test (not in the default suite; `scripts/soak [TRIALS]` runs it): TRIALS consecutive
2-slot mlp trials (50 by default) on one 2-slot agent (`cohort run --cpu-slots 2`), each killed
once with SIGKILL at a random moment (a random rank, before or after its first checkpoint), and
each run again untouched as its twin. Every killed trial must complete (no trial lost, none hung
past its deadline) with final parameters bitwise identical to its twin's. The seed is printed;
COHORT_TEST_SEED replays a run.

    python3 test/soak/soak_test.py COHORT PLUGINS [TRIALS]
"""
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from cohort_cli import *  # noqa: E402

BATCHES = 600
DEADLINE_SECONDS = 240
trials = int(sys.argv[3]) if len(sys.argv) > 3 else 50
seed = int(os.environ.get("COHORT_TEST_SEED", random.randrange(1 << 30)))
print(f"soak: {trials} trials, seed {seed}", flush=True)
chance = random.Random(seed)
two_slots = ["--cpu-slots", "2", "--set", "resources.slots_per_trial=2"]
started = time.monotonic()

with temp_dir() as tmp:
    for trial in range(1, trials + 1):
        config = mlp_config(tmp, name=f"soak-{trial}", batches=BATCHES, period=100,
                            max_restarts=3)
        experiment_seed = ["--set", f"reproducibility.experiment_seed={trial}"]
        twin = os.path.join(tmp, f"twin-{trial}")
        code, out, err = run("run", config, "--output", twin, *two_slots, *experiment_seed)
        check(code == 0, f"trial {trial}: the untouched twin failed:\n{out}\n{err}")

        killed = os.path.join(tmp, f"killed-{trial}")
        process = start("run", config, "--output", killed, *two_slots, *experiment_seed)
        rank = chance.randrange(2)
        wait_for(lambda: worker_pid(rank, killed), what=f"trial {trial}: rank {rank}'s worker")
        time.sleep(chance.uniform(0.0, 0.6))
        pid = worker_pid(rank, killed)
        if pid is not None:  # it may have finished already
            os.kill(pid, signal.SIGKILL)
        try:
            out, err = process.communicate(timeout=DEADLINE_SECONDS)
        except Exception:
            process.kill()
            raise AssertionError(f"trial {trial}: still running after {DEADLINE_SECONDS} s (hung)")
        check(process.returncode == 0, f"trial {trial} lost (exit {process.returncode}):\n{err}")
        check(final_parameters(killed, BATCHES) == final_parameters(twin, BATCHES),
              f"trial {trial}: final parameters differ from its twin's")
        restarts = experiment(killed)["trials"][0]["restarts"]
        print(f"soak: trial {trial}: rank {rank} killed, {restarts} restart(s), matched its twin",
              flush=True)
        for folder in (twin, killed):  # keep the disk small over a long run
            os.system(f"rm -rf '{folder}'")

print(f"soak: {trials} trials, none lost or hung, all bitwise equal to their twins "
      f"({time.monotonic() - started:.0f} s)")
print("ok")
