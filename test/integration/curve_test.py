"""CURVE on the orchestrator's channels, with real processes on loopback.

`cohort keygen` makes keys for the orchestrator, agent-1, agent-2, a stranger agent and a
client; the orchestrator runs with --curve always (its rendezvous listener included),
authorizing the two agents and the client:
- agent-1 with its key registers, and `cohort agent list` with the client's key shows it;
- the stranger's agent never appears, the orchestrator's log names the refused key, and the
  stranger's own log says at once that its key was refused;
- `cohort submit` without a key gets no answer, and the error hints at CURVE;
- with the client's key (from the environment) the experiment is submitted under the client's
  name and completes: its trial has 2 ranks on two 1-slot agents, whose workers meet at the
  rendezvous over CURVE with their agent's keys, and no refusal names the rendezvous or their keys.
"""
import os
import re
import shutil
import socket
import subprocess
import time

from cohort_cli import *


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keygen(folder, name):
    code, out, err = run("keygen", "--out", folder, "--name", name, timeout=30)
    check(code == 0, f"cohort keygen --name {name} failed ({code}):\n{out}\n{err}")
    public_key = out.split()[0]
    check(len(public_key) == 40, out)
    return public_key


def read(path):
    with open(path) as f:
        return f.read()


with temp_dir() as tmp:
    keys = os.path.join(tmp, "keys")
    authorized = os.path.join(tmp, "authorized")
    os.makedirs(authorized)
    orchestrator_key = keygen(keys, "orchestrator")
    agent_keys = [keygen(keys, "agent-1"), keygen(keys, "agent-2")]
    stranger_key = keygen(keys, "agent-9")
    keygen(keys, "alice")
    for name in ("agent-1", "agent-2", "alice"):
        shutil.copy(os.path.join(keys, name + ".pub"), authorized)

    agent_endpoint = f"tcp://127.0.0.1:{free_port()}"
    client_endpoint = f"tcp://127.0.0.1:{free_port()}"
    rendezvous_endpoint = f"tcp://127.0.0.1:{free_port()}"
    orchestrator_pub = os.path.join(keys, "orchestrator.pub")
    log_path = os.path.join(tmp, "orchestrator.log")
    processes = []

    def start_logged(log_name, *args):
        with open(os.path.join(tmp, log_name), "w") as log:
            process = subprocess.Popen([COHORT, *args], stdout=log, stderr=subprocess.STDOUT)
        processes.append(process)
        return process

    def agent(agent_id, key_name):
        return start_logged(agent_id + ".log", "agent", "--orchestrator", agent_endpoint,
                            "--id", agent_id, "--slots", "1",
                            "--work-dir", os.path.join(tmp, agent_id),
                            "--key", os.path.join(keys, key_name + ".key"),
                            "--orchestrator-key", orchestrator_pub)

    client_env = dict(os.environ, COHORT_KEY=os.path.join(keys, "alice.key"),
                      COHORT_ORCHESTRATOR_KEY=orchestrator_key)

    def cli(*args, env=client_env, timeout=60):
        result = subprocess.run([COHORT, *args, "--orchestrator", client_endpoint],
                                capture_output=True, text=True, timeout=timeout, env=env)
        return result.returncode, result.stdout, result.stderr

    def must(*args):
        code, out, err = cli(*args)
        check(code == 0, f"cohort {' '.join(args)} failed ({code}):\n{out}\n{err}")
        return out

    try:
        start_logged("orchestrator.log", "orchestrator", "--listen", agent_endpoint,
                     "--client-listen", client_endpoint,
                     "--rendezvous-listen", rendezvous_endpoint, "--state-dir",
                     os.path.join(tmp, "state"), "--curve", "always",
                     "--key", os.path.join(keys, "orchestrator.key"),
                     "--authorized-keys", authorized)

        # The authorized agents register; the client sees them over CURVE.
        agent("agent-1", "agent-1")
        agent("agent-2", "agent-2")
        wait_for(lambda: "agent-1" in cli("agent", "list")[1], 30, "agent-1 to register")
        wait_for(lambda: "agent-2" in cli("agent", "list")[1], 30, "agent-2 to register")
        check("rendezvous listener: CURVE" in read(log_path), read(log_path))

        # A key the orchestrator does not know: refused during the handshake, and logged.
        agent("agent-9", "agent-9")
        wait_for(lambda: stranger_key in read(log_path), 30, "the stranger's refusal in the log")
        check("not authorized" in read(log_path), read(log_path))
        time.sleep(1)
        check("agent-9" not in must("agent", "list"), must("agent", "list"))
        # The stranger is told at once, not after its 30 s of silence.
        wait_for(lambda: "refused this agent: it refused the handshake (authentication: this "
                 "side's key, --key, is not among those it authorizes" in
                 read(os.path.join(tmp, "agent-9.log")), 10, "the stranger told of its refusal")

        # Two ranks, one on each agent: they meet at the orchestrator's rendezvous.
        config = mlp_config(tmp, name="curve-mlp", batches=60, period=30)
        with open(config, "a") as f:
            f.write("resources:\n  slots_per_trial: 2\n")

        # No key: the orchestrator never answers, and the error says why that may be.
        plain_env = {k: v for k, v in os.environ.items()
                     if k not in ("COHORT_KEY", "COHORT_ORCHESTRATOR_KEY")}
        code, out, err = cli("submit", config, env=plain_env)
        check(code == 1, f"a submit without a key should fail ({code}):\n{out}\n{err}")
        check("the orchestrator may require CURVE: give --key and --orchestrator-key" in err, err)

        # With the client's key: submitted under its name, and it completes.
        out = must("submit", config)
        found = re.search(r"experiment (\d+) submitted", out)
        check(found is not None, out)
        experiment_id = found.group(1)
        wait_for(lambda: f"client 'alice' submitted experiment {experiment_id}" in read(log_path),
                 30, "the submission under the client's name in the log")

        def state():
            for line in must("experiment", "list").splitlines():
                fields = line.split()
                if fields and fields[0] == experiment_id:
                    return fields[2].lower()
            return ""

        wait_for(lambda: state() in ("completed", "error", "stopped"), 240,
                 "the experiment to end")
        agent_logs = "".join(read(os.path.join(tmp, f"agent-{i}.log")) for i in (1, 2))
        check(state() == "completed", read(log_path) + agent_logs)
        refusals = [line for line in read(log_path).splitlines() if "refused" in line]
        for name in [rendezvous_endpoint] + agent_keys:
            check(not any(name in line for line in refusals), "\n".join(refusals))
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.time() + 20
        for process in reversed(processes):
            try:
                process.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

print("ok")
