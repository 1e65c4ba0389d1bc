"""`cohort launch` under a cluster's launcher, played here by this script: two plain processes
started with the variables torchrun, Slurm's srun or Open MPI's mpirun set, on loopback (under
torchrun with MASTER_PORT held, as torchrun's agent holds it for its store).

- With each launcher's variables, the two ranks train a 2-slot trial bitwise equal to
  `cohort run` of the same config at 2 slots (the final checkpoint's parameters), and both exit 0;
  rank 0's run folder holds the experiment.
- Ranks meeting at an address of this machine other than loopback, as ranks on several machines
  do: refused without the job's keys (naming --keys), bitwise equal with the keys of `cohort
  keygen --launch 2`, every listener on CURVE. Skipped where this machine has only loopback.
- A grid of two trials runs both on the same two ranks.
- A variable missing is an error naming it, and no run folder is made; so is rank 0's port held
  by another job.
- A rank's worker killed mid-way fails the job (max_restarts is the launcher's: both ranks exit
  1); launched again on the same run folder, as torchrun restarts a job, the trial continues from
  its latest checkpoint and ends bitwise equal to the uninterrupted run.
- Launched again with another learning rate, rank 0 refuses, naming the setting, and the run
  folder is left byte for byte as it was.
- Rank 1's whole `cohort launch` killed mid-way (its worker with it): rank 0 says it lost rank 1,
  waits --join-timeout for it to join again, then fails naming it (it used to wait for good).
- Processes joining a job that trains are refused and the job goes on: one as a rank outside its
  world at once, one started as rank 1 a second time after 30 s unheard, each saying why.
- Rank 1's launch held (SIGSTOP, as a host gone silent) and rank 1 started again: rank 0 drops
  the silent connection and trains on with the new rank 1.
- Ranks that contradict each other fail the job, saying how: another world size, another
  experiment or --set, a rank outside the world, a config rank 1 cannot read (each used to train
  as rank 0 said, or wait out the join timeout).
"""
import os
import re
import signal
import socket
import subprocess
import time

from cohort_cli import *
from cluster import free_port

BATCHES = interruptible(300)
PERIOD = BATCHES // 3


def this_machines_address():
    """An IPv4 address of this machine other than loopback (the source of its default route; no
    packet is sent), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def launcher_variables(launcher, rank, port, address):
    """The variables `launcher` would set for `rank` of 2 on this machine, rank 0 at
    `address`:`port`."""
    if launcher == "torchrun":
        return {"RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": str(rank),
                "MASTER_ADDR": address, "MASTER_PORT": str(port),
                "TORCHELASTIC_USE_AGENT_STORE": "True"}
    if launcher == "slurm":
        return {"SLURM_PROCID": str(rank), "SLURM_NTASKS": "2", "SLURM_LOCALID": str(rank),
                "SLURM_JOB_NODELIST": "localhost", "SLURM_JOB_ID": "4242",
                "MASTER_PORT": str(port)}
    return {"OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": "2",
            "OMPI_COMM_WORLD_LOCAL_RANK": str(rank), "MASTER_ADDR": address,
            "MASTER_PORT": str(port)}


LAUNCHER_NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                  "TORCHELASTIC_USE_AGENT_STORE", "COHORT_LAUNCH_PORT",
                  "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_NODELIST",
                  "SLURM_JOB_ID", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                  "OMPI_COMM_WORLD_LOCAL_RANK")


def environment(variables):
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_NAMES}
    env.update(variables)
    # The ranks' scratch folders (kept when a rank fails) go with the test's own.
    env["TMPDIR"] = SCRATCH
    return env


# What torchrun's agent holds on rank 0's host: its store's listening socket at MASTER_PORT.
torchrun_store = None


def free_port_pair():
    """A free port P whose next port is free too: under torchrun, rank 0 serves at P + 1, beside
    the launcher's store at P."""
    while True:
        port = free_port()
        with socket.socket() as next_port:
            try:
                next_port.bind(("127.0.0.1", port + 1))
                return port
            except OSError:
                continue


