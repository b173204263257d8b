"""The desktop inside the sandbox: the template home, the window manager and the apps.

Decisions:

- Apps come from Debian: ``xterm`` (terminal), ``mousepad`` (text editor), ``gnumeric``
  (spreadsheet), under ``openbox``. They start in well under a second each; a file manager
  (pcmanfm) was tried and left out because it exits at once without a session bus.
- The window manager runs *inside* the sandbox, as the session's user: its menus can start
  programs, and a WM on the host would be a way out.
- Openbox maximizes every window and has one desktop, so a given task looks the same on every
  reset and GUI oracles can click fixed coordinates.
- LibreOffice (``calc``, ``writer``, ``impress``; ``libreoffice.py``) is an app like the others,
  with its document given as the app's argument. It paints in phases for a second after its
  window maps, so a reset with it waits for its document window (not its splash) and for the
  screen to stay unchanged for :data:`STILL_S`.
- A reset is ready when the WM answers EWMH, every app the task asked for has a window, and two
  screenshots in a row agree.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

import numpy as np

from palaestra.envs.computer import libreoffice
from palaestra.envs.computer.gui import Gui
from palaestra.envs.computer.sandbox import A11Y_BUS, Sandbox
from palaestra.envs.computer.sandbox import SESSION_BUS as BUS
from palaestra.errors import EnvCrashed

#: app name -> (argv, window class)
APPS: dict[str, tuple[list[str], str]] = {
    "terminal": (["xterm", "-fa", "DejaVu Sans Mono", "-fs", "11"], "XTerm"),
    "editor": (["mousepad"], "Mousepad"),
    "spreadsheet": (["gnumeric", "--no-splash"], "Gnumeric"),
    **libreoffice.APPS,
}
READY_TIMEOUT_S = 10.0
#: LibreOffice's start on a loaded machine (a cold profile's first start takes seconds)
OFFICE_TIMEOUT_S = 45.0
#: how long the screen must stay unchanged before a reset with an office app returns
STILL_S = 0.6
#: CPU ticks (10 ms) the session may spend in ``STILL_S`` and still count as idle
IDLE_TICKS = 3
#: distinct colours on a screen LibreOffice has painted (see ``_painted``)
PAINTED_COLOURS = 100
REGISTRYD = "/usr/libexec/at-spi2-registryd"
#: the apps with an accessibility bridge (GTK's; LibreOffice's through its gtk3 plugin)
GTK_APPS = {"editor", "spreadsheet", *libreoffice.APPS}
A11Y_TIMEOUT_S = 3.0

RC_XML = """<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <focus><focusNew>yes</focusNew><followMouse>no</followMouse></focus>
  <placement><policy>Smart</policy></placement>
  <desktops><number>1</number></desktops>
  <applications>
    <application class="*"><maximized>true</maximized><focus>yes</focus></application>
  </applications>
  <mouse><context name="Root"></context></mouse>
