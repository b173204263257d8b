"""The session's sums: memory and CPU of every process of its uid, watched from the host.

rlimits bound each process (``RLIMIT_AS``, ``RLIMIT_CPU``), so three processes of 900 MB each, or
a process that forks a fresh busy child every few seconds, stayed under every limit while the
session as a whole took 2.7 GB or a whole core. cgroups v2 would bound the sum in the kernel,
but only where the host delegates a cgroup v2 subtree with the memory, cpu and pids controllers
to the worker; the machines this was built on do not (a hybrid hierarchy whose v2 part has no
controllers: ``/sys/fs/cgroup/unified/cgroup.controllers`` lists only ``hugetlb``). So this is
the weaker mode, a watchdog: a thread per session samples every process of the session's uid
(its uid is its own, whichever of its sandboxes a process runs in: the desktop, the X server, a
verifier's command) every ``INTERVAL_S``, and when a sum goes over, stops the whole session (every
process of the uid, by pidfd) and keeps the reason, which the env raises on the next step.

Weaker than a cgroup because it samples: memory can overshoot for up to one interval (each
process is still bounded by ``RLIMIT_AS``), and CPU is counted from ``/proc``: each process's
own time, plus the time of the children it reaped (``cutime``; the sandbox's init, which reaps
orphans, is sampled for that alone), minus what a child seen alive had already been counted for
when it vanishes under a parent that is sampled (else the child would count twice). A process
that lives and dies between two samples counts through its reaper. Memory is the private part
(``RssAnon`` + ``RssShmem``): shared library pages would count once per process.
The process count needs no watchdog: ``RLIMIT_NPROC`` is the kernel's count per uid.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from palaestra.envs.computer.procs import kill_uid, uid_processes
from palaestra.envs.runtimes.sandbox import Limits

INTERVAL_S = 0.5
_TICK = os.sysconf("SC_CLK_TCK")
_KB = 1024


class _Seen(NamedTuple):
    own: float  # CPU seconds of the process itself
    reaped: float  # of the children it reaped
    ppid: int


def _sample(pid: int) -> tuple[tuple[int, int], int, _Seen]:
    """((pid, start time), private memory in bytes, CPU seconds and parent)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read(4096).decode(errors="replace").rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
    reaped = (int(fields[13]) + int(fields[14])) / _TICK  # cutime, cstime
    cpu = _Seen(own, reaped, int(fields[1]))
    memory = 0
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f.read(16384).decode(errors="replace").splitlines():
            if line.startswith(("RssAnon:", "RssShmem:")):
                memory += int(line.split()[1]) * _KB
    return (pid, int(fields[19])), memory, cpu


class Watchdog:
    """Stops a session whose processes together go over its memory or CPU limits."""

    def __init__(
        self,
        uid: int,
        limits: Limits,
        reapers: Callable[[], list[int]] = list,
        interval_s: float = INTERVAL_S,
    ) -> None:
        """``reapers``: pids sampled for the children they reap only (the sandbox's init)."""
        self.uid, self.limits, self.interval_s = uid, limits, interval_s
        self.reapers = reapers
        #: why the session was stopped (None while it is within its limits)
        self.breach: str | None = None
        self._lock = threading.Lock()
        self._seen: dict[tuple[int, int], _Seen] = {}
        self._used = 0.0
        self._since = time.monotonic()
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    def begin_episode(self) -> None:
        """A fresh CPU account (what runs now is the new episode's baseline); no breach."""
        with self._lock:
            self.breach, self._used, self._since = None, 0.0, time.monotonic()
            self._seen = self._look()[2]
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"palaestra-watchdog-{self.uid}", daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        self._halt.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def _look(self) -> tuple[int, int, dict[tuple[int, int], _Seen]]:
        """(private memory, process count, CPU per process) of the session right now; the
        reapers count for their children's CPU only."""
        memory, count, seen = 0, 0, {}
        reapers = set(self.reapers())
        for pid in {*uid_processes(self.uid), *reapers}:
            with contextlib.suppress(OSError, ValueError, IndexError):
                key, mem, cpu = _sample(pid)
                if pid in reapers:
                    seen[key] = cpu._replace(own=0.0)
                    continue
                memory += mem
                count += 1
                seen[key] = cpu
        return memory, count, seen

    def _run(self) -> None:
        while not self._halt.wait(self.interval_s):
            self.check()

    def check(self) -> str | None:
        """One look at the session; stops it and returns the reason when a sum is over."""
        with self._lock:
            if self.breach is not None:
                return self.breach
            memory, count, seen = self._look()
            none = _Seen(0.0, 0.0, 0)
            for key, now in seen.items():
                was = self._seen.get(key, none)
                self._used += max(0.0, now.own - was.own) + max(0.0, now.reaped - was.reaped)
            alive = {pid for pid, _ in seen}
            for key, was in self._seen.items():  # gone: its reaper's cutime has it now
                if key not in seen and was.ppid in alive:
                    self._used -= was.own + was.reaped
            self._seen = seen
            limits = self.limits
            allowed = limits.cpu_burst_s + limits.cpus * (time.monotonic() - self._since)
            if memory > limits.memory_mb * 2**20:
                why = (
                    f"{memory // 2**20} MB of memory summed over its {count} processes, "
                    f"over its limit of {limits.memory_mb} MB"
                )
            elif self._used > allowed:
                why = (
                    f"{self._used:.0f} s of CPU, over its share of {limits.cpus:g} CPU "
                    f"(+{limits.cpu_burst_s:g} s) since the episode began"
                )
            else:
                return None
            self.breach = f"the session was stopped: its processes used {why}; reset to start over"
        self.stop_all()
        return self.breach

    def stop_all(self) -> None:
        """Kill every process of the session's uid (the session is over until a reset)."""
        kill_uid(self.uid)
