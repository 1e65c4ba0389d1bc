"""A compressed trial stopped and resumed ends bitwise where an uninterrupted one does: every
rank's error-feedback residuals (top-k) and PowerSGD's warm-start factors and errors go into the
checkpoint (its "compression" file, one share per rank) and come back on the rank that saved
them. Two slots, stopped with Ctrl-C after the first checkpoint, continued with --resume."""
import os

from cohort_cli import *

BATCHES = 700
COMPRESSIONS = {
    "topk": "{type: topk, ratio: 0.1}",
    "powersgd": "{type: powersgd, rank: 2, start_iter: 20}",
}

with temp_dir() as tmp:
    for name, compression in COMPRESSIONS.items():
        text = read_bytes(mlp_config(tmp, name=name, batches=BATCHES, period=50,
                                     hidden_size=64)).decode()
        config = write_config(tmp, text + f"resources:\n  slots_per_trial: 2\n"
                              f"optimizations:\n  gradient_compression: {compression}\n",
                              file_name=f"{name}.yaml")
        a = os.path.join(tmp, f"{name}-a")
        code, out, err = run("run", config, "--output", a, "--cpu-slots", "2")
        check(code == 0, f"{name}: run A failed:\n{out}\n{err}")
        expected = final_parameters(a, BATCHES)

        b = os.path.join(tmp, f"{name}-b")
        stopped_at = run_stopped_at_checkpoint(config, b, "--cpu-slots", "2")
        check(0 < stopped_at < BATCHES, f"{name}: stopped at {stopped_at}")
        share = os.path.getsize(os.path.join(b, "checkpoints", f"trial-1-batch-{stopped_at}",
                                             "compression"))
        check(share > 0 and share % 2 == 0, f"{name}: compression file of {share} bytes")

        code, out, err = run("run", "--resume", b, "--cpu-slots", "2")
        check(code == 0, f"{name}: resume failed:\n{out}\n{err}")
        check(final_parameters(b, BATCHES) == expected,
              f"{name}: the resumed run's final parameters differ from the uninterrupted run's")
print("ok")
