"""``palaestra/computer-v0``: a Linux desktop and a shell in one sandbox, one action space.

Decisions:

- Per session: one Xvfb (kept across resets), one sandbox per episode (see ``sandbox.py``),
  openbox and the task's apps inside it. Reset = kill the sandbox, restore the home from the
  template, write the task's files, start the sandbox, WM and apps, wait until the screen is
  still. A dead X server is restarted on reset; a step against it raises ``EnvCrashed``.
- Observation: ``screenshot`` (H x W x 3 uint8), ``windows`` (JSON list: title, class,
  geometry, focus), ``last_output`` (JSON of the last code action: stdout, stderr, exit code,
  timed out), ``cwd`` of the shell, ``goal`` and ``last_action_error``; ``observe=`` picks the
  parts, and adds ``a11y_tree`` (OSWorld's accessibility tree XML, ``a11y.py``), which is off
  by default: its bus makes GTK apps' accessibility bridge work, and reading it costs a step.
- After a GUI action the env waits ``settle_ms`` (default 50) before the screenshot, so the app
  has repainted; code actions wait for the code, not for the screen.
- A task's ``setup``: ``files`` {path: text}, ``binary`` {path: base64 bytes} (documents),
  ``dirs`` [path], ``modes`` {path: "755"}, ``commands`` [shell run in the sandbox before the
  episode], ``apps`` [[name, *args]] from ``desktop.APPS`` (``["calc", "/home/user/x.xlsx"]``
  opens the document in LibreOffice), ``cwd``. Paths are relative to the home.
  ``before_scoring`` [GUI actions, ``activate_window``] is played after the agent's last step
  and before the verifier reads the end state (``before_scoring.py``: OSWorld's save).
- The first reset of a worker with a LibreOffice app warms its profile once
  (``libreoffice.warm_profile``, inside that session's sandbox before anything else runs in
  it); every template home of the worker carries it from then on, so later resets start the
  app on a profile that skips LibreOffice's first-start work.
- A step has a time budget (``limits.step_s``, the gateway's default step timeout) for all of
  its tool calls together: a batch stops when it is spent, and what the step left running is
  stopped with it. A watchdog (``watchdog.py``) stops the whole session when its processes
  together go over their memory or CPU share; the next step raises why.
- ``done`` and ``fail`` end the episode; which one was called is part of the verifier's state
  (``agent_status``), so infeasible tasks (OSWorld's ``infeasible``) can be scored.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

import palaestra.verifiers.computer  # noqa: F401  (registers the file/command/window check kinds)
from palaestra.actions import Action
from palaestra.envs.base import PalaestraEnv
from palaestra.envs.computer import desktop, libreoffice
from palaestra.envs.computer.actions import (
    COMPUTER_ACTIONS,
    GUI_ACTIONS,
    parse_pyautogui,
    translate,
)
from palaestra.envs.computer.before_scoring import BeforeScoring
from palaestra.envs.computer.code import CodeResult, CodeRunner
from palaestra.envs.computer.display import Display
from palaestra.envs.computer.gui import Gui, combo, key_name
from palaestra.envs.computer.procs import window_pids
from palaestra.envs.computer.sandbox import (
    A11Y_BUS,
    HOME,
    Limits,
    Sandbox,
    chown_tree,
    run_isolated,
)
from palaestra.envs.computer.watchdog import Watchdog
from palaestra.errors import ActionError, EnvCrashed, InvalidRequest
from palaestra.spaces import FreeText, JSONText
from palaestra.tasks import Task
from palaestra.verifiers import VerifierResult
from palaestra.verifiers.computer import ComputerProbe

MAX_TEXT = 40_000
MAX_TREE = 4_000_000
#: the observation parts a session may ask for (``observe=``); the default leaves out the tree
PARTS = ("screenshot", "windows", "last_output", "cwd", "goal", "a11y_tree")
DEFAULT_PARTS = PARTS[:-1]


class ComputerEnv(PalaestraEnv):
    family = "computer"
    action_set = COMPUTER_ACTIONS

    def __init__(
        self,
        task: Any = None,
        *,
        width: int = 1024,
        height: int = 768,
        settle_ms: float = 50.0,
        limits: dict[str, Any] | None = None,
        observe: tuple[str, ...] | list[str] = DEFAULT_PARTS,
        **kwargs: Any,
    ) -> None:
        super().__init__(task, **kwargs)
        if not (320 <= width <= 3840 and 240 <= height <= 2160):
            raise TypeError("width must be in 320..3840 and height in 240..2160")
        self.width, self.height = int(width), int(height)
        self.set_parts(observe)
        self.sandbox = Sandbox(Limits(**(limits or {})))
        box = self.sandbox
        self.display = Display(self.width, self.height, box.uid, box.root / "x11", box.limits)
        self.sandbox.set_template(desktop.build_template)
        self.gui = Gui(self.display, settle_ms / 1000.0)
        self.code = CodeRunner(self.sandbox)
        self.watchdog = Watchdog(box.uid, box.limits, reapers=self._reapers)
        self._deadline = float("inf")
        self._last_output: dict[str, Any] = {}
        self.agent_status: str | None = None
        self._closed = False
        self._office_profile = libreoffice.warmed()  # the profile the template home carries
        self._before = BeforeScoring()  # the task's steps before scoring (``before_scoring.py``)

    def set_parts(self, observe: tuple[str, ...] | list[str]) -> None:
        """The parts observed from the next reset on (the tree's bus starts with the episode)."""
        if isinstance(observe, str) or set(observe) - set(PARTS):
            raise TypeError(f"observe must be a list of parts from {PARTS}, got {observe!r}")
        self.parts = tuple(p for p in PARTS if p in observe)
        space: dict[str, spaces.Space] = {
            "screenshot": spaces.Box(0, 255, (self.height, self.width, 3), np.uint8),
            "windows": JSONText(200_000),
            "last_output": JSONText(MAX_TEXT * 3),
            "cwd": FreeText(4096),
            "goal": FreeText(MAX_TEXT),
            "a11y_tree": FreeText(MAX_TREE),
        }
        self.observation_space = spaces.Dict(
            {**{p: space[p] for p in self.parts}, "last_action_error": FreeText(2000)}
        )

    # ----- hooks -----------------------------------------------------------------------------
    def _setup(self, task: Task | None) -> None:
        if self._closed:
            raise EnvCrashed("this env is closed")
        self._deadline = float("inf")  # the task's own setup is not a step
        self.sandbox.stop()
        if not self.display.alive():
            self.display.stop()
            self.display.start()
        setup = dict(task.setup) if task else {}
        apps = [list(a) for a in setup.get("apps", [] if task else [["terminal"]])]
        office = libreoffice.is_office(apps)
        warm = libreoffice.warmed()
        if office and warm is not None and self._office_profile is not warm:
            self._retemplate()  # another session of this worker warmed the profile
        self._before = BeforeScoring(setup.get("before_scoring", []), self.action_set)
        self.sandbox.restore_home()
        _write_setup(self.sandbox.home, setup, self.sandbox.uid)
        self.sandbox.a11y = "a11y_tree" in self.parts
        self._a11y_static: dict = {}  # what does not change in the tree, per episode
        self.sandbox.start(self.display)
        if office and libreoffice.warmed() is None:
            self._warm_office()
        desktop.start_session_bus(self.sandbox)
        if self.sandbox.a11y:
            desktop.start_a11y(self.sandbox)
        self.code.reset()
        self._last_output = {}
        self.agent_status = None
        self.gui.release_all()
        for cmd in setup.get("commands", []):
            result = self.code.shell(cmd, 20.0)
            if result.exit_code != 0:
                said = (result.stderr.strip() or result.stdout.strip())[-300:] or _silent(
                    cmd, result.exit_code
                )
                raise InvalidRequest(
                    f"the task's setup command {cmd[:80]!r} failed "
                    f"(exit {result.exit_code}): {said}",
                    field="task.setup",
                )
        self.code.reset()
        if setup.get("cwd"):
            self.code.cwd = f"{HOME}/{setup['cwd']}".rstrip("/")
        desktop.start_desktop(self.sandbox, self.gui, apps)
        if self.sandbox.a11y:
            desktop.wait_a11y(self.sandbox, apps)
        for action in setup.get("gui", []):
            self._apply(self.action_set.parse(translate(action)))
        self._screen: np.ndarray | None = self.gui.stable_screenshot()
        self.watchdog.begin_episode()  # the sums count from here

    def _warm_office(self) -> None:
        """The worker's LibreOffice profile warmed in this fresh sandbox and home (before
        anything else runs in it), then put into this session's template home."""

        def run(argv: list[str], timeout: float) -> None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                subprocess.run(self.sandbox.command(argv), timeout=timeout)

        libreoffice.warm_profile(run, self.sandbox.home)
        self._retemplate()

    def _retemplate(self) -> None:
        """The template home rebuilt, with the worker's warmed LibreOffice profile in it."""
        self.sandbox.set_template(desktop.build_template)
        self._office_profile = libreoffice.warmed()

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        self._deadline = time.monotonic() + self.sandbox.limits.step_s
        try:
            action = translate(action)
        except ActionError as exc:
            action = {"name": "pyautogui", "args": {"code": f"# {exc.detail}"}}
            self._pending_error = exc.detail
        try:
            return super().step(action)
        except EnvCrashed:
            if self.watchdog.breach:  # what broke (the X server, say) is the watchdog's doing
                raise EnvCrashed(self.watchdog.breach) from None
            raise

    def _apply(self, action: Action) -> bool:
        self._screen = None
        pending = getattr(self, "_pending_error", "")
        if pending:
            self._pending_error = ""
            raise ActionError(pending)
        self._check_session()
        name, a = action.name, action.args
        if name == "pyautogui":
            steps = [self.action_set.parse(s) for s in parse_pyautogui(a["code"])]
            for s in steps:  # check everything before doing anything
                self._check(s)
            ended = False
            for s in steps:
                self._left(s.name)
                ended = self._do(s) or ended
                if ended:
                    break
            if any(s.name in GUI_ACTIONS for s in steps):
                self.gui.settle()
            return ended
        self._check(action)
        ended = self._do(action)
        if name in GUI_ACTIONS:
            self.gui.settle()
        return ended

    def _check_session(self) -> None:
        """The session is whole: within its sums (the watchdog), its sandbox and X server up."""
        if self.watchdog.breach:
            self.watchdog.stop_all()  # again: a call may have started one since
            raise EnvCrashed(self.watchdog.breach)
        if not self.sandbox.alive():
            self.gui.check_alive()
            raise EnvCrashed("the session's sandbox died; reset the session")

    def _left(self, name: str) -> float:
        """What is left of the step's time budget (``limits.step_s``, all of a batch's tool
        calls together); none left is an agent mistake that stops the batch."""
        left = self._deadline - time.monotonic()
        if left <= 0.05:
            raise ActionError(
                f"{name}: this step's time budget ({self.sandbox.limits.step_s:g} s for all "
                "of its tool calls) is spent; the rest of the step did not run"
            )
        return left

    def _code(self, name: str, run: Any, timeout: float) -> None:
        """A code action within the step's budget; when the budget (not the action's own
        timeout) cut it, what the step left running is stopped too and the batch ends."""
        left = self._left(name)
        result = run(min(float(timeout), left))
        self._output(result)
        self._check_session()  # the watchdog may have stopped the session meanwhile
        if result.timed_out and left < float(timeout):
            self.sandbox.kill_strays()
            raise ActionError(
                f"{name}: this step's time budget ({self.sandbox.limits.step_s:g} s) ran out; "
                "what the step left running was stopped and the rest of it did not run"
            )

    def _check(self, action: Action) -> None:
        """Agent mistakes found before acting, so a rejected action changes nothing."""
        a = action.args
        for kx, ky in (("x", "y"), ("x1", "y1"), ("x2", "y2")):
            if a.get(kx) is not None and a.get(ky) is not None:
                self.gui.on_screen(action.name, a[kx], a[ky])
            elif (a.get(kx) is None) != (a.get(ky) is None):
                raise ActionError(f"{action.name}: give both {kx} and {ky}, or neither")
        if action.name == "key":
            combo(a["combo"])
        if action.name in ("key_down", "key_up"):
            key_name(a["key"])

    def _do(self, action: Action) -> bool:
        g, a, name = self.gui, action.args, action.name
        if name in ("click", "double_click", "right_click"):
            button = "right" if name == "right_click" else a.get("button", "left")
            g.click(a.get("x"), a.get("y"), button, 2 if name == "double_click" else 1)
        elif name == "move":
            g.move(a["x"], a["y"])
        elif name == "drag":
            x1, y1 = a.get("x1"), a.get("y1")
            if x1 is None or y1 is None:  # both or neither (checked before the step)
                loc = dict(p.split(":") for p in g.xdotool("getmouselocation").split()[:2])
                x1, y1 = int(loc["x"]), int(loc["y"])
            g.drag(x1, y1, a["x2"], a["y2"], a.get("button", "left"))
        elif name == "scroll":
            g.scroll(a.get("x"), a.get("y"), a["dy"], a["dx"])
        elif name in ("mouse_down", "mouse_up"):
            g.button(a["button"], name == "mouse_down")
        elif name == "type_text":
            g.type_text(a["text"])
        elif name == "key":
            g.key(combo(a["combo"]))
        elif name in ("key_down", "key_up"):
            g.key([key_name(a["key"])], "keydown" if name == "key_down" else "keyup")
        elif name == "run_shell":
            self._code(name, lambda t: self.code.shell(a["cmd"], t), a["timeout"])
        elif name == "run_python":
            self._code(name, lambda t: self.code.python(a["code"], t), a["timeout"])
        elif name == "write_file":
            self._left(name)
            result = self.code.write_file(a["path"], a["content"])
            self._output(result)
            if result.exit_code != 0:
                raise ActionError(f"write_file: {result.stderr.strip()[:500]}")
        elif name == "wait":
            time.sleep(min(a["seconds"], self._left(name)))
        elif name == "done":
            self.agent_status = "done"
            return True
        elif name == "fail":
            self.agent_status = "fail"
            self._last_output = {"action": "fail", "reason": a.get("reason", "")}
            return True
        return False

    def _output(self, result: CodeResult) -> None:
        self._last_output = result.to_json()

    def _observe(self) -> dict[str, Any]:
        parts = self.parts
        obs: dict[str, Any] = {}
        if "screenshot" in parts:
            screen = self._screen if self._screen is not None else self.gui.screenshot()
            self._screen = obs["screenshot"] = screen
        if "windows" in parts:
            obs["windows"] = json.dumps(self.gui.windows())
        if "last_output" in parts:
            obs["last_output"] = json.dumps(self._last_output)[: MAX_TEXT * 3]
        if "cwd" in parts:
            obs["cwd"] = self.code.cwd[:4096]
        if "goal" in parts:
            obs["goal"] = (self.task.instruction if self.task else "")[:MAX_TEXT]
        if "a11y_tree" in parts:
            from palaestra.envs.computer import a11y  # jeepney: the ``computer`` extra

            pid, static = self.sandbox.pid, self._a11y_static
            tree = a11y.read_tree(pid, A11Y_BUS, static=static) if self.sandbox.alive() else ""
            obs["a11y_tree"] = tree[:MAX_TREE]
        return obs

    def verify(self) -> VerifierResult:
        """The task's ``before_scoring`` steps, once per end state (not in a dense reward's
        mid-episode reads), then the verifier; the steps' failures join its private report."""
        ended = self._episode_over or self.agent_status is not None
        at_end = ended or self._steps >= self.max_steps or not self.dense_reward
        if self._before.due(self._steps, at_end):
            self._deadline = time.monotonic() + self.sandbox.limits.step_s
            self._before.play(self._apply, self.display, self._steps)
        return self._before.report(super().verify())

    def state_probe(self) -> ComputerProbe:
        return ComputerProbe(
            self.sandbox.home,
            self._run_check,
            windows=self._owned_windows,
            processes=self.sandbox.processes,
            agent_status=self.agent_status,
            last_output=self._last_output,
        )

    def _run_check(self, command: str, timeout: float = 10.0) -> tuple[int, str, str]:
        """The probe's ``run``: a verifier's command in a fresh sandbox over a read-only view
        of the home, in the agent's pid namespace (it sees the agent's processes), with the
        agent's processes frozen meanwhile (``sandbox.run_isolated``)."""
        sandbox = self.sandbox
        with sandbox.frozen():
            done = run_isolated(sandbox.home, sandbox.uid, command, timeout, sandbox.pid)
        return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode("utf8")

    def _owned_windows(self) -> list[dict[str, Any]]:
        """The windows with the process the X server says created each (``procs.py``): the
        session's process record, or None for a client outside the session."""
        wins = self.gui.window_list()
        pids = window_pids(self.display.name, [w["id"] for w in wins])
        procs = {p["pid"]: p for p in self.sandbox.processes()}
        return [
            {
                **{k: v for k, v in w.items() if k != "id"},
                "process": procs.get(pids.get(w["id"], 0)),
            }
            for w in wins
        ]

    def render(self) -> np.ndarray:
        return self.gui.screenshot()

    def _reapers(self) -> list[int]:
        """The sandbox's init, which reaps orphans (their CPU shows in its ``cutime``)."""
        return [self.sandbox.pid] if self.sandbox.pid else []

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.watchdog.close()
            self.sandbox.close()
            self.display.stop()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


#: what a silent failure of xdg-utils means (they print nothing: their exit code is the reason)
_XDG_EXITS = {
    1: "a syntax error on its command line",
    2: "a file named on its command line (a .desktop file?) does not exist",
    3: "a tool it needs is missing",
    4: "the action failed",
    5: "no permission to read or write a file it needs",
}


def _silent(cmd: str, code: int | None) -> str:
    """The reason a setup command that printed nothing failed, as far as it is known."""
    if cmd.lstrip().startswith("xdg-") and code in _XDG_EXITS:
        return f"(no output; for xdg-utils exit {code} means {_XDG_EXITS[code]})"
    return "(no output)"


def _write_setup(home: Path, setup: dict[str, Any], uid: int) -> None:
    """The task's files, written from the host into the fresh home (before the sandbox runs,
    so no agent symlink can redirect them), then handed to the session's user."""
    for rel in setup.get("dirs", []):
        _inside(home, rel).mkdir(parents=True, exist_ok=True)
    for rel, content in setup.get("files", {}).items():
        path = _inside(home, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    for rel, data in setup.get("binary", {}).items():
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, TypeError, ValueError) as exc:
            raise InvalidRequest(
                f"the task's setup binary {rel!r} is not base64: {exc}", field="task.setup"
            ) from None
        path = _inside(home, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
    chown_tree(home, uid)
    for rel, mode in setup.get("modes", {}).items():
        _inside(home, rel).chmod(int(str(mode), 8))
    for rel, stamp in setup.get("mtimes", {}).items():
        path = _inside(home, rel)
        subprocess.run(["touch", "-h", "-d", str(stamp), str(path)], check=True)


def _inside(home: Path, rel: str) -> Path:
    rel = rel.removeprefix(HOME + "/").removeprefix("~/")
    path = (home / rel).resolve()
    if not path.is_relative_to(home.resolve()):
        raise InvalidRequest(f"the task's setup path {rel!r} leaves the home", field="task")
    return path
