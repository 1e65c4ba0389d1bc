"""A worker killed with SIGKILL at a random batch of a 2-slot trial: the agent reports it, its
sibling is stopped, and the trial restarts from its latest checkpoint; the final parameters are
bitwise identical to an uninterrupted run's, and one restart was used. The kill time is drawn at
random (the seed is printed, so a failure can be replayed with COHORT_TEST_SEED).

And the other way round: when `cohort run` itself (the agent) is killed with SIGKILL, its workers
die with it instead of training on as orphans."""
import os
import random
import signal
import time

from cohort_cli import *

BATCHES = 1200

seed = int(os.environ.get("COHORT_TEST_SEED", random.randrange(1 << 30)))
print(f"seed {seed}")
chance = random.Random(seed)

with temp_dir() as tmp:
    config = mlp_config(tmp, batches=BATCHES, period=100, max_restarts=2)
    two_slots = ["--cpu-slots", "2", "--set", "resources.slots_per_trial=2"]
    whole = os.path.join(tmp, "whole")
    code, out, err = run("run", config, "--output", whole, *two_slots)
    check(code == 0, f"uninterrupted run failed:\n{out}\n{err}")

    killed = os.path.join(tmp, "killed")
    process = start("run", config, "--output", killed, *two_slots)
    wait_for(lambda: experiment(killed)["trials"][0]["checkpoints"], what="the first checkpoint")
    time.sleep(chance.uniform(0.0, 0.3))
    rank = chance.randrange(2)
    pid = worker_pid(rank, killed)
    check(pid is not None, "no worker process found")
    batches_before = experiment(killed)["trials"][0]["batches_trained"]
    os.kill(pid, signal.SIGKILL)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"exit {process.returncode}:\n{out}\n{err}")
    trial = experiment(killed)["trials"][0]
    check(trial["restarts"] == 1, trial)
    check("SIGKILL" in err, err)
    # The run completed: its summary tells the restart as history, not as an error.
    summary = out[out.rfind("COMPLETED after"):]
    check("  error: " not in summary and "  restarted 1 time; the last failure: " in summary,
          summary)
    check(final_parameters(killed, BATCHES) == final_parameters(whole, BATCHES),
          f"rank {rank} killed after about {batches_before} batches: final parameters differ")
    print(f"rank {rank} killed after about {batches_before} batches; restarted and matched")

    orphaned = os.path.join(tmp, "orphaned")
    process = start("run", mlp_config(tmp, name="long", batches=10**6, period=10**6), "--output",
                    orphaned, *two_slots)
    wait_for(lambda: worker_pid(0, orphaned) and worker_pid(1, orphaned), what="both workers")
    process.kill()
    process.communicate()
    wait_for(lambda: worker_pid(0, orphaned) is None and worker_pid(1, orphaned) is None,
             timeout=10, what="the workers to die with their supervisor")
print("ok")
