"""``palaestra/mobile-v0``: touch-driven phone apps with AndroidWorld's JSON actions.

The env owns what an action means, the same on every backend: an ``index`` is the centre of that
element of the latest element list, a ``direction`` is a swipe across the middle of the screen,
``input_text`` taps the field and replaces its text, ``answer`` writes to the chat and
``status`` ends the episode (``infeasible`` with the last answer as its reason, so say why with
``answer`` first). Taps outside the screen, missing indices, zero-length swipes and unknown apps
are agent mistakes (``last_action_error``). The phone is the embedded one unless the options name
an Appium server (``backend="appium", appium_url=..., capabilities={...}``).

Actions are accepted as AndroidWorld writes them, ``{"action_type": "click", "index": 3}``, as
well as palaestra's ``{"name": ..., "args": ...}`` and call strings (``click(index=3)``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from palaestra.actions import Action, ActionSet, Param, primitive
from palaestra.chat import ANSWER, INFEASIBLE, answers
from palaestra.envs.base import PalaestraEnv
from palaestra.envs.mobile.phone import Phone, PhoneError, UIElement
from palaestra.envs.runtimes.simuser.bridge import AskUser, asker, exchange
from palaestra.errors import ActionError, EnvCrashed
from palaestra.spaces import FreeText, JSONText
from palaestra.tasks import Task

_I = Param("index", "int", "element index from ui_elements", default=None, minimum=0)
_X = Param("x", "float", "screen x in pixels", default=None)
_Y = Param("y", "float", "screen y in pixels", default=None)
_DIR = Param("direction", "str", choices=("up", "down", "left", "right"), default=None)
MOBILE_ACTIONS = ActionSet(
    [
        primitive("click", "Tap an element (index) or a point (x, y).", _I, _X, _Y),
        primitive("tap", "The same as click.", _I, _X, _Y),
        primitive("double_tap", "Tap twice.", _I, _X, _Y),
        primitive("long_press", "Press and hold.", _I, _X, _Y),
        primitive(
            "swipe",
            "Swipe in a direction, or from (x1, y1) to (x2, y2).",
            _DIR,
            Param("x1", "float", default=None),
            Param("y1", "float", default=None),
            Param("x2", "float", default=None),
            Param("y2", "float", default=None),
            Param("duration_ms", "float", default=300.0, minimum=20, maximum=5000),
        ),
        primitive("scroll", "Scroll the content (down shows what is below).", _DIR, _I),
        primitive("input_text", "Type text into a field (replacing its text).", Param("text"), _I),
        primitive("keyboard_enter", "Press Enter."),
        primitive("navigate_back", "Go back."),
        primitive("navigate_home", "Go to the home screen."),
        primitive("open_app", "Open an app by name.", Param("app_name")),
        primitive("wait", "Wait a moment.", Param("seconds", "float", default=1.0, maximum=10)),
        primitive("answer", "Tell the user something (answers go here).", Param("text")),
        primitive(
            "status",
            "End the task: complete, or infeasible (say why with answer first).",
            Param("goal_status", "str", choices=("complete", "infeasible")),
        ),
        primitive("ask_user", "Ask the user a question.", Param("question")),
    ],
    name="mobile",
)
MAX_TEXT = 20_000
PARTS = ("screenshot", "ui_elements", "foreground_app", "goal", "chat")


def from_android_world(action: Any) -> Any:
    """``{"action_type": ..., **fields}`` (dict or JSON text) -> palaestra's canonical form."""
    if isinstance(action, str) and action.strip().startswith("{"):
        try:
            action = json.loads(action)
        except json.JSONDecodeError:
            return action
    if isinstance(action, Mapping) and "action_type" in action:
        args = {k: v for k, v in action.items() if k != "action_type" and v is not None}
        return {"name": action["action_type"], "args": args}
    return action


