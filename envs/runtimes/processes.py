"""A session's processes, found by what the kernel says now and signalled through pidfds.

A sandboxed session's uid is its own (a flock-held slot, ``sandbox.Slot``), so every process of
that uid is the session's, in whichever of its sandboxes it runs. A pid remembered from earlier
may belong to anyone by now (a recycled pid of a root process was killed that way), so a process
is found by its real uid now, opened as a pidfd, checked again while the pidfd pins it, and
signalled through the pidfd (:func:`signal_where`, :func:`kill_uid`); nothing here takes a pid
from memory.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from collections.abc import Callable, Iterable

UID_BASE = 20000  # sandbox.UID_BASE (the sandbox imports this module)


def _status(pid: int | str) -> dict[str, str]:
    out = {}
    with open(f"/proc/{pid}/status", "rb") as f:  # the kernel's text, a few KB
        for line in f.read(16384).decode(errors="replace").splitlines():
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def _uid_alive(pid: int) -> int:
    """The real uid of a live process, -1 for a zombie (the cheap read: it runs for every
    process on the machine, twice a second per session)."""
    with open(f"/proc/{pid}/status", "rb") as f:
        head = f.read(2048)
    state = head[head.index(b"\nState:") + 7 :].lstrip()[:1]
    if state == b"Z":
        return -1
    return int(head[head.index(b"\nUid:") + 5 :].split(None, 1)[0])


def real_uid(pid: int | str) -> int:
    return int(_status(pid)["Uid"].split()[0])


def descends(pid: int, ancestors: set[int], most: int = 4096) -> bool:
    """Whether ``pid`` is one of ``ancestors`` or runs under one of them (parent links)."""
    for _ in range(most):
        if pid in ancestors:
            return True
        if pid <= 1:
            return False
        pid = int(_status(pid)["PPid"])
    return False


def signal_where(pid: int | str, sig: int, check: Callable[[int], bool]) -> bool:
    """Send ``sig`` to process ``pid`` if ``check(pid)`` holds for it, never to another process
    that took its pid: the pidfd pins the process, ``check`` reads /proc, and a signal 0 through
    the pidfd after the read proves the pid was not reused meanwhile. True if sent."""
    fd = _signal_pinned(pid, sig, check)
    if fd is None:
        return False
    os.close(fd)
    return True


def _signal_pinned(pid: int | str, sig: int, check: Callable[[int], bool]) -> int | None:
    """:func:`signal_where`, keeping the pidfd open (the caller closes it) so the caller can
    wait on the very process it signalled."""
    try:
        fd = os.pidfd_open(int(pid))
    except (ProcessLookupError, ValueError):
        return None
    try:
        if check(int(pid)):
            signal.pidfd_send_signal(fd, 0)  # still the process that was checked
            signal.pidfd_send_signal(fd, sig)
            return fd
    except (OSError, KeyError, ValueError, IndexError):  # gone, or unreadable: not ours to hit
        pass
    os.close(fd)
    return None


def _wait_exited(fds: list[int], wait_s: float) -> None:
    """Until every pidfd reads as exited (a SIGKILLed process holding a few hundred MB takes
    a moment to give its memory back, longer on a loaded machine) or ``wait_s`` is over."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    left, deadline = len(fds), time.monotonic() + wait_s
    while left and (timeout := deadline - time.monotonic()) > 0:
        for fd, _ in poller.poll(timeout * 1000):
            poller.unregister(fd)
            left -= 1


def _pids() -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit()]


def uid_processes(uid: int) -> list[int]:
    """The pids whose real uid is ``uid`` right now (a session's uid is its own: every process
    of it is the session's, in whichever of its sandboxes it runs); zombies are not counted
    (dead, waiting for a parent to reap them)."""
    out = []
    for pid in _pids():
        with contextlib.suppress(OSError, KeyError, ValueError, IndexError):
            if _uid_alive(pid) == uid:
                out.append(pid)
    return out


def kill_uid(
    uid: int, keep_under: Iterable[int] = (), rounds: int = 50, wait_s: float = 10.0
) -> int:
    """SIGKILL every process of ``uid`` but those running under ``keep_under`` (the desktop's
    own: live processes we started and have not reaped, so their pids are theirs). They are
    stopped first, round after round until no new one appears (a stopped process cannot fork:
    a fork bomb cannot outrun it), then killed, and waited for (up to ``wait_s``). Returns how
    many were killed."""
    if uid < UID_BASE:  # only sandbox uids: never root's or a real user's by mistake
        raise ValueError(f"not a sandbox uid: {uid}")
    keep = set(keep_under)

    def ours(pid: int) -> bool:
        return real_uid(pid) == uid and not (keep and descends(pid, keep))

    stopped: set[int] = set()
    for _ in range(rounds):
        fresh = [p for p in uid_processes(uid) if p not in stopped]
        hit = {p for p in fresh if signal_where(p, signal.SIGSTOP, ours)}
        if not hit:
            break
        stopped |= hit
    killed = [fd for p in stopped if (fd := _signal_pinned(p, signal.SIGKILL, ours)) is not None]
    try:
        _wait_exited(killed, wait_s)  # the caller goes on once the memory and the uid are free
    finally:
        for fd in killed:
            os.close(fd)
    return len(killed)
