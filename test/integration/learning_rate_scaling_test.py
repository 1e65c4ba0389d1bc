"""optimizations.learning_rate_scaling on a 2-slot `cohort run` of the mlp example: `linear` with
learning_rate 0.05 says in the trial's log that it trains at 0.1, and ends bitwise where a run
with learning_rate 0.1 and no scaling does; `sqrt` from a reference of 8 slots scales by
sqrt(2/8) = 0.5 and matches learning_rate 0.025 bitwise the same way. A resume at another slot
count is refused while the rate follows the slots, naming the key, and the folder is unchanged."""
import os

from cohort_cli import *

BATCHES = 200


def two_slot_run(tmp, name, learning_rate, scaling=""):
    text = read_bytes(mlp_config(tmp, name=name, batches=BATCHES, period=100)).decode()
    text = text.replace("learning_rate: 0.05", f"learning_rate: {learning_rate}")
    text += "resources:\n  slots_per_trial: 2\n"
    if scaling:
        text += f"optimizations:\n{scaling}"
    folder = os.path.join(tmp, name)
    code, out, err = run("run", write_config(tmp, text, file_name=name + ".yaml"), "--output",
                         folder, "--cpu-slots", "2")
    check(code == 0, f"{name} failed:\n{out}\n{err}")
    return folder


def log_of(folder):
    with open(os.path.join(folder, "trials", "1", "log.txt")) as f:
        return f.read()


with temp_dir() as tmp:
    linear = two_slot_run(tmp, "linear", 0.05, "  learning_rate_scaling: linear\n")
    check("learning rate 0.05, scaled linear from 1 to 2 slots: 0.1" in log_of(linear),
          log_of(linear))
    plain = two_slot_run(tmp, "plain", 0.1)
    check(final_parameters(linear, BATCHES) == final_parameters(plain, BATCHES),
          "linear scaling of 0.05 at 2 slots is not the same training as 0.1")

    root = two_slot_run(tmp, "root", 0.05, "  learning_rate_scaling: sqrt\n"
                        "  learning_rate_reference_slots: 8\n")
    check("learning rate 0.05, scaled sqrt from 8 to 2 slots: 0.025" in log_of(root),
          log_of(root))
    quarter = two_slot_run(tmp, "quarter", 0.025)
    check(final_parameters(root, BATCHES) == final_parameters(quarter, BATCHES),
          "sqrt scaling of 0.05 from 8 to 2 slots is not the same training as 0.025")

    before = folder_bytes(linear)
    code, out, err = run("run", "--resume", linear, "--cpu-slots", "2", "--set",
                         "resources.slots_per_trial=1")
    check(code != 0 and "optimizations.learning_rate_scaling linear would change the learning "
          "rate with the slots" in err, f"{code}\n{out}\n{err}")
    check(folder_bytes(linear) == before, "the refused resume changed the run folder")
print("ok")
