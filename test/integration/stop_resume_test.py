"""Stopping a run and resuming it gives bitwise the same final parameters as never stopping, both
for a Ctrl-C (the worker checkpoints and stops) and for a worker killed outright (the supervisor
restarts it from the latest checkpoint). A closed terminal (SIGHUP) stops the run as Ctrl-C does,
and output whose reader went away (`cohort run ... | head`) does not stop it at all."""
import os
import signal

from cohort_cli import *

BATCHES = interruptible(2000)
HIDDEN = 128  # slow enough per batch to be interrupted mid-way

with temp_dir() as tmp:
    config = mlp_config(tmp, batches=BATCHES, period=50, hidden_size=HIDDEN, max_restarts=1)

    # A: uninterrupted.
    a = os.path.join(tmp, "a")
    code, out, err = run("run", config, "--output", a)
    check(code == 0, f"run A failed:\n{out}\n{err}")
    expected = final_parameters(a, BATCHES)

    # B: Ctrl-C after the first checkpoint, then --resume.
    b = os.path.join(tmp, "b")
    process = start("run", config, "--output", b)
    wait_for(lambda: experiment(b)["trials"][0]["checkpoints"], what="B's first checkpoint")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    check(process.returncode == 130, f"stopped run exited {process.returncode}:\n{out}\n{err}")
    stopped = experiment(b)
    check(stopped["state"] == "STOPPED", stopped)
    stopped_at = stopped["trials"][0]["batches_trained"]
    check(0 < stopped_at < BATCHES, f"stopped at {stopped_at}")
    check(f"--resume {b}" in out, out)

    code, out, err = run("run", "--resume", b)
    check(code == 0, f"resume failed:\n{out}\n{err}")
    check("resuming from checkpoint trial-1-batch-" in err, err)
    check(experiment(b)["state"] == "COMPLETED", experiment(b))
    check(final_parameters(b, BATCHES) == expected, "B's final parameters differ from A's")
    batches = [r["batches"] for r in metrics(b) if r["kind"] == "validation"]
    check(batches == sorted(set(batches)), f"validation reports repeated: {batches}")

    # C: the worker is killed (SIGKILL) mid-way; max_restarts 1 restarts it from its checkpoint.
    c = os.path.join(tmp, "c")
    process = start("run", config, "--output", c)
    wait_for(lambda: experiment(c)["trials"][0]["checkpoints"], what="C's first checkpoint")
    kill_the_worker(c)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"restarted run exited {process.returncode}:\n{out}\n{err}")
    check("signal 9" in err and "restart 1 of 1" in err, err)
    state = experiment(c)
    check(state["trials"][0]["restarts"] == 1, state)
    check(final_parameters(c, BATCHES) == expected, "C's final parameters differ from A's")

    # D: the terminal closes (SIGHUP): a stop as Ctrl-C's, which a resume continues.
    d = os.path.join(tmp, "d")
    process = start("run", config, "--output", d)
    wait_for(lambda: experiment(d)["trials"][0]["checkpoints"], what="D's first checkpoint")
    process.send_signal(signal.SIGHUP)
    out, err = process.communicate(timeout=120)
    check(process.returncode == 130, f"SIGHUP: the run exited {process.returncode}:\n{out}\n{err}")
    check(experiment(d)["state"] == "STOPPED", experiment(d))
    code, out, err = run("run", "--resume", d)
    check(code == 0 and final_parameters(d, BATCHES) == expected,
          f"D resumed after SIGHUP: exit {code}, or its final parameters differ from A's:\n{err}")

    # E: the reader of its output ends (a pipe into `head`): the run trains on to its end, as
    # its run folder records, instead of ending at its next line of output.
    e = os.path.join(tmp, "e")
    process = start("run", config, "--output", e)
    wait_for(lambda: experiment(e)["trials"][0]["checkpoints"], what="E's first checkpoint")
    process.stdout.close()
    process.stderr.close()
    check(process.wait(timeout=300) == 0, f"with its output closed, the run exited "
          f"{process.returncode}")
    check(experiment(e)["state"] == "COMPLETED", experiment(e))
    check(final_parameters(e, BATCHES) == expected, "E's final parameters differ from A's")
print("ok")