</openbox_config>
"""


def build_template(home: Path) -> None:
    """The home every episode starts from (before the task's own files)."""
    for folder in ("Desktop", "Documents", "Downloads", ".config/openbox", ".config/gtk-3.0"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    (home / ".config/openbox/rc.xml").write_text(RC_XML)
    # a text cursor that does not blink: a still screen means the app is done painting
    (home / ".config/gtk-3.0/settings.ini").write_text("[Settings]\ngtk-cursor-blink=false\n")
    (home / ".bashrc").write_text("PS1='user@sandbox:\\w$ '\n")
    libreoffice.put_profile(home)


def start_session_bus(sandbox: Sandbox) -> None:
    """A session D-Bus inside the sandbox, as a desktop login has (``gsettings set`` reaches
    dconf's service through it, ``xdg-settings`` and GIO use it), started before the task's
    setup commands and waited for (its socket appears in the sandbox's /tmp)."""
    sandbox.launch(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address=unix:path={BUS}"]
    )
    _wait_socket(sandbox, BUS, "the session bus (dbus-daemon)")


def start_a11y(sandbox: Sandbox) -> None:
    """The accessibility (AT-SPI) bus and its registry, before any app starts, so GTK apps'
    bridge registers with it (``Sandbox.a11y`` gives every process in the sandbox the bus's
    address instead of ``NO_AT_BRIDGE``). The bus is a ``dbus-daemon`` with at-spi2's own
    configuration, which lets root connect: the env reads the tree from the host
    (``a11y.read_tree``). ``at-spi-bus-launcher`` is not used: it would put the bus on a
    socket of its choosing and answer for it on the session bus, which the agent owns."""
    conf = "/usr/share/defaults/at-spi2/accessibility.conf"
    address = f"--address=unix:path={A11Y_BUS}"
    sandbox.launch(["dbus-daemon", f"--config-file={conf}", "--nofork", "--nopidfile", address])
    _wait_socket(sandbox, A11Y_BUS, "the accessibility bus (dbus-daemon)")
    sandbox.launch([REGISTRYD])


def wait_a11y(sandbox: Sandbox, apps: list[list[str]]) -> None:
    """Wait until the task's GTK apps have registered with the accessibility registry (their
    bridge does so just after the window maps), so the first observation's tree has them;
    xterm has no bridge. Bounded: a slow app leaves a tree without it, not a failed reset."""
    from palaestra.envs.computer import a11y  # jeepney: the ``computer`` extra

    want = sum(app[0] in GTK_APPS for app in apps)
    deadline = time.monotonic() + A11Y_TIMEOUT_S
    while want and a11y.app_count(sandbox.pid, A11Y_BUS) < want:
        if time.monotonic() > deadline:
            return
        time.sleep(0.02)


def _wait_socket(sandbox: Sandbox, path: str, what: str) -> None:
    socket = Path(f"/proc/{sandbox.pid}/root{path}")
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not socket.exists():
        if time.monotonic() > deadline or not sandbox.alive():
            raise EnvCrashed(f"{what} did not start")
        time.sleep(0.005)


def start_desktop(sandbox: Sandbox, gui: Gui, apps: list[list[str]]) -> None:
    """Window manager, then the task's apps (``[name, *args]``), each waited for."""
    sandbox.launch(["openbox", "--config-file", "/home/user/.config/openbox/rc.xml"])
    env = gui.display.env()
    office = libreoffice.is_office(apps)
    deadline = time.monotonic() + (OFFICE_TIMEOUT_S if office else READY_TIMEOUT_S)
    while subprocess.run(["wmctrl", "-m"], env=env, capture_output=True).returncode != 0:
        if time.monotonic() > deadline or not sandbox.alive():
            raise EnvCrashed("the window manager (openbox) did not start")
        gui.check_alive()
        time.sleep(0.01)
    for app in apps:
        name, *args = app
        if name not in APPS:
            raise ValueError(f"unknown app {name!r}; this desktop has {sorted(APPS)}")
        argv, klass = APPS[name]
        before = sum(w["class"] == klass for w in gui.windows())
        with tempfile.TemporaryFile() as log:  # on the host; only its tail is read back
            proc = sandbox.launch([*argv, *args], log=log)
            while sum(w["class"] == klass for w in gui.windows()) <= before:
                # exit 0 is a second soffice handing its document to the first one
                if time.monotonic() > deadline or proc.poll() not in (None, 0):
                    raise EnvCrashed(_no_window(name, proc.poll(), log))
                time.sleep(0.02)
    if office:
        wait_still(sandbox, gui, deadline)


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def _no_window(name: str, code: int | None, log: IO[bytes]) -> str:
    """Why an app did not open its window: still running (too slow), or its exit status and
    the last lines it printed."""
    if code is None:
        return f"the app {name!r} did not open a window in time"
    sig = -code if code < 0 else code - 128 if code > 128 else 0  # a shell reports 128 + it
    how = f"exited with {code}" + (f" ({_signal_name(sig)})" if sig else "")
    log.seek(0, os.SEEK_END)
    log.seek(max(0, log.tell() - 600))
    said = log.read().decode(errors="replace").strip().splitlines()[-3:]
    return f"the app {name!r} {how} before opening a window" + (
        f": {' / '.join(said)}" if said else ""
    )


def wait_still(sandbox: Sandbox, gui: Gui, deadline: float, still_s: float = STILL_S) -> None:
    """Wait until LibreOffice is done: the screen has painted (it maps its window blank and
    loads the document before painting: a blank window is one colour and its frame), then
    neither the screen nor the session's CPU time moved for ``still_s`` (on a loaded machine
    a busy soffice can leave the screen unchanged for a second while it still loads its
    toolbars; its CPU time gives it away). Past the deadline the reset goes on as it is."""
    last, since = gui.screenshot(), time.monotonic()
    cpu = _cpu_ticks(sandbox)
    while time.monotonic() < deadline:
        time.sleep(0.05)
        shot = gui.screenshot()
        if not np.array_equal(shot, last) or not _painted(shot):
            last, since, cpu = shot, time.monotonic(), _cpu_ticks(sandbox)
        elif time.monotonic() - since >= still_s:
            now = _cpu_ticks(sandbox)
            if now - cpu <= IDLE_TICKS:
                return
            since, cpu = time.monotonic(), now


def _cpu_ticks(sandbox: Sandbox) -> int:
    """The CPU time (clock ticks, user + system) of the sandbox's processes so far."""
    total = 0
    for proc in sandbox.processes():
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path(f"/proc/{proc['pid']}/stat").read_text()
            fields = stat.rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total


def _painted(shot: np.ndarray) -> bool:
    """More colours than a blank window with its title bar has (LibreOffice's toolbars,
    document and status bar have hundreds; a blank window about 30)."""
    sample = shot[::7, ::7].reshape(-1, 3)
    return len(np.unique(sample, axis=0)) >= PAINTED_COLOURS
