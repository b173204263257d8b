"""A recorded session as the trajectory viewer shows it: one frame per reset or step, rendered
for the world it came from.

Every frame carries what happened (the action, reward, error, step time, and at an episode's
end the verdict as the API gives it: score, success, error, never the checks) and what the
agent then saw: every image part (a web or desktop screenshot, a phone screen, CAD renders of
the part and its target) and every text part. Some worlds get more:

- **conversations** (usersim, tau2): the chat as bubbles, built from the actions and what
  answered them: the assistant's messages, its tool calls with their arguments, each tool's
  result, the user's replies and the env's errors;
- **web pages**: the element an action targets is found by its bid, highlighted in the
  accessibility tree and, when the observation holds element boxes
  (``extra_element_properties``) or the action gives coordinates, marked on the screenshot the
  agent acted on.

The instruction shown per episode is the one the agent was given: the goal the env showed at
reset, else the task view's instruction (``palaestra.data.episodes.Episode.instruction`` reads
it the same way for exports).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from palaestra.server import live

#: the longest text of one observation part sent to the browser
MAX_TEXT = 60_000
#: parts shown elsewhere than in the text panels
_SHOWN_APART = {"goal", "last_action_error", "user_message", "last_tool_result"}
#: actions whose first argument is an element's bid (BrowserGym's and palaestra's web actions)
_BID = re.compile(r"^\s*(\w+)\(\s*(?:bid\s*=\s*)?['\"]([^'\"]+)['\"]")
_XY = re.compile(r"^\s*(?:mouse_click|mouse_dblclick|click_xy|tap)\(\s*([\d.]+)\s*,\s*([\d.]+)")


def transcript(
    run_id: str, sid: str, events: list[dict[str, Any]], meta: dict[str, Any]
) -> dict[str, Any]:
    """The viewer's data for a recorded session (events as the runs API returns them)."""
    env = str(meta.get("env") or "")
    frames: list[dict[str, Any]] = []
    instructions: dict[str, str] = {}
    for e in events:
        if e.get("type") not in ("reset", "step"):
            continue
        found = e.get("observation")
        obs: dict[str, Any] = found if isinstance(found, dict) else {}
        info = e.get("info") or {}
        if e["type"] == "reset":
            instructions[str(e.get("episode"))] = instruction(obs, info)
        call = parse_call(e["action"]) if "action" in e else None
        frames.append(
            {
                "episode": e.get("episode"),
                "index": e.get("index", 0),
                "action": live.action_text(e["action"]) if "action" in e else "(reset)",
                "reward": e.get("reward"),
                "done": bool(e.get("terminated") or e.get("truncated")),
                "error": live.step_error(e),
                "verifier": e.get("verifier") or info.get("verifier"),
                "ms": e.get("timing_ms"),
                "images": _images(run_id, sid, obs),
                "texts": _texts(obs),
                "chat": _chat(call, obs, e["type"] == "reset"),
                "call": call,
            }
        )
    _mark_targets(frames)
    return {
        "env": env,
        "task": meta.get("task"),
        "tags": meta.get("tags") or {},
        "instructions": instructions,
        "frames": frames,
        "conversation": any(f["chat"] for f in frames),
    }


def instruction(obs: dict[str, Any], info: dict[str, Any]) -> str:
    """What the agent was told: the env's goal at reset, else the task view's instruction."""
    goal = obs.get("goal")
    if isinstance(goal, str) and goal.strip():
        return goal
    found = info.get("task")
    view: dict[str, Any] = found if isinstance(found, dict) else {}
    return str(view.get("instruction") or obs.get("spec") or "")


