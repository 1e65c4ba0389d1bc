"""A cluster on loopback for the integration tests: `cohort orchestrator` and agents as real
processes, driven through the real CLI. Stopped (SIGTERM, then SIGKILL) when the `with` ends.

    with temp_dir() as tmp, Cluster(tmp) as cluster:
        cluster.add_agent("agent-1", 2)            # env={...}: variables for that agent alone
        experiment_id = cluster.submit(config_path)
        cluster.wait_ended(experiment_id)          # "completed", "error" or "stopped"

two_agent_cluster(folder) starts an orchestrator and two GPU agents that NCCL takes for two
machines (each with its own NCCL_HOSTID); live_task_agents() tells which agents a running task is
on.
"""
import json
import os
import re
import socket
import subprocess
import time

from cohort_cli import COHORT, check, default_hangup, plugin, run, signal, wait_for, write_config


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, tmp, *orchestrator_extra, wrapper=()):
        """WRAPPER: a command every process of the cluster is started under (("nohup",), say)."""
        self.tmp = tmp
        self.wrapper = tuple(wrapper)
        self.agent_endpoint = f"tcp://127.0.0.1:{free_port()}"
        self.client_endpoint = f"tcp://127.0.0.1:{free_port()}"
        self.rendezvous_endpoint = f"tcp://127.0.0.1:{free_port()}"
        self.state = os.path.join(tmp, "state")
        self.log_path = os.path.join(tmp, "orchestrator.log")
        self.agents = []
        self.processes = []
        self.orchestrator_args = ["orchestrator", "--listen", self.agent_endpoint,
                                  "--client-listen", self.client_endpoint,
                                  "--rendezvous-listen", self.rendezvous_endpoint,
                                  "--state-dir", self.state, *orchestrator_extra]
        self.orchestrator = self._start(self.log_path, *self.orchestrator_args)

    def crash_and_restart_orchestrator(self):
        """Kills the orchestrator (SIGKILL: nothing saved on the way out) and starts a new one on
        the same endpoints and state directory; its output goes on in the same log."""
        self.crash_orchestrator()
        self.restart_orchestrator()

    def crash_orchestrator(self):
        """Kills the orchestrator (SIGKILL); the agents and their workers go on without it."""
        self.orchestrator.kill()
        self.orchestrator.wait()

    def restart_orchestrator(self):
        """Starts an orchestrator again on the same endpoints and state directory, and waits
        until it answers its clients."""
        self.orchestrator = self._start(self.log_path, *self.orchestrator_args, append=True)
        wait_for(lambda: self.cli("experiment", "list")[0] == 0, 30, "the orchestrator")

    def _start(self, log_path, *args, append=False, env=None):
        """Starts `cohort ARGS...`, its output to LOG_PATH, in this process's environment plus
        ENV (a dict, or None)."""
        with open(log_path, "a" if append else "w") as log:
            process = subprocess.Popen([*self.wrapper, COHORT, *args], stdout=log,
                                       stderr=subprocess.STDOUT, preexec_fn=default_hangup,
                                       env=dict(os.environ, **env) if env else None)
        self.processes.append(process)
        return process

    def add_agent(self, agent_id, slots, *extra, env=None):
        """Starts an agent, waits until `cohort agent list` shows it, and returns its process.
        ENV: variables added to this process's environment for that agent alone (and so for
        its workers, which inherit it)."""
        process = self._start(os.path.join(self.tmp, agent_id + ".log"), "agent",
                    "--orchestrator", self.agent_endpoint, "--id", agent_id,
                    "--slots", str(slots), "--work-dir", os.path.join(self.tmp, agent_id), *extra,
                    env=env)
        self.agents.append(agent_id)
        wait_for(lambda: agent_id in self.cli("agent", "list")[1], 30, f"{agent_id} to register")
        return process

    def cli(self, *args):
        """`cohort ARGS... --orchestrator <client endpoint>`: (exit code, stdout, stderr)."""
        return run(*args, "--orchestrator", self.client_endpoint, timeout=60)

    def must(self, *args):
        code, out, err = self.cli(*args)
        check(code == 0, f"cohort {' '.join(args)} failed ({code}):\n{out}\n{err}")
        return out

    def submit(self, config):
        out = self.must("submit", config)
        found = re.search(r"experiment (\d+) submitted", out)
        check(found is not None, out)
        return int(found.group(1))

    def state_of(self, experiment_id):
        out = self.must("experiment", "list")
        for line in out.splitlines():
            fields = line.split()
            if fields and fields[0] == str(experiment_id):
                return fields[2].lower()
        raise AssertionError(f"experiment {experiment_id} not listed:\n{out}")

    def wait_ended(self, experiment_id, timeout=300):
        wait_for(lambda: self.state_of(experiment_id) in ("completed", "error", "stopped"),
                 timeout, f"experiment {experiment_id} to end")
        return self.state_of(experiment_id)

    def first_trial(self, experiment_id):
        """The id of the experiment's first trial, as `experiment describe --json` gives it."""
        described = json.loads(self.must("experiment", "describe", str(experiment_id), "--json"))
        return described["trials"][0]["id"]

    def task_rows(self):
        """(task, experiment, trial, slots, state, agents and reason) per `cohort task list` row."""
        rows = []
        for line in self.must("task", "list").splitlines()[1:]:
            fields = line.split(None, 5)
            if len(fields) >= 5 and fields[0].isdigit():
                rows.append(fields + [""] * (6 - len(fields)))
        return rows

    def live_task_agents(self):
        """The AGENTS column (comma-separated agent ids) of every starting or running row of
        `cohort task list`."""
        return [row[5].split()[0] for row in self.task_rows()
                if row[4].lower() in ("starting", "running") and row[5].strip()]

    def log(self):
        """The orchestrator's output."""
        with open(self.log_path) as f:
            return f.read()

    def logs(self):
        """The orchestrator's and the agents' output, for failure messages."""
        text = []
        for path in [self.log_path] + [os.path.join(self.tmp, a + ".log") for a in self.agents]:
            with open(path) as f:
                text.append(f"--- {os.path.basename(path)}\n{f.read()}")
        return "\n".join(text)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.time() + 20
        for process in reversed(self.processes):
            try:
                process.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


