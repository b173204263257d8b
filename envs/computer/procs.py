"""Who is really running in a session, read from the host: its processes and its windows' owners.

Signalling a session's processes (by uid and pidfd, never by a remembered pid) is the shared
sandbox's (``runtimes.processes``), re-exported here for the family's modules.

What a verifier may trust about a process or a window is only what the agent cannot set:

- A session's processes are those in its sandbox's pid namespace (the host's
  ``/proc/PID/ns/pid`` is the same inode as the sandbox's init's). Each one's executable is the
  kernel's ``/proc/PID/exe``, kept as its (device, inode) so that a copy of a binary under
  another name (``cp /usr/bin/xterm ~/mousepad``) is not the real one, and ``exec -a NAME``,
  which only rewrites ``argv[0]``, changes nothing. ``argv`` is reported too, but it is the
  agent's to write, so a check uses it only beside the executable; the files the process holds
  open (a shell holds the script it runs) and those it watches with inotify (an editor watches
  the files it shows) are kept as (device, inode) too.
- A window's process is the X server's own record of the client that created it (the
  X-Resource extension's ``XResQueryClientIds`` with the PID mask: the pid the server took from
  the Unix socket's peer credentials), never ``_NET_WM_PID`` or ``WM_CLASS``, which any client
  sets to anything (``xterm -class Mousepad -T 'plan.txt - Mousepad'``).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import re
from pathlib import Path
from typing import Any

from palaestra.envs.runtimes.processes import (  # noqa: F401  (the family's one place)
    kill_uid,
    real_uid,
    signal_where,
    uid_processes,
)

_XRES_CLIENT_ID_PID_MASK = 1 << 1


class _Spec(ctypes.Structure):
    _fields_ = [("client", ctypes.c_ulong), ("mask", ctypes.c_uint)]


class _Value(ctypes.Structure):
    _fields_ = [("spec", _Spec), ("length", ctypes.c_long), ("value", ctypes.c_void_p)]


_LIBS: dict[str, Any] = {}


def _libs() -> tuple[Any, Any]:
    """libX11 and libXRes (package ``libxres1``), loaded once."""
    if not _LIBS:
        x11 = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
        x11.XOpenDisplay.restype = ctypes.c_void_p
        x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
        xres = ctypes.CDLL(ctypes.util.find_library("XRes") or "libXRes.so.1")
        xres.XResQueryClientIds.argtypes = [
            ctypes.c_void_p,
            ctypes.c_long,
            ctypes.POINTER(_Spec),
            ctypes.POINTER(ctypes.c_long),
            ctypes.POINTER(ctypes.POINTER(_Value)),
        ]
        xres.XResGetClientPid.argtypes = [ctypes.POINTER(_Value)]
        xres.XResGetClientPid.restype = ctypes.c_int
        xres.XResClientIdsDestroy.argtypes = [ctypes.c_long, ctypes.POINTER(_Value)]
        _LIBS.update(x11=x11, xres=xres)
    return _LIBS["x11"], _LIBS["xres"]


def window_pids(display: str, window_ids: list[int]) -> dict[int, int]:
    """``{window id: host pid of the X client that created it}``, from the X server; a window
    whose owner the server does not know (a remote client) is left out. Raises OSError when
    the server cannot be asked (no XRes): the caller reports an error, never a pass."""
    x11, xres = _libs()
    dpy = x11.XOpenDisplay(display.encode())
    if not dpy:
        raise OSError(f"cannot open the X display {display}")
    out: dict[int, int] = {}
    try:
        for wid in window_ids:
            spec = _Spec(wid, _XRES_CLIENT_ID_PID_MASK)
            count = ctypes.c_long(0)
            values = ctypes.POINTER(_Value)()
            status = xres.XResQueryClientIds(
                dpy, 1, ctypes.byref(spec), ctypes.byref(count), ctypes.byref(values)
            )
            if status != 0:
                raise OSError(f"XResQueryClientIds failed ({status}): no X-Resource extension?")
            try:
                for i in range(count.value):
                    pid = xres.XResGetClientPid(ctypes.byref(values[i]))
                    if pid > 0:
                        out[wid] = pid
            finally:
                xres.XResClientIdsDestroy(count, values)
    finally:
        x11.XCloseDisplay(dpy)
    return out


def _watched_ids(base: Path) -> list[list[int]]:
    """(device, inode) of the files a process watches with inotify: an editor (GLib's file
    monitor) watches each file it has open, to notice a change from outside. Read from the
    kernel's fdinfo; its ``sdev`` is the kernel's dev_t (major << 20 | minor)."""
    out = []
    with contextlib.suppress(OSError):
        for fd in os.listdir(base / "fdinfo"):
            with contextlib.suppress(OSError):
                text = (base / "fdinfo" / fd).read_text()
                for ino, sdev in re.findall(
                    r"^inotify wd:\S+ ino:([0-9a-f]+) sdev:([0-9a-f]+)", text, re.M
                ):
                    dev = int(sdev, 16)
                    out.append([os.makedev(dev >> 20, dev & 0xFFFFF), int(ino, 16)])
    return out


def _ns(pid: int | str) -> int:
    return os.stat(f"/proc/{pid}/ns/pid").st_ino


def process(pid: int | str) -> dict[str, Any] | None:
    """One process as the host sees it (None if it is gone or unreadable)."""
    base = Path(f"/proc/{pid}")
    try:
        exe = os.stat(base / "exe")
        argv = (base / "cmdline").read_bytes().split(b"\0")
        return {
            "pid": int(pid),
            "exe": os.readlink(base / "exe"),
            "exe_id": [exe.st_dev, exe.st_ino],
            "argv": [a.decode(errors="replace") for a in argv if a],
            "open_ids": _open_ids(base),
            "watched_ids": _watched_ids(base),
        }
    except OSError:
        return None


def _open_ids(base: Path, most: int = 256) -> list[list[int]]:
    """(device, inode) of the files a process holds open (a shell holds the script it runs)."""
    out = []
    with contextlib.suppress(OSError):
        for fd in sorted(os.listdir(base / "fd"), key=int)[:most]:
            with contextlib.suppress(OSError):
                st = os.stat(base / "fd" / fd)
                out.append([st.st_dev, st.st_ino])
    return out


def session_processes(init_pid: int) -> list[dict[str, Any]]:
    """Every process in the pid namespace of ``init_pid`` (a session sandbox's pid 1), the
    sandbox's own ``sleep infinity`` init left out."""
    if init_pid <= 0:
        return []
    try:
        ns = _ns(init_pid)
    except OSError:
        return []
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == init_pid:
            continue
        with contextlib.suppress(OSError):
            if _ns(entry.name) == ns:
                found = process(entry.name)
                if found is not None:
                    out.append(found)
    return out
