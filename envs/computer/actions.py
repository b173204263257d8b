"""One action space for GUI and code, plus OSWorld's two action formats, translated.

Decisions:

- Coordinates are screen pixels; the Param bounds are generous (0..7679) because the resolution
  is chosen per session: the env rejects points off its own screen as an agent mistake.
- ``scroll(x, y, dy)``: ``dy > 0`` scrolls down, as in palaestra's web family; OSWorld's
  ``SCROLL`` and ``pyautogui.scroll(n)`` count up-positive and are flipped when translated.
- OSWorld ``computer_13`` dicts (``{"action_type": "CLICK", "parameters": {...}}``) and
  ``pyautogui`` call strings (``"pyautogui.click(100, 200)"``, several lines allowed, also the
  bare ``WAIT``/``DONE``/``FAIL``) are accepted by ``step``. pyautogui text is parsed with
  ``ast``: only calls of known functions with literal arguments, ``import`` lines and
  ``time.sleep`` are allowed, and nothing is ever executed as code on the host. A multi-call
  string becomes one ``pyautogui(code)`` action, checked in full before anything is done.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from typing import Any

from palaestra.actions import Action, ActionSet, Param, Primitive, primitive
from palaestra.errors import ActionError

MAX_XY = 7679
_X = Param("x", "int", "screen x in pixels", minimum=0, maximum=MAX_XY)
_Y = Param("y", "int", "screen y in pixels", minimum=0, maximum=MAX_XY)
_OX = Param("x", "int", "screen x (default: where the pointer is)", None, 0, MAX_XY)
_OY = Param("y", "int", "screen y (default: where the pointer is)", None, 0, MAX_XY)
_BUTTON = Param("button", "str", default="left", choices=("left", "middle", "right"))
_TIMEOUT = Param("timeout", "float", "seconds before it is killed", 30.0, 0.1, 120.0)


def _runner(name: str, what: str, source: str) -> Primitive:
    """Shell and Python are run and reported back alike; only the language differs."""
    return primitive(
        name,
        f"{what}; stdout, stderr and the exit code come back in last_output.",
        Param(source, max_length=100_000),
        _TIMEOUT,
    )


COMPUTER_ACTIONS = ActionSet(
    [
        primitive("click", "Click at (x, y).", _OX, _OY, _BUTTON),
        primitive("double_click", "Double-click at (x, y).", _OX, _OY, _BUTTON),
        primitive("right_click", "Right-click at (x, y).", _OX, _OY),
        primitive("move", "Move the pointer to (x, y).", _X, _Y),
        primitive(
            "drag",
            "Press at (x1, y1) (default: the pointer), move to (x2, y2), release.",
            Param("x1", "int", default=None, minimum=0, maximum=MAX_XY),
            Param("y1", "int", default=None, minimum=0, maximum=MAX_XY),
            Param("x2", "int", minimum=0, maximum=MAX_XY),
            Param("y2", "int", minimum=0, maximum=MAX_XY),
            _BUTTON,
        ),
        primitive(
            "scroll",
            "Scroll at (x, y): dy > 0 down, dy < 0 up (in wheel clicks); dx > 0 right.",
            _OX,
            _OY,
            Param("dy", "int", default=0, minimum=-50, maximum=50),
            Param("dx", "int", default=0, minimum=-50, maximum=50),
        ),
        primitive("mouse_down", "Press a mouse button (and hold).", _BUTTON),
        primitive("mouse_up", "Release a mouse button.", _BUTTON),
        primitive("type_text", "Type text with the keyboard.", Param("text", max_length=20_000)),
        primitive(
            "key",
            "Press a key or combination: 'Return', 'ctrl+s', 'ctrl+shift+t'; several "
            "separated by spaces are pressed one after the other.",
            Param("combo", max_length=500),
        ),
        primitive("key_down", "Hold a key down.", Param("key", max_length=50)),
        primitive("key_up", "Release a held key.", Param("key", max_length=50)),
        _runner("run_shell", "Run a bash command in the home directory's current folder", "cmd"),
        _runner("run_python", "Run Python 3 code", "code"),
        primitive(
            "write_file",
            "Write text to a file (relative paths start at the current folder).",
            Param("path", max_length=4096),
            Param("content", max_length=1_000_000),
        ),
        primitive(
            "pyautogui",
            "pyautogui calls with literal arguments, one per line (parsed, never executed).",
            Param("code", max_length=20_000),
        ),
        primitive("wait", "Wait.", Param("seconds", "float", default=1.0, minimum=0, maximum=5)),
        primitive("done", "Finish: the task is complete."),
        primitive(
            "fail",
            "Finish: the task cannot be done (say why).",
            Param("reason", default="", max_length=2000),
        ),
    ],
    name="computer",
)

#: the actions that drive the screen as a person would (mouse, keyboard, pyautogui): what a
#: task's ``before_scoring`` may play (besides waiting), and after which the screen settles
GUI_ACTIONS = frozenset(
    {
        "click",
        "double_click",
        "right_click",
        "move",
        "drag",
        "scroll",
        "mouse_down",
        "mouse_up",
        "type_text",
        "key",
        "key_down",
        "key_up",
        "pyautogui",
    }
)

# ----- OSWorld computer_13 -------------------------------------------------------------------
_C13 = {
    "MOVE_TO": "move",
    "CLICK": "click",
    "MOUSE_DOWN": "mouse_down",
    "MOUSE_UP": "mouse_up",
    "RIGHT_CLICK": "right_click",
    "DOUBLE_CLICK": "double_click",
    "DRAG_TO": "drag",
    "SCROLL": "scroll",
    "TYPING": "type_text",
    "PRESS": "key",
    "KEY_DOWN": "key_down",
    "KEY_UP": "key_up",
    "HOTKEY": "key",
    "WAIT": "wait",
    "FAIL": "fail",
    "DONE": "done",
}


def from_computer_13(action: Mapping[str, Any]) -> dict[str, Any]:
    """``{"action_type": "CLICK", "parameters": {"x": 1, "y": 2}}`` -> a canonical action.

    ``DRAG_TO`` drags from the pointer's position, which only the env knows: it comes back as
    ``drag`` without ``x1``/``y1``, which the env fills in.
    """
    kind = str(action.get("action_type", "")).upper()
    params = dict(action.get("parameters") or {})
    if kind not in _C13:
        raise ActionError(f"unknown computer_13 action_type {kind!r}; known: {sorted(_C13)}")
    name = _C13[kind]
    args: dict[str, Any] = {}
    if kind == "CLICK":
        clicks = int(params.get("num_clicks", 1))
        name = "double_click" if clicks == 2 else "click"
        args = {k: params[k] for k in ("x", "y", "button") if k in params}
    elif kind in ("MOVE_TO", "RIGHT_CLICK", "DOUBLE_CLICK"):
        args = {k: params[k] for k in ("x", "y") if k in params}
    elif kind in ("MOUSE_DOWN", "MOUSE_UP"):
        args = {k: params[k] for k in ("button",) if k in params}
    elif kind == "DRAG_TO":
        args = {"x2": params.get("x"), "y2": params.get("y")}
    elif kind == "SCROLL":
        args = {"dy": -int(params.get("dy", 0)), "dx": int(params.get("dx", 0))}
    elif kind == "TYPING":
        args = {"text": params.get("text", "")}
    elif kind in ("PRESS", "KEY_DOWN", "KEY_UP"):
        args = {"combo" if kind == "PRESS" else "key": params.get("key", "")}
    elif kind == "HOTKEY":
        keys = params.get("keys", [])
        args = {"combo": "+".join(keys) if isinstance(keys, list) else str(keys)}
    elif kind == "WAIT":
        args = {"seconds": float(params.get("seconds", 1.0))}
    return {"name": name, "args": args}


# ----- pyautogui -----------------------------------------------------------------------------
#: pyautogui function -> (palaestra action, its positional parameter names)
_PYAUTOGUI: dict[str, tuple[str, tuple[str, ...]]] = {
    "click": ("click", ("x", "y", "clicks", "interval", "button")),
    "leftClick": ("click", ("x", "y")),
    "doubleClick": ("double_click", ("x", "y", "interval", "button")),
    "rightClick": ("right_click", ("x", "y")),
    "middleClick": ("click", ("x", "y")),
    "moveTo": ("move", ("x", "y", "duration")),
    "dragTo": ("drag", ("x", "y", "duration", "button")),
    "scroll": ("scroll", ("clicks", "x", "y")),
    "vscroll": ("scroll", ("clicks", "x", "y")),
    "hscroll": ("scroll", ("clicks", "x", "y")),
    "mouseDown": ("mouse_down", ("x", "y", "button")),
    "mouseUp": ("mouse_up", ("x", "y", "button")),
    "write": ("type_text", ("message", "interval")),
    "typewrite": ("type_text", ("message", "interval")),
    "press": ("key", ("keys", "presses", "interval")),
    "hotkey": ("key", ()),
    "keyDown": ("key_down", ("key",)),
    "keyUp": ("key_up", ("key",)),
}
_SPECIAL = {"WAIT": {"name": "wait", "args": {}}, "DONE": {"name": "done", "args": {}}}


def is_pyautogui(text: str) -> bool:
    t = text.strip()
    return t in ("WAIT", "DONE", "FAIL") or "pyautogui." in t or t.startswith("import pyautogui")


def parse_pyautogui(code: str) -> list[dict[str, Any]]:
    """pyautogui text -> canonical actions, or ActionError naming the first bad line."""
    text = code.strip()
    if text in _SPECIAL:
        return [_SPECIAL[text]]
    if text == "FAIL":
        return [{"name": "fail", "args": {"reason": ""}}]
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ActionError(f"pyautogui: cannot parse line {exc.lineno}: {exc.msg}") from None
    out: list[dict[str, Any]] = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            raise ActionError(
                f"pyautogui: line {node.lineno} is not a plain call; only pyautogui.<fn>(...) "
                "and time.sleep(...) calls with literal arguments are accepted"
            )
        out += _call(node.value)
    return out


def _call(call: ast.Call) -> list[dict[str, Any]]:
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        raise ActionError(f"pyautogui: line {call.lineno}: call pyautogui.<fn>(...) only")
    module, fn = func.value.id, func.attr
    try:
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
    except (ValueError, SyntaxError, TypeError):
        raise ActionError(
            f"pyautogui: line {call.lineno}: arguments must be literals (numbers, strings)"
        ) from None
    if module == "time" and fn == "sleep":
        seconds = args[0] if args else kwargs.get("secs", kwargs.get("seconds", 0))
        return [{"name": "wait", "args": {"seconds": min(float(seconds), 5.0)}}]
    if module != "pyautogui" or fn not in _PYAUTOGUI:
        raise ActionError(
            f"pyautogui: line {call.lineno}: {module}.{fn}() is not supported; supported: "
            f"{', '.join(sorted(_PYAUTOGUI))}, time.sleep"
        )
    name, names = _PYAUTOGUI[fn]
    if fn == "hotkey":
        keys = [str(a) for a in args]
        return [{"name": "key", "args": {"combo": "+".join(keys)}}]
    bound = dict(zip(names, args, strict=False))
    bound.update(kwargs)
    if isinstance(bound.get("x"), tuple | list):  # click((x, y))
        bound["x"], bound["y"] = bound["x"][:2]
    xy = {k: round(float(bound[k])) for k in ("x", "y") if bound.get(k) is not None}
    button = bound.get("button")
    out: dict[str, Any] = {}
    if name in ("click", "double_click"):
        clicks = int(bound.get("clicks", 1))
        if fn == "middleClick":
            button = "middle"
        if clicks == 2:
            name = "double_click"
        out = {**xy, **({"button": button} if button else {})}
    elif name in ("right_click", "move"):
        out = xy
    elif name == "drag":
        out = {"x2": xy.get("x"), "y2": xy.get("y")}
        if button:
            out["button"] = button
    elif name == "scroll":
        clicks = int(bound.get("clicks", 0))
        out = {**xy, ("dx" if fn == "hscroll" else "dy"): clicks if fn == "hscroll" else -clicks}
    elif name in ("mouse_down", "mouse_up"):
        out = {"button": button} if button else {}
        if len(xy) == 2:
            return [{"name": "move", "args": xy}, {"name": name, "args": out}]
    elif name == "type_text":
        msg = bound.get("message", "")
        out = {"text": "".join(msg) if isinstance(msg, list) else str(msg)}
    elif name == "key":
        keys = bound.get("keys", "")
        keys = keys if isinstance(keys, list) else [keys]
        presses = int(bound.get("presses", 1))
        out = {"combo": " ".join(str(k) for k in keys for _ in range(presses))}
    elif name in ("key_down", "key_up"):
        out = {"key": str(bound.get("key", ""))}
    return [{"name": name, "args": out}]


def translate(action: Any) -> Any:
    """What ``step`` receives -> something ``COMPUTER_ACTIONS.parse`` accepts."""
    if isinstance(action, str):
        text = action.strip()
        if text.startswith("{"):
            try:
                data = json.loads(text)
            except json.JSONDecodeError:
                return action
            if isinstance(data, Mapping) and "action_type" in data:
                return from_computer_13(data)
            return action
        if is_pyautogui(text):
            return Action("pyautogui", {"code": text})
        return action
    if isinstance(action, Mapping) and "action_type" in action:
        return from_computer_13(action)
    return action
