"""`cohort plugin check`: its gradient check allows for the rounding of a float32 loss (a correct
model whose loss is computed in float32 at a large magnitude passes, where a fixed absolute
tolerance failed it), still catches a wrong gradient, and takes its step, tolerances and number of
coordinates from flags, refusing a bad value by naming the flag."""
import os

from cohort_cli import *


def check_plugin(*args):
    return run("plugin", "check", *args, timeout=120)


# A correct gradient, its loss reported in float32 around 300: one unit in its last place is
# 3.1e-5, 0.015 over the 2e-3 of the central difference. With init 2.01 the first coordinate's
# gradient is 0.01 (2 is the mean target of the first 10 records): a loss change of 1e-5 over the
# step, below one unit, so the difference quotient is 0 or 0.015 and 2% of 0.01 cannot cover it.
code, out, err = check_plugin(os.path.join(PLUGINS, "test", "c_quadratic.so"),
                              "--hparam", "init=2.01", "--hparam", "float32_loss_offset=300")
check(code == 0 and "plugin check passed" in out, f"exit {code}:\n{out}\n{err}")
check("gradient check: step 0.001, tolerance 0.02 x the gradient + 0.0001 + the loss's rounding, "
      "6 coordinates per tensor" in out, out)

# Twice the true gradient is still caught, rounding allowance and all.
code, out, err = check_plugin(os.path.join(PLUGINS, "test", "defect_wrong_gradient.so"), "--hparam", "init=0.5",
                              "--hparam", "float32_loss_offset=300")
check(code == 1 and "plugin check FAILED" in out and "(allowed " in out, f"exit {code}:\n{out}\n{err}")

# A loss that is not finite (here one past float32's range) is named as the cause, before the
# gradient check that it makes fail.
code, out, err = check_plugin(os.path.join(PLUGINS, "test", "c_quadratic.so"),
                              "--hparam", "float32_loss_offset=1e39")
check(code == 1 and "train_batch's loss is inf, not finite: FAILED" in out
      and out.index("not finite: FAILED") < out.index("gradient check:"),
      f"a loss that is not finite: exit {code}:\n{out}\n{err}")

# An evaluate_batch that writes into the gradients is named.
code, out, err = check_plugin(os.path.join(PLUGINS, "test", "c_quadratic.so"),
                              "--hparam", "eval_writes_gradients=1")
check(code == 1 and "evaluate_batch leaves the gradients unchanged: FAILED" in out
      and "plugin check FAILED" in out, f"exit {code}:\n{out}\n{err}")

# A plugin that breaks gradients_ready's contract fails the check, though it drops the errors
# gradients_ready returns: a range reported twice, and a report from evaluate_batch (which the
# check's next train_batch names).
for flag, said in (("ready_twice", "range [2, 2+1) overlaps range [0, 3) reported ready before"),
                   ("ready_in_eval", "gradients_ready may only be called during train_batch")):
    code, out, err = check_plugin(os.path.join(PLUGINS, "test", "c_quadratic.so"),
                                  "--hparam", f"{flag}=1")
    check(code == 1 and said in err and "plugin check passed" not in out,
          f"{flag}: exit {code}:\n{out}\n{err}")

# A plugin whose train_batch never returns is killed at --timeout, and said so; what the check
# printed before the call stays on show.
code, out, err = check_plugin(os.path.join(PLUGINS, "test", "c_quadratic.so"),
                              "--hparam", "hang_batch=1", "--timeout", "1")
check(code == 1 and "did not finish its checks within 1 s (--timeout)" in err
      and "dataset: 10 training records" in out, f"a hanging plugin: exit {code}:\n{out}\n{err}")
# A plugin that ends the checking process itself (exit(0) in train_batch) fails the check, said
# so, rather than passing it without a verdict.
code, out, err = check_plugin(os.path.join(PLUGINS, "test", "c_quadratic.so"),
                              "--hparam", "exit_batch=1")
check(code == 1 and "ended the checking process itself (exit code 0)" in err
      and "plugin check passed" not in out, f"a plugin calling exit(0): exit {code}:\n{out}\n{err}")
code, out, err = check_plugin(os.path.join(PLUGINS, "test", "c_quadratic.so"), "--timeout", "-1")
check(code == 1 and "--timeout takes a number of 0 or more, not '-1'" in err,
      f"exit {code}:\n{out}\n{err}")

# ... and training clears what it wrote after each validation: the same parameters as without.
with temp_dir() as tmp:
    finals = []
    for writes in (0, 1):
        config = write_config(tmp, f"""\
name: eval-writes
entrypoint: {os.path.join(PLUGINS, "test", "c_quadratic.so")}
hyperparameters:
  global_batch_size: 4
  learning_rate: 0.1
  eval_writes_gradients: {writes}
searcher:
  name: single
  metric: loss
  max_length:
    batches: 12
min_validation_period:
  batches: 3
reproducibility:
  experiment_seed: 1
""", file_name=f"writes-{writes}.yaml")
        output = os.path.join(tmp, f"writes-{writes}")
        code, out, err = run("run", config, "--output", output)
        check(code == 0, f"exit {code}:\n{out}\n{err}")
        finals.append(final_parameters(output, 12))
    check(finals[0] == finals[1], "gradients evaluate_batch wrote joined the next step")

# The flags reach the check.
code, out, err = check_plugin("mlp", "--hparam", "hidden_size=8", "--step", "0.01",
                              "--tolerance", "0.05", "--abs-tolerance", "0.001",
                              "--coordinates", "3")
check(code == 0, f"exit {code}:\n{out}\n{err}")
check("gradient check: step 0.01, tolerance 0.05 x the gradient + 0.001 + the loss's rounding, "
      "3 coordinates per tensor" in out, out)
check("gradient check: 18 coordinates" in out, out)  # 3 per tensor, 6 tensors

for flag, value, said in (("--step", "0", "--step takes a number above 0, not '0'"),
                          ("--tolerance", "-1", "--tolerance takes a number of 0 or more"),
                          ("--abs-tolerance", "nan", "--abs-tolerance takes a number of 0 or more"),
                          ("--coordinates", "0", "--coordinates takes a positive integer")):
    code, out, err = check_plugin("mlp", flag, value)
    check(code != 0 and said in err, f"{flag} {value}: exit {code}:\n{out}\n{err}")
# A build tree copied elsewhere looks plugin names up in its own plugins folder, beside its binary
# (it used to look in the folder it was built in, and ran that build's plugin).
import shutil
import subprocess
with temp_dir() as tmp:
    copy = os.path.join(tmp, "copied-build")
    os.makedirs(os.path.join(copy, "harness", "cohort"))
    os.makedirs(os.path.join(copy, "plugins", "linreg"))
    shutil.copy2(COHORT, os.path.join(copy, "harness", "cohort", "cohort"))
    shutil.copy2(plugin("linreg"), os.path.join(copy, "plugins", "linreg", "linreg.so"))
    done = subprocess.run([os.path.join(copy, "harness", "cohort", "cohort"), "doctor"],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, COHORT_PLUGIN_PATH=""))
    text = done.stdout + done.stderr
    check(f"{copy}/plugins: 1 plugin(s)" in text and f"{PLUGINS}:" not in text,
          f"the copied build's plugin folders:\n{text}")

print("ok")
