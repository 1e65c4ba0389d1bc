"""A real single-node Slurm for tests: munged, slurmctld and slurmd (Debian's slurm-wlm and
munge) started in a folder of their own, with their own munge key and socket, free ports, this
machine's CPUs as one node (proctrack/linuxproc, no cgroups), run as the current user.

    with SlurmCluster(folder) as slurm:       # SlurmUnavailable: why it cannot start here
        slurm.run(["srun", "-n", "2", ...])   # SLURM_CONF set for the command

Everything started is stopped on leaving the block. A test script that needs Slurm starts it with
start_or_skip(folder), which exits 77 (skipped), saying why, where Slurm cannot run.
"""
import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sinfo", "scontrol")


class SlurmUnavailable(Exception):
    """Slurm is not installed, or its daemons cannot start on this machine (the message says
    which and why)."""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)"


class SlurmCluster:
    def __init__(self, folder, cpus=2):
        self.folder = os.path.abspath(folder)
        self.cpus = cpus
        self.host = socket.gethostname().split(".")[0]
        self.conf = os.path.join(self.folder, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.processes = []

    def __enter__(self):
        missing = [d for d in DAEMONS if shutil.which(d) is None and
                   not os.path.exists(os.path.join("/usr/sbin", d))]
        if missing:
            raise SlurmUnavailable(f"{', '.join(missing)} not installed (Debian: apt install "
                                   "slurm-wlm munge)")
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        subprocess.run(["scontrol", "shutdown"], env=self.env, capture_output=True, timeout=30)
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def log(self, name):
        return os.path.join(self.folder, "log", name + ".log")

    def _daemon(self, name, *args):
        binary = shutil.which(name) or os.path.join("/usr/sbin", name)
        self.processes.append(subprocess.Popen(
            [binary, *args], env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(self.log(name + ".stderr"), "w")))

    def _start(self):
        for sub in ("munge", "state", "spool", "log"):
            os.makedirs(os.path.join(self.folder, sub), mode=0o700, exist_ok=True)
        munge = os.path.join(self.folder, "munge")
        key = os.path.join(munge, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        socket_path = os.path.join(munge, "munge.socket")
        self._daemon("munged", "--foreground", "--force", "--socket", socket_path,
                     f"--key-file={key}", f"--log-file={self.log('munged')}",
                     f"--pid-file={munge}/munged.pid", f"--seed-file={munge}/seed")
        user = getpass.getuser()
        with open(self.conf, "w") as f:
            f.write(f"""\
ClusterName=cohorttest
SlurmctldHost={self.host}
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
AuthInfo=socket={socket_path}
CredType=cred/munge
StateSaveLocation={self.folder}/state
SlurmdSpoolDir={self.folder}/spool
SlurmctldPidFile={self.folder}/slurmctld.pid
SlurmdPidFile={self.folder}/slurmd.pid
SlurmctldLogFile={self.log('slurmctld')}
SlurmdLogFile={self.log('slurmd')}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName={self.host} CPUs={self.cpus} State=UNKNOWN
PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP
""")
        self._wait(lambda: os.path.exists(socket_path), "munged's socket", "munged")
        self._daemon("slurmctld", "-D", "-f", self.conf)
        self._daemon("slurmd", "-D", "-f", self.conf)

        def node_idle():
            out = subprocess.run(["sinfo", "-h", "-o", "%t"], env=self.env, capture_output=True,
                                 text=True, timeout=10).stdout.split()
            return "idle" in out
        self._wait(node_idle, "the node to be idle", "slurmd")

    def _wait(self, predicate, what, daemon, seconds=30):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    raise SlurmUnavailable(
                        f"{os.path.basename(process.args[0])} exited {process.returncode} "
                        f"while waiting for {what}:\n{_tail(self.log(daemon))}"
                        f"{_tail(self.log(daemon + '.stderr'))}")
            try:
                if predicate():
                    return
            except (OSError, subprocess.SubprocessError):
                pass
            time.sleep(0.2)
        raise SlurmUnavailable(f"no {what} within {seconds} s:\n{_tail(self.log(daemon))}")

    def run(self, command, timeout=300, env=None):
        """Runs COMMAND (srun, sbatch, ...) against this cluster: (exit status, stdout, stderr)."""
        done = subprocess.run(command, env=dict(env or os.environ, SLURM_CONF=self.conf),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
        return done.returncode, done.stdout, done.stderr


def start_or_skip(folder):
    """A started SlurmCluster in FOLDER (the caller stops it with __exit__); exits 77 (skipped),
    saying why, where Slurm is not installed or its daemons cannot start."""
    try:
        return SlurmCluster(folder).__enter__()
    except SlurmUnavailable as why:
        print(f"skipped: Slurm cannot run here: {why}")
        sys.exit(77)
