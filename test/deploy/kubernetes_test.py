"""deploy/kubernetes/cohort-launch.yaml, run as its pods would run, on this machine: each rank's
command (the container's `sh -c` line) with the container's variables and the pod's completion
index, both ranks at once. What a cluster provides is stood in for: rank 0's Service name by
127.0.0.1 (it resolves only inside the cluster), its port by a free one, the mounted ConfigMap,
Secret and volume by folders (the Secret's keys made by `cohort keygen --launch 2`, mode 0400 as
the manifest mounts them). Both ranks exit 0 and the trial completes. Also: the variables are the
ones `cohort launch` reads under torchrun (launch_test.py sets the same), and the Dockerfile
installs what scripts/install-deps does.

Usage: kubernetes_test.py COHORT_EXE PLUGIN_DIR SOURCE_ROOT
"""
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile

COHORT, PLUGINS, ROOT = sys.argv[1:4]
MANIFEST = os.path.join(ROOT, "deploy", "kubernetes", "cohort-launch.yaml")
DOCKERFILE = os.path.join(ROOT, "deploy", "kubernetes", "Dockerfile")
TORCHRUN_VARIABLES = {"WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"}  # and RANK


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


text = open(MANIFEST).read()
command = re.search(r"args:\n\s+- (.+)\n", text).group(1)
variables = dict(re.findall(r'- name: (\w+)\n\s+value: "([^"]*)"', text))
check(set(variables) == TORCHRUN_VARIABLES, f"the container's variables: {variables}")
check(command.startswith("RANK=$JOB_COMPLETION_INDEX exec cohort launch "), command)
check("completionMode: Indexed" in text and "clusterIP: None" in text, "not an Indexed Job "
      "with a headless Service")
check("scripts/install-deps" in open(DOCKERFILE).read(), "the Dockerfile does not run "
      "scripts/install-deps")

with tempfile.TemporaryDirectory(prefix="cohort-k8s-") as tmp:
    config, keys, runs = (os.path.join(tmp, name) for name in ("config", "keys", "runs"))
    os.makedirs(config)
    os.makedirs(runs)
    with open(os.path.join(config, "experiment.yaml"), "w") as f:
        f.write(f"""\
name: k8s-mlp
entrypoint: {os.path.join(PLUGINS, "mlp", "mlp.so")}
hyperparameters:
  global_batch_size: 16
  hidden_size: 16
  learning_rate: 0.05
  synthetic_train_records: 1024
searcher:
  name: single
  metric: loss
  max_length:
    batches: 60
min_checkpoint_period:
  batches: 30
scheduling_unit: 30
""")
    made = subprocess.run([COHORT, "keygen", "--out", keys, "--launch", "2"],
                          capture_output=True, text=True, timeout=60)
    check(made.returncode == 0, made.stderr)
    for name in os.listdir(keys):
        os.chmod(os.path.join(keys, name), stat.S_IRUSR)
    bin_dir = os.path.join(tmp, "bin")  # `cohort` on PATH, as in the image
    os.makedirs(bin_dir)
    os.symlink(os.path.abspath(COHORT), os.path.join(bin_dir, "cohort"))
    local = (command.replace("/config/", config + "/").replace("/keys", keys)
             .replace("/runs/", runs + "/"))
    port = str(free_port())
    ranks = []
    for index in (0, 1):
        env = {k: v for k, v in os.environ.items()
               if k not in TORCHRUN_VARIABLES | {"RANK", "TORCHELASTIC_USE_AGENT_STORE"}}
        env.update(variables, JOB_COMPLETION_INDEX=str(index), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, PATH=bin_dir + os.pathsep + env.get("PATH", ""))
        ranks.append(subprocess.Popen(["sh", "-c", local], env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for index, rank in enumerate(ranks):
        out, err = rank.communicate(timeout=240)
        check(rank.returncode == 0, f"pod {index} exited {rank.returncode}:\n{out}\n{err}")
    run_dir = os.path.join(runs, "mlp")
    with open(os.path.join(run_dir, "experiment.json")) as f:
        record = json.load(f)
    check(record["state"] == "COMPLETED", record)
    shutil.rmtree(keys, ignore_errors=True)
print("ok: the manifest's command and variables trained both ranks")
