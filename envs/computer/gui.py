"""GUI actions, screenshots and the window list, all from outside the sandbox.

Decisions:

- ``xdotool`` talks to the X server only, so it runs on the host: nothing of it is reachable
  from the sandbox, and one xdotool process per action chains its commands (move, press, move,
  release) in a single round trip.
- Key names are checked before anything is sent (aliases such as ``ctrl``/``enter``/``esc``,
  single characters, or any X keysym, looked up with libX11's ``XStringToKeysym``), so an
  unknown key is an agent mistake that changes nothing, not a silent no-op.
- Screenshots come from the X server with Pillow (``ImageGrab.grab(xdisplay=...)``, XCB):
  about 5 ms for 1024x768. The window list is EWMH (``wmctrl -lGx`` and the root window's
  ``_NET_ACTIVE_WINDOW``), so it is the window manager's own view: title, class, geometry, focus.
  Window ids are left out: they change from one reset to the next and no action takes one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import subprocess
import time
from typing import Any

import numpy as np
from PIL import ImageGrab

from palaestra.envs.computer.display import Display
from palaestra.errors import ActionError, EnvCrashed

BUTTONS = {"left": 1, "middle": 2, "right": 3}
ALIASES = {
    "ctrl": "ctrl",
    "control": "ctrl",
    "shift": "shift",
    "alt": "alt",
    "option": "alt",
    "super": "super",
    "win": "super",
    "cmd": "super",
    "command": "super",
    "meta": "super",
    "enter": "Return",
    "return": "Return",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "space": "space",
    "backspace": "BackSpace",
    "delete": "Delete",
    "del": "Delete",
    "insert": "Insert",
    "home": "Home",
    "end": "End",
    "pageup": "Prior",
    "pgup": "Prior",
    "pagedown": "Next",
    "pgdn": "Next",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "capslock": "Caps_Lock",
    "printscreen": "Print",
    "menu": "Menu",
    **{f"f{i}": f"F{i}" for i in range(1, 25)},
}
_CHAR_NAMES = {
    " ": "space",
    "\n": "Return",
    "\t": "Tab",
    "+": "plus",
    "-": "minus",
    ",": "comma",
    ".": "period",
    "/": "slash",
    "\\": "backslash",
    ";": "semicolon",
    "'": "apostrophe",
    "[": "bracketleft",
    "]": "bracketright",
    "=": "equal",
    "`": "grave",
}
_X11: Any = None


def _keysym_known(name: str) -> bool:
    global _X11
    if _X11 is None:
        _X11 = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
        _X11.XStringToKeysym.restype = ctypes.c_ulong
        _X11.XStringToKeysym.argtypes = [ctypes.c_char_p]
    return bool(_X11.XStringToKeysym(name.encode()))


def key_name(key: str) -> str:
    """One key (alias, character or keysym) -> its X keysym name, or ActionError."""
    if key in _CHAR_NAMES:
        return _CHAR_NAMES[key]
    low = key.lower()
    if low in ALIASES:
        return ALIASES[low]
    if len(key) == 1 and key.isprintable():
        return key if key.isalnum() else _CHAR_NAMES.get(key, key)
    if _keysym_known(key):
        return key
    raise ActionError(
        f"unknown key {key!r}: use a character, an X keysym (Return, BackSpace, F5, ...) "
        f"or one of {', '.join(sorted(k for k in ALIASES if not k.startswith('f')))}"
    )


def combo(text: str) -> list[str]:
    """``"ctrl+shift+t"`` or ``"ctrl+a Delete"`` -> xdotool key arguments."""
    combos = text.split() if text.strip() else []
    if not combos:
        raise ActionError("key(): give a key or combination such as 'ctrl+s' or 'Return'")
    out = []
    for c in combos:
        parts = [p for p in c.split("+")] if c != "+" else ["+"]
        if "" in parts:  # "ctrl++" means ctrl and plus
            parts = [p for p in parts if p] + ["+"]
        out.append("+".join(key_name(p) for p in parts))
    return out


class Gui:
    """Input and pixels of one display."""

    def __init__(self, display: Display, settle_s: float = 0.05) -> None:
        self.display = display
        self.settle_s = settle_s

    def xdotool(self, *args: str, timeout: float = 10.0) -> str:
        try:
            done = subprocess.run(
                ["xdotool", *args],
                env=self.display.env(),
                capture_output=True,
                timeout=timeout,
                text=True,
            )
        except subprocess.TimeoutExpired:
            self.check_alive()
            raise EnvCrashed("xdotool hung talking to the X server") from None
        if done.returncode != 0 or "No such key" in done.stderr:
            self.check_alive()
            raise ActionError(f"xdotool failed: {done.stderr.strip()[:300]}")
        return done.stdout

    def check_alive(self) -> None:
        if not self.display.alive():
            raise EnvCrashed(
                f"the X server of this session ({self.display.name}) died; reset to restart it"
            )

    def on_screen(self, name: str, x: int, y: int) -> None:
        w, h = self.display.width, self.display.height
        if not (0 <= x < w and 0 <= y < h):
            raise ActionError(f"{name}: ({x}, {y}) is outside the screen (0..{w - 1}, 0..{h - 1})")

    # ----- actions --------------------------------------------------------------------------
    def click(self, x: int | None, y: int | None, button: str = "left", count: int = 1) -> None:
        args = [] if x is None or y is None else ["mousemove", str(x), str(y)]
        args += ["click", "--repeat", str(count), "--delay", "60", str(BUTTONS[button])]
        self.xdotool(*args)

    def move(self, x: int, y: int) -> None:
        self.xdotool("mousemove", str(x), str(y))

    def button(self, button: str, down: bool) -> None:
        self.xdotool("mousedown" if down else "mouseup", str(BUTTONS[button]))

    def drag(self, x1: int, y1: int, x2: int, y2: int, button: str = "left") -> None:
        b = str(BUTTONS[button])
        args = ["mousemove", str(x1), str(y1), "mousedown", b, "sleep", "0.05"]
        for i in range(1, 5):  # intermediate motion, so apps see a drag, not a jump
            args += ["mousemove", str(x1 + (x2 - x1) * i // 4), str(y1 + (y2 - y1) * i // 4)]
            args += ["sleep", "0.02"]
        args += ["mouseup", b]
        self.xdotool(*args)

    def scroll(self, x: int | None, y: int | None, dy: int, dx: int = 0) -> None:
        """``dy > 0`` scrolls down (the content moves up), ``dx > 0`` right."""
        args = [] if x is None or y is None else ["mousemove", str(x), str(y)]
        if dy:
            args += ["click", "--repeat", str(abs(dy)), "--delay", "10", "5" if dy > 0 else "4"]
        if dx:
            args += ["click", "--repeat", str(abs(dx)), "--delay", "10", "7" if dx > 0 else "6"]
        if args:
            self.xdotool(*args)

    def type_text(self, text: str) -> None:
        """Line breaks are pressed as Return (xdotool types them as linefeeds, which editors
        ignore); xdotool's ``type`` takes every word after it, so each line is its own call."""
        for i, line in enumerate(text.replace("\r\n", "\n").split("\n")):
            if i:
                self.xdotool("key", "Return")
            if line:
                self.xdotool("type", "--delay", "2", "--", line, timeout=60.0)

    def key(self, keys: list[str], action: str = "key") -> None:
        self.xdotool(action, "--delay", "30", *keys)

    def release_all(self) -> None:
        """After a reset nothing may stay pressed from the last episode."""
        mods = ["shift", "ctrl", "alt", "super"]
        self.xdotool("keyup", *mods, "mouseup", "1")

    def settle(self) -> None:
        time.sleep(self.settle_s)

    # ----- observation -----------------------------------------------------------------------
    def screenshot(self) -> np.ndarray:
        try:
            image = ImageGrab.grab(xdisplay=self.display.name)
        except OSError as exc:  # a killed Xvfb: its bwrap may not have noticed yet
            self.display.wait_exit(2.0)
            self.check_alive()
            raise EnvCrashed(
                f"the X server of this session ({self.display.name}) did not answer: {exc}"
            ) from exc
        return np.asarray(image.convert("RGB"), dtype=np.uint8)

    def stable_screenshot(self, tries: int = 20, pause_s: float = 0.02) -> np.ndarray:
        """A screenshot taken once two in a row agree (apps done painting), or the last one."""
        last = self.screenshot()
        for _ in range(tries):
            time.sleep(pause_s)
            shot = self.screenshot()
            if np.array_equal(shot, last):
                return shot
            last = shot
        return last

    def windows(self) -> list[dict[str, Any]]:
        """The managed windows as the observation shows them (no ids: they change per reset)."""
        return [{k: v for k, v in w.items() if k != "id"} for w in self.window_list()]

    def window_list(self) -> list[dict[str, Any]]:
        """The managed windows with their X ids (what a verifier asks the X server about)."""
        env = self.display.env()
        try:
            listing = subprocess.run(
                ["wmctrl", "-lGx"], env=env, capture_output=True, text=True, timeout=5
            )
            active = subprocess.run(
                ["xprop", "-root", "_NET_ACTIVE_WINDOW"],
                env=env,
                capture_output=True,
                text=True,
                timeout=5,
            )
        except subprocess.TimeoutExpired:
            self.check_alive()
            raise EnvCrashed("the window manager does not answer") from None
        if listing.returncode != 0:
            self.check_alive()
            return []  # no EWMH window manager (yet): no managed windows
        focus = active.stdout.rsplit(" ", 1)[-1].strip() if "#" in active.stdout else ""
        out = []
        for line in listing.stdout.splitlines():
            parts = line.split(None, 8)
            if len(parts) < 8:
                continue
            wid, _desk, x, y, w, h, klass, _host = parts[:8]
            title = parts[8] if len(parts) > 8 else ""
            instance, _, cls = klass.partition(".")
            out.append(
                {
                    "id": int(wid, 16),
                    "title": title,
                    "class": cls or instance,
                    "instance": instance,
                    "x": int(x),
                    "y": int(y),
                    "width": int(w),
                    "height": int(h),
                    "focused": bool(focus) and int(wid, 16) == int(focus, 16),
                }
            )
        return out