def parse_call(action: Any) -> dict[str, Any] | None:
    """``{"name", "args"}`` of an action written as a call string, ``{"name", "args"}``, or an
    OpenAI tool call; None when it is none of those (the env said why)."""
    if isinstance(action, dict):
        fn = action.get("function")
        if isinstance(fn, dict):
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = {"arguments": fn.get("arguments")}
            return {"name": str(fn.get("name")), "args": args if isinstance(args, dict) else {}}
        if "name" in action:
            args = action.get("args") or action.get("arguments") or {}
            return {"name": str(action["name"]), "args": args if isinstance(args, dict) else {}}
        return None
    if not isinstance(action, str) or len(action) > 100_000:
        return None
    try:
        node = ast.parse(action.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    try:
        positional = [ast.literal_eval(a) for a in node.args]
        named = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except (ValueError, SyntaxError, TypeError):
        return None
    by_position = {str(i): v for i, v in enumerate(positional)}
    return {"name": node.func.id, "args": {**by_position, **named}}


def _arg(call: dict[str, Any], index: int, name: str) -> Any:
    args = call["args"]
    return args.get(name, args.get(str(index)))


def _chat(call: dict[str, Any] | None, obs: dict[str, Any], reset: bool) -> list[dict[str, Any]]:
    """The bubbles a reset or step adds to a conversation (none outside conversations)."""
    if "user_message" not in obs and "conversation" not in obs:
        return []
    out: list[dict[str, Any]] = []
    said = str(obs.get("user_message") or "")
    if reset:
        return [{"role": "user", "text": said}] if said else []
    name = call["name"] if call else ""
    if call is not None and name == "send_message":
        out.append({"role": "assistant", "text": str(_arg(call, 0, "text") or "")})
    elif call is not None and name == "call_tool":
        args = _arg(call, 1, "arguments")
        out.append(
            {
                "role": "tool_call",
                "name": str(_arg(call, 0, "name") or ""),
                "text": json.dumps(args if args is not None else {}, indent=1),
            }
        )
    elif name == "end_conversation":
        out.append({"role": "assistant", "text": "(ends the conversation)"})
    else:
        out.append({"role": "assistant", "text": live.action_text(call or "(not an action)")})
    error = obs.get("last_action_error")
    if error:
        out.append({"role": "error", "text": str(error)})
    elif name == "call_tool" and obs.get("last_tool_result"):
        out.append({"role": "tool", "text": str(obs["last_tool_result"])[:MAX_TEXT]})
    elif name == "send_message" and said:
        out.append({"role": "user", "text": said})
    return out


def _images(run_id: str, sid: str, obs: dict[str, Any]) -> list[dict[str, Any]]:
    """Every image part: its name, the owner-checked URL and its size (for marks)."""
    out = []
    for key, value in obs.items():
        if isinstance(value, dict) and isinstance(value.get("__file__"), str):
            shape = value.get("shape") or []
            out.append(
                {
                    "part": key,
                    "url": live.image_url(run_id, sid, value["__file__"].rsplit("/", 1)[-1]),
                    "width": shape[1] if len(shape) > 1 else None,
                    "height": shape[0] if shape else None,
                }
            )
    return out


def _texts(obs: dict[str, Any]) -> dict[str, str]:
    """The text parts (JSON for structured ones), cut at :data:`MAX_TEXT`."""
    out = {}
    for key, value in obs.items():
        if key in _SHOWN_APART or (isinstance(value, dict) and "__file__" in value):
            continue
        text = value if isinstance(value, str) else json.dumps(value, indent=1, default=str)
        if text in ("", '""', "[]", "{}", "null"):
            continue
        out[key] = text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "\n… (cut)"
    return out


def _mark_targets(frames: list[dict[str, Any]]) -> None:
    """On each frame, what the *next* action (taken on this observation) aimed at: the bid
    (the tree line to highlight) and, when known, a box or point on the screenshot."""
    for i, frame in enumerate(frames[:-1]):
        nxt = frames[i + 1]
        if nxt["episode"] != frame["episode"] or nxt["index"] == 0:
            continue
        action = nxt["action"]
        target: dict[str, Any] = {"action": action}
        found = _BID.match(action)
        if found:
            target["bid"] = found.group(2)
            props = _element_boxes(frame)
            box = (props.get(target["bid"]) or {}).get("bbox")
            if isinstance(box, list) and len(box) == 4:
                target["box"] = box
        point = _XY.match(action)
        if point:
            target["point"] = [float(point.group(1)), float(point.group(2))]
        if len(target) > 1:
            frame["target"] = target


def _element_boxes(frame: dict[str, Any]) -> dict[str, Any]:
    text = frame["texts"].get("extra_element_properties")
    if not text:
        return {}
    try:
        props = json.loads(text)
    except ValueError:
        return {}
    return props if isinstance(props, dict) else {}