def launch(launcher, config, output, *extra, address="127.0.0.1", rank_1=None, port=None):
    """Starts both ranks as `launcher` would, rank 0 at `address`:`port` (a free one if None);
    returns the two processes, rank 0 first. Under torchrun, MASTER_PORT is taken, as torchrun's
    agent takes it for its store. `rank_1`: what rank 1 is given otherwise, as {"variables":
    {...}, "config": path, "extra": [...]}."""
    global torchrun_store
    if port is None:
        port = free_port_pair() if launcher == "torchrun" else free_port()
    if launcher == "torchrun":
        if torchrun_store is not None:
            torchrun_store.close()
        torchrun_store = socket.socket()
        torchrun_store.bind(("127.0.0.1", port))
        torchrun_store.listen()
    ranks = []
    for rank in (0, 1):
        changed = (rank_1 or {}) if rank == 1 else {}
        variables = dict(launcher_variables(launcher, rank, port, address),
                         **changed.get("variables", {}))
        ranks.append(subprocess.Popen(
            [COHORT, "launch", changed.get("config", config), "--output", output, *extra,
             *changed.get("extra", [])],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=environment(variables)))
    return ranks


def children(pid):
    """The pids of the processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
            found.append(int(entry))
    return found


def finish(ranks, timeout=300):
    """Waits for the ranks: [(exit status, stdout, stderr)], rank 0 first."""
    results = []
    for process in ranks:
        out, err = process.communicate(timeout=timeout)
        results.append((process.returncode, out, err))
    return results



with temp_dir() as tmp:
    SCRATCH = tmp
    config = mlp_config(tmp, name="launched", batches=BATCHES, period=PERIOD)
    reference = os.path.join(tmp, "reference")
    code, out, err = run("run", config, "--output", reference, "--cpu-slots", "2",
                         "--set", "resources.slots_per_trial=2")
    check(code == 0, f"the reference run failed:\n{out}\n{err}")
    expected = final_parameters(reference, BATCHES)

    for launcher in ("torchrun", "slurm", "mpirun"):
        output = os.path.join(tmp, launcher)
        results = finish(launch(launcher, config, output))
        for rank, (code, out, err) in enumerate(results):
            check(code == 0, f"{launcher}: rank {rank} exited {code}:\n{out}\n{err}")
        check(f"rank 0 of 2 ({launcher})" in results[0][2], results[0][2])
        check(experiment(output)["state"] == "COMPLETED", experiment(output))
        check(final_parameters(output, BATCHES) == expected,
              f"{launcher}: the launched trial's final parameters differ from `cohort run`'s")
        print(f"{launcher}: 2 ranks, bitwise equal to cohort run at 2 slots")

    # Ranks meeting at an address of this machine other than loopback, as on several machines:
    # refused without the job's keys, bitwise equal with them (every listener on CURVE).
    address = this_machines_address()
    if address is None:
        print("skipped the ranks off loopback: this machine has no address but loopback")
    else:
        off_loopback = os.path.join(tmp, "off-loopback")
        results = finish(launch("mpirun", config, off_loopback, "--join-timeout", "5",
                                address=address), timeout=120)
        check(results[0][0] == 1 and "--keys DIR" in results[0][2] and
              not os.path.exists(off_loopback), f"off loopback without keys:\n{results[0][2]}")
        keys = os.path.join(tmp, "keys")
        code, out, err = run("keygen", "--out", keys, "--launch", "2")
        check(code == 0 and sorted(os.listdir(keys)) == [
            "orchestrator.key", "orchestrator.pub", "rank-0.key", "rank-0.pub", "rank-1.key",
            "rank-1.pub"], f"keygen --launch 2 ({code}): {os.listdir(keys)}\n{err}")
        results = finish(launch("mpirun", config, off_loopback, "--keys", keys, address=address))
        for rank, (code, out, err) in enumerate(results):
            check(code == 0, f"off loopback: rank {rank} exited {code}:\n{out}\n{err}")
        log = read_bytes(os.path.join(off_loopback, "local", "orchestrator.log")).decode()
        check("agents' listener: CURVE" in log, log[-2000:])
        check(final_parameters(off_loopback, BATCHES) == expected,
              "off loopback: the final parameters differ from `cohort run`'s")
        print(f"2 ranks meeting at {address} over CURVE: bitwise equal")

    # A grid of two trials: the ranks stay for the second (rank 0 still serves between them).
    grid = os.path.join(tmp, "grid")
    results = finish(launch("torchrun", config, grid, "--set", "searcher.name=grid", "--set",
                            "hyperparameters.learning_rate={type: categorical, vals: [0.05, 0.1]}"))
    for rank, (code, out, err) in enumerate(results):
        check(code == 0, f"grid: rank {rank} exited {code}:\n{out}\n{err}")
    trials = experiment(grid)["trials"]
    check([t["state"] for t in trials] == ["COMPLETED", "COMPLETED"], trials)
    print("a grid of two trials on the same two ranks")

    # A launcher whose variables are half set.
    missing = os.path.join(tmp, "missing")
    result = subprocess.run([COHORT, "launch", config, "--output", missing],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            env=environment({"RANK": "0", "MASTER_ADDR": "127.0.0.1"}),
                            timeout=60)
    check(result.returncode == 1 and "WORLD_SIZE" in result.stderr and
          "LOCAL_RANK" in result.stderr, f"half-set variables ({result.returncode}):\n"
          f"{result.stderr}")
    check(not os.path.exists(missing), "a refused launch made a run folder")

    # Rank 0's port held by another job: refused, naming the port, and no run folder is made (it
    # used to leave config.yaml and local/ there).
    held = os.path.join(tmp, "held")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = subprocess.run([COHORT, "launch", config, "--output", held],
                                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                env=environment(launcher_variables("mpirun", 0, port, "127.0.0.1")),
                                timeout=60)
    check(result.returncode == 1 and f"cannot listen at 127.0.0.1:{port}: Address already in use"
          in result.stderr and "give this job another" in result.stderr,
          f"a held port ({result.returncode}):\n{result.stderr}")
    check(not os.path.exists(held), "a launch refused for a held port made a run folder")

    # A worker killed mid-way fails the job; launched again, the trial continues.
    restarted = os.path.join(tmp, "restarted")
    ranks = launch("torchrun", config, restarted)

    def first_checkpoint():
        ended = [rank for rank in ranks if rank.poll() is not None]
        check(not ended, f"a rank exited {ended[0].returncode if ended else ''} before the first "
              f"checkpoint:\n{finish(ranks) if ended else ''}")
        return experiment(restarted)["trials"][0]["checkpoints"]
    wait_for(first_checkpoint, what="the first checkpoint")
    wait_for(lambda: worker_pid(0, os.path.abspath(restarted)) is not None, what="rank 0's worker")
    os.kill(worker_pid(0, os.path.abspath(restarted)), signal.SIGKILL)
    results = finish(ranks)
    check([code for code, _, _ in results] == [1, 1],
          f"after the kill the ranks exited {[code for code, _, _ in results]}:\n"
          f"{results[0][2]}\n{results[1][2]}")
    kept = re.search(r"this rank's agent log and task folders are kept in (\S+)\)", results[1][2])
    check(kept and os.path.isfile(os.path.join(kept.group(1), "agent.log")), results[1][2])
    # Rank 1's task failed because rank 0 ended: said first, not only its peer's reset.
    check("rank 0 at tcp://" in results[1][2] and "no longer answers: it ended" in results[1][2],
          results[1][2])
    results = finish(launch("torchrun", config, restarted))
    for rank, (code, out, err) in enumerate(results):
        check(code == 0, f"relaunched rank {rank} exited {code}:\n{out}\n{err}")
    check("continuing the run folder" in results[0][2], results[0][2])
    check(final_parameters(restarted, BATCHES) == expected,
          "the relaunched trial's final parameters differ from the uninterrupted run's")
    print("a killed worker failed the job; launched again, it resumed and matched")

    # Rank 0 stopped (SIGTERM, as a preempted pod is): every rank exits 130, not only rank 0, so
    # a launcher (a Kubernetes Indexed Job) starts them all again; launched again, it goes on.
    preempted = os.path.join(tmp, "preempted")
    paced = write_config(tmp, read_bytes(config).decode().replace(
        "hyperparameters:\n", "hyperparameters:\n  slow_rank: 0\n  slow_rank_ms: 5\n"),
        file_name="paced.yaml")  # the same numbers, slow enough to be stopped mid-way
    ranks = launch("torchrun", paced, preempted)
    wait_for(lambda: experiment(preempted)["trials"][0]["checkpoints"],
             what="the preempted run's first checkpoint")
    ranks[0].send_signal(signal.SIGTERM)
    results = finish(ranks)
    check([code for code, _, _ in results] == [130, 130] and
          "rank 0 stopped the job; launch every rank again" in results[1][2],
          f"after rank 0's SIGTERM the ranks exited {[code for code, _, _ in results]}:\n"
          f"{results[0][2]}\n{results[1][2]}")
    results = finish(launch("torchrun", paced, preempted))
    check([code for code, _, _ in results] == [0, 0] and
          final_parameters(preempted, BATCHES) == expected,
          f"relaunched after the stop: {[code for code, _, _ in results]}:\n{results[0][2]}")
    print("rank 0 stopped: every rank exited 130; launched again, it resumed and matched")

    # Launched again with other settings: refused, nothing changed.
    before = folder_bytes(restarted)
    results = finish(launch("torchrun", config, restarted, "--set",
                            "hyperparameters.learning_rate=0.2", "--join-timeout", "2"),
                     timeout=120)
    check(results[0][0] == 1 and "learning_rate" in results[0][2],
          f"rank 0 with another learning rate ({results[0][0]}):\n{results[0][2]}")
    check(results[1][0] == 1 and "placed no task" in results[1][2],
          f"rank 1 with rank 0 refusing exited {results[1][0]}:\n{results[1][2]}")
    check(folder_bytes(restarted) == before, "a refused launch changed the run folder")

    # Rank 1's launch process killed outright: rank 0 waits --join-timeout for it, then fails.
    lost = os.path.join(tmp, "lost")
    long_config = mlp_config(tmp, name="lost", batches=10**6, period=10**6, file_name="lost.yaml")
    ranks = launch("torchrun", long_config, lost, "--join-timeout", "2")
    wait_for(lambda: experiment(lost)["trials"][0]["batches_trained"] > 0, what="training")
    rank_1_workers = children(ranks[1].pid)  # in process groups of their own
    ranks[1].kill()
    ranks[1].wait()
    for pid in rank_1_workers:
        os.kill(pid, signal.SIGKILL)  # as the launcher's kill of the job's processes would
    out, err = ranks[0].communicate(timeout=120)
    check(ranks[0].returncode == 1 and "lost rank 1 (" in err and
          "rank 1 (" in err and "left and did not join again within 2 s (--join-timeout)" in err,
          f"rank 0 after rank 1's launch was killed ({ranks[0].returncode}):\n{err}")
    print("a rank that left and did not come back failed the launch")

    # Processes that join a job while it trains: one as a rank outside its world is refused at
    # once (it used to fail the healthy job), one started as rank 1 a second time gives up after
    # 30 s, saying why (it used to wait out the join timeout); the job goes on without either.
    joined = os.path.join(tmp, "joined")
    # A training report (a line of rank 0's output, which nobody reads meanwhile: a full pipe
    # would stall rank 0) every 2000 batches rather than 20.
    quiet_config = write_config(tmp, read_bytes(long_config).decode().replace(
        "scheduling_unit: 20", "scheduling_unit: 2000"), file_name="quiet.yaml")
    port = free_port()
    ranks = launch("mpirun", quiet_config, joined, port=port)
    wait_for(lambda: experiment(joined)["trials"][0]["batches_trained"] > 0, what="training")

    def stranger(rank, size):
        variables = dict(launcher_variables("mpirun", rank, port, "127.0.0.1"),
                         OMPI_COMM_WORLD_SIZE=str(size))
        return subprocess.Popen([COHORT, "launch", quiet_config, "--output", joined],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=environment(variables))
    started = time.monotonic()
    outside, twice = stranger(2, 3), stranger(1, 2)
    (outside_code, _, outside_err), = finish([outside], timeout=60)
    outside_took = time.monotonic() - started
    check(outside_code == 1 and "refused this rank (rank-2): no rank of this 2-rank launch "
          "(rank-0 to rank-1)" in outside_err and outside_took < 20,
          f"a rank outside the world, {outside_took:.1f} s ({outside_code}):\n{outside_err}")
    (twice_code, _, twice_err), = finish([twice], timeout=120)
    twice_took = time.monotonic() - started
    check(twice_code == 1 and "most likely another process is joined as rank-1 already" in twice_err and
          twice_took < 90, f"rank 1 started twice, {twice_took:.1f} s ({twice_code}):\n{twice_err}")
    trained = experiment(joined)["trials"][0]["batches_trained"]

    def trains_on():
        ended = [rank for rank in ranks if rank.poll() is not None]
        check(not ended, f"the job ended after the strangers:\n{finish(ranks) if ended else ''}")
        return experiment(joined)["trials"][0]["batches_trained"] > trained
    wait_for(trains_on, what=f"training after the strangers (from batch {trained})")
    ranks[0].send_signal(signal.SIGINT)
    results = finish(ranks)
    check([code for code, _, _ in results] == [130, 130] and
          "refused agent rank-2" in results[0][2],
          f"stopped after the strangers: {[code for code, _, _ in results]}:\n{results[0][2]}")
    print(f"strangers refused while the job trained: a rank outside the world in "
          f"{outside_took:.1f} s, rank 1 started twice in {twice_took:.1f} s")

    # Rank 1's whole launch held (SIGSTOP: its host gone silent, its connections still open) and
    # rank 1 started again: rank 0 drops the silent connection, hears the new rank 1 and trains on
    # (it used to hold the old connection, and so never hear the new one).
    relaunched = os.path.join(tmp, "relaunched-rank")
    port = free_port()
    ranks = launch("mpirun", quiet_config, relaunched, port=port)
    wait_for(lambda: experiment(relaunched)["trials"][0]["batches_trained"] > 0, what="training")
    held = [ranks[1].pid] + children(ranks[1].pid)
    for pid in held:
        os.kill(pid, signal.SIGSTOP)
    variables = launcher_variables("mpirun", 1, port, "127.0.0.1")
    again = subprocess.Popen([COHORT, "launch", quiet_config, "--output", relaunched],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=environment(variables))

    log = os.path.join(relaunched, "trials", "1", "log.txt")

    def new_rank_trains():
        check(again.poll() is None, f"the new rank 1 exited {again.returncode}:\n"
              f"{again.communicate()[1] if again.poll() is not None else ''}")
        # A training report of the task placed again: both ranks train (and so take a stop as
        # one, rather than a worker's signal before it set its handlers).
        text = read_bytes(log).decode()
        placed_again = text.find("[cohort] task 2 ")
        return placed_again >= 0 and "[cohort] training after" in text[placed_again:]
    try:
        wait_for(new_rank_trains, timeout=120, what="the new rank 1's training")
    finally:
        for pid in held:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        ranks[1].wait()
    ranks[0].send_signal(signal.SIGINT)
    results = finish([ranks[0], again])
    check([code for code, _, _ in results] == [130, 130] and
          "every rank has joined again: training goes on" in results[0][2],
          f"rank 1 started again: {[code for code, _, _ in results]}:\n{results[0][2]}\n"
          f"{results[1][2]}")
    print("rank 1 held and started again: rank 0 heard the new one and trained on")

    # Rank 0's launch process killed outright while rank 1's worker cannot see its peer go (held
    # with SIGSTOP, as a worker waiting in a collective that no reset reaches): rank 1 finds rank 0
    # serves no more and stops its task, instead of waiting for it without end.
    orphan = os.path.join(tmp, "orphan")
    ranks = launch("torchrun", long_config, orphan)
    wait_for(lambda: experiment(orphan)["trials"][0]["batches_trained"] > 0, what="training")
    rank_1_worker = children(ranks[1].pid)
    check(len(rank_1_worker) == 1, f"rank 1's launch has children {rank_1_worker}")
    os.kill(rank_1_worker[0], signal.SIGSTOP)
    ranks[0].kill()
    ranks[0].wait()
    killed_at = time.monotonic()
    out, err = ranks[1].communicate(timeout=120)
    waited = time.monotonic() - killed_at
    check(ranks[1].returncode == 1 and "no longer answers: it ended" in err and
          "stopped its task" in err,
          f"rank 1 after rank 0's launch was killed ({ranks[1].returncode}):\n{err}")
    print(f"rank 0's launch killed: rank 1 stopped its task and failed {waited:.1f} s later")

    # A config without a seed: rank 0 draws one, and rank 1 takes it as its own (it used to refuse
    # the task for "reproducibility.experiment_seed: 139670726 at rank 0, unset here").
    seedless = write_config(tmp, read_bytes(config).decode().replace(
        "reproducibility:\n  experiment_seed: 11\n", ""), file_name="seedless.yaml")
    results = finish(launch("torchrun", seedless, os.path.join(tmp, "seedless")))
    check([code for code, _, _ in results] == [0, 0],
          f"a seedless config: the ranks exited {[code for code, _, _ in results]}:\n"
          f"{results[0][2]}\n{results[1][2]}")

    # Ranks that contradict each other: the job fails, saying how.
    for case, rank_1, rank_0_says, rank_1_says in [
            ("another world size", {"variables": {"WORLD_SIZE": "3"}},
             "every rank needs the same world size",
             "rank 1: rank 0 trains a world of 2 ranks, but torchrun started this one in a world "
             "of 3"),
            ("another --set", {"extra": ["--set", "hyperparameters.learning_rate=0.5"]},
             "trains otherwise than rank 0's",
             "hyperparameters.learning_rate: 0.05 at rank 0, 0.5 here"),
            ("a rank outside the world", {"variables": {"RANK": "2", "WORLD_SIZE": "3"}},
             "a process joined as 'rank-2', which is no rank of this 2-rank launch",
             "refused this rank (rank-2): no rank of this 2-rank launch"),
            ("an experiment rank 1 cannot read", {"config": os.path.join(tmp, "no-such.yaml")},
             "only 1 of the 2 ranks joined", "no-such.yaml"),
    ]:
        output = os.path.join(tmp, "contradicting-" + case.replace(" ", "-"))
        results = finish(launch("torchrun", config, output, "--join-timeout", "3",
                                rank_1=rank_1), timeout=120)
        check(results[0][0] == 1 and rank_0_says in results[0][2],
              f"{case}: rank 0 exited {results[0][0]}:\n{results[0][2]}")
        if rank_1_says is not None:
            check(results[1][0] == 1 and rank_1_says in results[1][2],
                  f"{case}: rank 1 exited {results[1][0]}:\n{results[1][2]}")
        print(f"{case}: refused")
print("ok")
