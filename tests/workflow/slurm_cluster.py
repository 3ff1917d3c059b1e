"""A real single-node SLURM on localhost for the cluster-profile test.

``LocalSlurm`` installs ``slurm-wlm`` and ``munge`` from Debian's packages when
they are missing (root only), writes a ``slurm.conf`` into a temporary folder
(this host as the only node, one partition ``debug``, no accounting database,
``MinJobAge`` one day so that ``squeue`` keeps reporting finished jobs), starts
``munged``, ``slurmctld`` and ``slurmd`` with it, waits until the node is idle,
and on ``stop()`` cancels every job and stops exactly the daemons it started.
Clients find the configuration through ``SLURM_CONF`` (set in ``env``) and,
because Snakemake's SLURM executor drops every ``SLURM_*`` variable before it
submits, also at the standard path ``/etc/slurm/slurm.conf``: a symbolic link
made only when no file is there, and removed again by ``stop()``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")


def _run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 600), **kw)


def install_if_missing() -> str | None:
    """Install slurm-wlm and munge with apt-get when a daemon is missing;
    return why SLURM cannot be had here (None when it is ready)."""
    if all(shutil.which(d) for d in (*DAEMONS, "sbatch", "squeue")):
        return None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "slurm-wlm/munge are not installed and apt-get cannot be run as root here"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", "slurm-wlm", "munge"],
    ):
        done = _run(cmd, env=env, timeout=900)
        if done.returncode != 0:
            return f"{' '.join(cmd)} failed: {done.stderr[-500:]}"
    return None


class LocalSlurm:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.conf = self.root / "slurm.conf"
        self.host = socket.gethostname()
        self.pids: dict[str, int] = {}
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self.system_conf = Path("/etc/slurm/slurm.conf")
        self.linked = False

    def _node_line(self) -> str:
        out = _run(["slurmd", "-C"]).stdout.splitlines()[0]
        fields = dict(kv.split("=", 1) for kv in out.split())
        memory = int(fields["RealMemory"]) * 9 // 10  # leave the OS its share
        return f"NodeName={self.host} CPUs={fields['CPUs']} RealMemory={memory} State=UNKNOWN"

    def write_config(self) -> None:
        for sub in ("state", "spool", "log", "munge"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        r = self.root
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=mkltest",
                    f"SlurmctldHost={self.host}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    "AuthType=auth/munge",
                    f"AuthInfo=socket={r / 'munge' / 'munge.socket'}",
                    f"StateSaveLocation={r / 'state'}",
                    f"SlurmdSpoolDir={r / 'spool'}",
                    f"SlurmctldPidFile={r / 'slurmctld.pid'}",
                    f"SlurmdPidFile={r / 'slurmd.pid'}",
                    f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}",
                    f"SlurmdLogFile={r / 'log' / 'slurmd.log'}",
                    "SlurmctldPort=16817",
                    "SlurmdPort=16818",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "MpiDefault=none",
                    "SchedulerType=sched/backfill",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core_Memory",
                    "ReturnToService=2",
                    "MinJobAge=86400",
                    "JobCompType=jobcomp/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "AccountingStorageType=accounting_storage/none",
                    "SlurmctldTimeout=30",
                    "SlurmdTimeout=30",
                    self._node_line(),
                    f"PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP",
                    "",
                ]
            )
        )

    MARKER = "started-by-mkl-tests"

    def _stop_stale(self) -> None:
        """A link left by a test run that was killed before it could stop its
        daemons: stop them (pid files beside its config) and remove the link."""
        if not self.system_conf.is_symlink():
            return
        old = Path(os.readlink(self.system_conf)).parent
        if not (old / self.MARKER).exists():
            return
        for pidfile in (old / "slurmd.pid", old / "slurmctld.pid", old / "munge" / "munged.pid"):
            try:
                os.kill(int(pidfile.read_text()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        time.sleep(1)
        self.system_conf.unlink()

    def start(self, timeout: float = 60) -> None:
        self.write_config()
        (self.root / self.MARKER).touch()
        self._stop_stale()
        if self.system_conf.exists() or self.system_conf.is_symlink():
            raise RuntimeError(
                f"{self.system_conf} exists: this host has its own SLURM; not touching it"
            )
        self.system_conf.parent.mkdir(parents=True, exist_ok=True)
        self.system_conf.symlink_to(self.conf)
        self.linked = True
        r = self.root
        munge = [
            "munged",
            "--force",
            f"--socket={r / 'munge' / 'munge.socket'}",
            f"--pid-file={r / 'munge' / 'munged.pid'}",
            f"--log-file={r / 'munge' / 'munged.log'}",
            f"--seed-file={r / 'munge' / 'munged.seed'}",
        ]
        # daemons and clients reach this munged through its socket (AuthInfo)
        started = _run(munge, env=self.env)
        if started.returncode != 0:
            raise RuntimeError(f"munged did not start: {started.stderr}")
        self.pids["munged"] = int((r / "munge" / "munged.pid").read_text())
        for daemon in ("slurmctld", "slurmd"):
            started = _run([daemon, "-f", str(self.conf)], env=self.env)
            if started.returncode != 0:
                raise RuntimeError(f"{daemon} did not start: {started.stderr}")
            self.pids[daemon] = self._wait_pid(r / f"{daemon}.pid")
        deadline = time.time() + timeout
        while time.time() < deadline:
            state = _run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.5)
        raise RuntimeError(f"the SLURM node did not become idle (state {state!r}); see {r / 'log'}")

    @staticmethod
    def _wait_pid(path: Path, timeout: float = 20) -> int:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if path.exists() and path.read_text().strip():
                return int(path.read_text())
            time.sleep(0.1)
        raise RuntimeError(f"no pid file {path}")

    def stop(self) -> None:
        if "slurmctld" in self.pids:
            _run(["scancel", "--full", "--user", "root"], env=self.env, timeout=30)
        for daemon in ("slurmd", "slurmctld", "munged"):
            pid = self.pids.pop(daemon, None)
            if pid is None:
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            for _ in range(100):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)
        if self.linked:
            self.system_conf.unlink(missing_ok=True)
            self.linked = False