RATE_GRID = """\
name: {name}
entrypoint: {entrypoint}
hyperparameters:
  global_batch_size: 16
  optimizer: sgd
  learning_rate:
    type: categorical
    vals: {rates}
  hidden_size: 16
  hidden_layers: 1
  synthetic_train_records: 1024
  synthetic_validation_records: 128
resources:
  slots_per_trial: 1
searcher:
  name: grid
  metric: accuracy
  smaller_is_better: false
  max_length:
    batches: {batches}
min_validation_period:
  batches: {validation_period}
{checkpoint_period}scheduling_unit: {scheduling_unit}
max_restarts: 0
reproducibility:
  experiment_seed: 3
"""


def two_rate_grid(folder, name, batches, validation_period, scheduling_unit,
                  checkpoint_period=None, rates=(0.01, 0.05)):
    """Writes FOLDER/NAME.yaml (NAME's other characters than letters, digits, '.' and '-' as
    '_'): a grid of 1-slot trials of the mlp example, one per learning rate of RATES (two by
    default), training BATCHES batches, validated every VALIDATION_PERIOD batches and checkpointed
    every CHECKPOINT_PERIOD (none: at the end only); returns its path."""
    text = RATE_GRID.format(
        name=name, entrypoint=plugin("mlp"), rates=list(rates), batches=batches,
        validation_period=validation_period,
        scheduling_unit=scheduling_unit,
        checkpoint_period=(f"min_checkpoint_period:\n  batches: {checkpoint_period}\n"
                           if checkpoint_period else ""))
    return write_config(folder, text, file_name=re.sub(r"[^\w.-]", "_", name) + ".yaml")


def two_agent_cluster(folder):
    """A Cluster in FOLDER (made if missing) with two agents offering the machine's GPUs
    (`--slots auto`): agent-a with NCCL_HOSTID=host-a and agent-b with NCCL_HOSTID=host-b, which
    their workers inherit, so that NCCL takes the two agents for two machines even on one GPU.
    Everything started is stopped again if an agent fails to register."""
    os.makedirs(folder, exist_ok=True)
    cluster = Cluster(folder)
    try:
        for agent_id, host_id in (("agent-a", "host-a"), ("agent-b", "host-b")):
            cluster.add_agent(agent_id, "auto", env={"NCCL_HOSTID": host_id})
    except BaseException:
        cluster.__exit__(None, None, None)
        raise
    return cluster
