"""What a plugin logs through its host (host_api.log) reaches its trial's log.txt once per line,
named by its rank and level: c_quadratic logs at its second training batch, on both ranks of a
2-slot trial."""
import os

from cohort_cli import *

with temp_dir() as tmp:
    config = write_config(tmp, f"""\
name: plugin-log
entrypoint: {os.path.join(PLUGINS, 'test', 'c_quadratic.so')}
hyperparameters:
  global_batch_size: 4
  learning_rate: 0.25
  log_batch: 2
resources:
  slots_per_trial: 2
searcher:
  name: single
  metric: loss
  max_length:
    batches: 4
max_restarts: 0
""")
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
