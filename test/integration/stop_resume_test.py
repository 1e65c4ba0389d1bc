"""Stopping a run and resuming it gives bitwise the same final parameters as never stopping, both
for a Ctrl-C (the worker checkpoints and stops) and for a worker killed outright (the supervisor
restarts it from the latest checkpoint). A closed terminal (SIGHUP) stops the run as Ctrl-C does,
and output whose reader went away (`cohort run ... | head`) does not stop it at all."""
import os
import signal

from cohort_cli import *

BATCHES = interruptible(2000)
HIDDEN = 128  # slow enough per batch to be interrupted mid-way


def started_to_first_checkpoint(config, folder, name):
    """`cohort run` of `config` into `folder`, once it has written its first checkpoint."""
    process = start("run", config, "--output", folder)
    wait_for(lambda: experiment(folder)["trials"][0]["checkpoints"],
             what=f"{name}'s first checkpoint")
    return process


def stopped_by(signal_number, config, folder, name):
    """The run stopped by `signal_number` after its first checkpoint, as a stop ends it (exit
    130, STOPPED); its stdout."""
    process = started_to_first_checkpoint(config, folder, name)
    process.send_signal(signal_number)
    out, err = process.communicate(timeout=120)
    check(process.returncode == 130,
          f"{name}: the stopped run exited {process.returncode}:\n{out}\n{err}")
    check(experiment(folder)["state"] == "STOPPED", experiment(folder))
    return out


with temp_dir() as tmp:
    config = mlp_config(tmp, batches=BATCHES, period=50, hidden_size=HIDDEN, max_restarts=1)

    # A: uninterrupted.
    a = os.path.join(tmp, "a")
    code, out, err = run("run", config, "--output", a)
    check(code == 0, f"run A failed:\n{out}\n{err}")
    expected = final_parameters(a, BATCHES)

    # B: Ctrl-C after the first checkpoint, then --resume.
    b = os.path.join(tmp, "b")
    out = stopped_by(signal.SIGINT, config, b, "B")
    stopped_at = experiment(b)["trials"][0]["batches_trained"]
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
    process = started_to_first_checkpoint(config, c, "C")
    kill_the_worker(c)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"restarted run exited {process.returncode}:\n{out}\n{err}")
    check("signal 9" in err and "restart 1 of 1" in err, err)
    state = experiment(c)
    check(state["trials"][0]["restarts"] == 1, state)
    check(final_parameters(c, BATCHES) == expected, "C's final parameters differ from A's")

    # D: the terminal closes (SIGHUP): a stop as Ctrl-C's, which a resume continues.
    d = os.path.join(tmp, "d")
    stopped_by(signal.SIGHUP, config, d, "D")
    code, out, err = run("run", "--resume", d)
    check(code == 0 and final_parameters(d, BATCHES) == expected,
          f"D resumed after SIGHUP: exit {code}, or its final parameters differ from A's:\n{err}")

    # E: the reader of its output ends (a pipe into `head`): the run trains on to its end, as
    # its run folder records, instead of ending at its next line of output.
    e = os.path.join(tmp, "e")
    process = started_to_first_checkpoint(config, e, "E")
    process.stdout.close()
    process.stderr.close()
    check(process.wait(timeout=300) == 0, f"with its output closed, the run exited "
          f"{process.returncode}")
    check(experiment(e)["state"] == "COMPLETED", experiment(e))
    check(final_parameters(e, BATCHES) == expected, "E's final parameters differ from A's")
    # F: `cohort run` itself SIGKILLed before its first checkpoint: nothing to go on from, so the
    # resume trains from batch 0 again, saying so (its record is fresh; metrics.jsonl tells).
    f = os.path.join(tmp, "f")
    unsaved = mlp_config(tmp, name="unsaved", batches=1000, period=1000, file_name="unsaved.yaml")
    with open(unsaved) as config_file:
        paced = config_file.read().replace("hyperparameters:\n",
                                           "hyperparameters:\n  slow_rank: 0\n  slow_rank_ms: 2\n")
    write_config(tmp, paced, file_name="unsaved.yaml")
    process = start("run", unsaved, "--output", f)
    wait_for(lambda: metrics(f), what="F's first training report")
    process.kill()
    process.communicate(timeout=60)
    code, out, err = run("run", "--resume", f)
    check(code == 0 and "batches but keeps no checkpoint" in err and
          "it trains again from batch 0" in err, f"F resumed: exit {code}\n{err}")
print("ok")
