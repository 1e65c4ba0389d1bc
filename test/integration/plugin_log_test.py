"""What a plugin logs through its host (host_api.log) reaches its trial's log.txt once per line,
named by its rank and level: c_quadratic logs at its second training batch, on both ranks of a
2-slot trial."""
import os

from cohort_cli import *

with temp_dir() as tmp:
    config = quadratic_config(tmp, "plugin-log", batches=4, hyperparameters={"log_batch": 2})
    folder = os.path.join(tmp, "run")
    code, out, err = run("run", config, "--output", folder, "--cpu-slots", "2")
    check(code == 0, f"exit {code}:\n{out}\n{err}")
    with open(os.path.join(folder, "trials", "1", "log.txt")) as f:
        log = f.read()
    for rank in (0, 1):
        line = f"[rank {rank}] info: a logged batch trained"
        check(log.count(line + "\n") == 1, f"'{line}' not once in:\n{log}")
    check("] [rank" not in log, f"a line named its rank twice:\n{log}")
print("ok")
