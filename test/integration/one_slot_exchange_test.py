"""COHORT_EXCHANGE_AT_ONE_SLOT=1: a one-slot trial sends its gradients through a group of one rank
(Gloo here, NCCL on a GPU) and ends with bitwise the parameters of the same trial without it; its
training reports then time the exchange. Without the variable a one-slot trial has no exchange."""
import os

from cohort_cli import *

BATCHES = 60
VARIABLE = "COHORT_EXCHANGE_AT_ONE_SLOT"


def exchange_timed(run_dir):
    reports = [r for r in metrics(run_dir) if r["kind"] == "training"]
    check(reports, f"no training reports in {run_dir}")
    return all("exchange" in r["timings"] for r in reports)


with temp_dir() as tmp:
    config = mlp_config(tmp, batches=BATCHES, period=BATCHES)
    plain = os.path.join(tmp, "plain")
    os.environ.pop(VARIABLE, None)
    code, out, err = run("run", config, "--output", plain, "--cpu-slots", "1")
    check(code == 0, f"plain run failed:\n{out}\n{err}")
    check(not exchange_timed(plain), "a one-slot trial timed an exchange it does not have")

    exchanged = os.path.join(tmp, "exchanged")
    os.environ[VARIABLE] = "1"
    code, out, err = run("run", config, "--output", exchanged, "--cpu-slots", "1")
    del os.environ[VARIABLE]
    check(code == 0, f"run with the one-slot exchange failed:\n{out}\n{err}")
    check(exchange_timed(exchanged), "the one-slot exchange left no exchange timings")
    check(final_parameters(exchanged, BATCHES) == final_parameters(plain, BATCHES),
          "the one-slot exchange changed the parameters")
print("ok")