class MobileEnv(PalaestraEnv):
    family = "mobile"
    action_set = MOBILE_ACTIONS

    def __init__(
        self,
        task: Any = None,
        *,
        backend: str = "embedded",
        profile: str = "phone",
        appium_url: str | None = None,
        capabilities: dict[str, Any] | None = None,
        observe: tuple[str, ...] | list[str] = PARTS,
        **kwargs: Any,
    ) -> None:
        super().__init__(task, **kwargs)
        if isinstance(observe, str) or set(observe) - set(PARTS):
            raise TypeError(f"observe must be a list of parts from {PARTS}, got {observe!r}")
        self.parts = tuple(p for p in PARTS if p in observe)
        if backend == "embedded":
            from palaestra.envs.mobile.embedded import PROFILES

            if profile not in PROFILES:
                raise TypeError(f"profile must be one of {sorted(PROFILES)}, not {profile!r}")
        self.phone: Phone = _make_phone(backend, profile, appium_url, capabilities)
        w, h = self.phone.size
        space: dict[str, spaces.Space] = {
            "screenshot": spaces.Box(0, 255, (h, w, 3), np.uint8),
            "ui_elements": JSONText(1_000_000),
            "foreground_app": FreeText(200),
            "goal": FreeText(MAX_TEXT),
            "chat": FreeText(MAX_TEXT),
        }
        self.observation_space = spaces.Dict(
            {**{p: space[p] for p in self.parts}, "last_action_error": FreeText(2000)}
        )
        self._elements: list[UIElement] = []
        self._chat: list[str] = []
        self._user: AskUser | None = None  # answers ask_user from the task's hidden details
        self._goal = ""

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        return super().step(from_android_world(action))

    # ----- hooks ---------------------------------------------------------------------------
    def _setup(self, task: Task | None) -> None:
        self._chat = []
        self._user = asker(task, int(self.np_random.integers(2**31)))
        self._goal = task.instruction if task else ""
        self._guard(self.phone.start, dict(task.setup) if task else {}, 0)

    def _apply(self, action: Action) -> bool:
        a = {k: v for k, v in action.args.items() if v is not None}
        name = "click" if action.name == "tap" else action.name
        try:
            return self._do(name, a)
        except PhoneError as exc:
            raise ActionError(f"{name}: {exc}") from None

    def _do(self, name: str, a: dict[str, Any]) -> bool:
        p = self.phone
        if name in ("click", "double_tap", "long_press"):
            x, y = self._point(name, a)
            {"click": p.tap, "double_tap": p.double_tap, "long_press": p.long_press}[name](x, y)
        elif name == "swipe":
            p.swipe(*self._swipe_line(a), a.get("duration_ms", 300.0))
        elif name == "scroll":
            if "direction" not in a:
                raise ActionError("scroll needs a direction: up, down, left or right")
            # content moves with the finger: to see what is below, the finger goes up
            flip = {"down": "up", "up": "down", "left": "right", "right": "left"}
            x1, y1, x2, y2 = self._swipe_line({"direction": flip[a["direction"]]})
            p.swipe(x1, y1, x2, y2, 250)
        elif name == "input_text":
            if "index" in a:
                p.tap(*self._point(name, {"index": a["index"]}))
            p.type_text(a["text"])
        elif name == "keyboard_enter":
            p.enter()
        elif name == "navigate_back":
            p.back()
        elif name == "navigate_home":
            p.home()
        elif name == "open_app":
            p.open_app(a["app_name"])
        elif name == "wait":
            time.sleep(a["seconds"])
        elif name == "answer":
            self._chat.append(f"{ANSWER}{a['text']}")
        elif name == "ask_user":
            self._chat += exchange(self._user, a["question"])
        elif name == "status":
            if a["goal_status"] == "infeasible":
                said = answers(self._chat)
                reason = said[-1] if said else ""
                self._chat.append(f"{INFEASIBLE}{reason}")
            return True
        return False

    def _point(self, name: str, a: dict[str, Any]) -> tuple[float, float]:
        if "index" in a and ("x" in a or "y" in a):
            raise ActionError(f"{name}: give an index or x and y, not both")
        if "index" in a:
            if a["index"] >= len(self._elements):
                raise ActionError(
                    f"{name}: there is no element {a['index']} (the screen lists "
                    f"{len(self._elements)}: 0..{len(self._elements) - 1})"
                )
            return self._elements[a["index"]].center
        if "x" not in a or "y" not in a:
            raise ActionError(f"{name} needs an index, or x and y")
        self._on_screen(name, a["x"], a["y"])
        return a["x"], a["y"]

    def _on_screen(self, name: str, x: float, y: float) -> None:
        w, h = self.phone.size
        if not (0 <= x < w and 0 <= y < h):
            raise ActionError(f"{name}: ({x:g}, {y:g}) is outside the {w}x{h} screen")

    def _swipe_line(self, a: dict[str, Any]) -> tuple[float, float, float, float]:
        w, h = self.phone.size
        if "direction" in a and any(k in a for k in ("x1", "y1", "x2", "y2")):
            raise ActionError("swipe: give a direction or x1, y1, x2, y2, not both")
        if "direction" in a:
            cx, cy = w / 2, h / 2
            dx, dy = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}[
                a["direction"]
            ]
            return cx - dx * w * 0.3, cy - dy * h * 0.25, cx + dx * w * 0.3, cy + dy * h * 0.25
        try:
            x1, y1, x2, y2 = a["x1"], a["y1"], a["x2"], a["y2"]
        except KeyError:
            raise ActionError("swipe needs a direction, or x1, y1, x2 and y2") from None
        for x, y in ((x1, y1), (x2, y2)):
            self._on_screen("swipe", x, y)
        if (x1, y1) == (x2, y2):
            raise ActionError("swipe: the start and the end are the same point (zero length)")
        return x1, y1, x2, y2

    def _observe(self) -> dict[str, Any]:
        # the element list is read every step: actions by index refer to it
        self._elements = self._guard(self.phone.elements)
        obs = {
            "ui_elements": json.dumps(
                [e.to_json(self.phone.size) for e in self._elements], ensure_ascii=False
            ),
            "foreground_app": self.phone.foreground()[:200],
            "goal": self._goal[:MAX_TEXT],
            "chat": "\n".join(self._chat)[-MAX_TEXT:],
        }
        if "screenshot" in self.parts:
            obs["screenshot"] = self._guard(self.phone.screenshot)
        return {p: obs[p] for p in self.parts}

    def _guard(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except PhoneError as exc:
            raise EnvCrashed(f"the phone failed: {exc}") from None

    def state_probe(self) -> MobileProbe:
        return MobileProbe(self)

    def render(self) -> np.ndarray:
        return self.phone.screenshot()

    def close(self) -> None:
        self.phone.close()


class MobileProbe:
    """Privileged reads for verifiers: the phone's state (an app database) and the chat."""

    def __init__(self, env: MobileEnv) -> None:
        self.env = env

    def read(self) -> dict[str, Any]:
        # the goal: an answer may repeat what the question named (verifiers/answers.py)
        return {**self.env.phone.state(), "chat": list(self.env._chat), "goal": self.env._goal}


def _make_phone(
    backend: str, profile: str, url: str | None, capabilities: dict[str, Any] | None
) -> Phone:
    if backend == "embedded":
        from palaestra.envs.mobile.embedded import EmbeddedPhone

        return EmbeddedPhone(profile)
    if backend == "appium":
        if not url:
            raise TypeError("the appium backend needs appium_url (e.g. http://127.0.0.1:4723)")
        from palaestra.envs.mobile.appium_phone import AppiumPhone

        return AppiumPhone(url, capabilities or {})
    raise TypeError(f"backend must be 'embedded' or 'appium', not {backend!r}")
