"""OpenEnv's wire shapes, built from palaestra's own pieces (no OpenEnv import).

Why a module of its own: the router (``server/routes/openenv.py``) stays thin, and these
translations are pure functions the tests can pin down. The shapes follow the ``openenv``
release's server (``openenv.core.env_server``): a step or a reset answers ``{"observation",
"reward", "done", "metadata"}``; WebSocket replies are ``{"type": "observation" | "state" |
"error" | "mcp", "data": ...}``; an error's data holds ``message`` and ``code`` (OpenEnv's
``WSErrorCode`` values), and here also the ``field`` at fault.

Actions. OpenEnv sends an action as a JSON object. Accepted here, all parsed by the env's one
:class:`~palaestra.actions.ActionSet`: the canonical ``{"name": ..., "args": {...}}``;
``{"action": <call string | canonical | tool call>}``; an OpenAI tool call ``{"type":
"function", "function": {...}}``; and OpenEnv's MCP actions ``{"type": "list_tools"}`` and
``{"type": "call_tool", "tool_name": ..., "arguments": {...}}``. An action that fails the schema
is an error reply naming the field, and the env is not stepped (on the v1 API the same action
would be a step with ``last_action_error``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from palaestra.actions import Action, ActionSet
from palaestra.errors import ActionError, InvalidRequest, PalaestraError
from palaestra.steps import ResetReply, StepReply

#: OpenEnv's WSErrorCode values used here
INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
SESSION_ERROR = "SESSION_ERROR"

#: reset keywords OpenEnv clients send; anything else is refused naming it
RESET_KEYS = frozenset({"seed", "episode_id", "options", "task"})


def error(message: str, code: str, field: str | None = None, **extra: Any) -> dict[str, Any]:
    """An OpenEnv error reply (``WSErrorResponse``)."""
    data: dict[str, Any] = {"message": message, "code": code, **extra}
    if field is not None:
        data["field"] = field
    return {"type": "error", "data": data}


def error_from(exc: PalaestraError, field: str | None = None) -> dict[str, Any]:
    """A palaestra error as an OpenEnv error reply, keeping its status and field."""
    if exc.status == 429:
        code = CAPACITY_REACHED
    elif exc.status in (400, 422):
        code = VALIDATION_ERROR
    elif exc.status in (404, 409, 410):
        code = SESSION_ERROR
    else:
        code = EXECUTION_ERROR
    where = field or exc.fields.get("field")
    return error(exc.detail, code, where, status=exc.status, title=exc.title)


_ARGUMENT = re.compile(r"\(\):? (?:argument|is missing argument|has no argument) '(\w+)'")


def action_field(exc: ActionError) -> str:
    """The field an action error is about: ``action.args.<param>`` when one is named (in its
    fields, or in the ``<action>(): argument '<param>' ...`` wording every check uses)."""
    param = exc.fields.get("param")
    if not param:
        found = _ARGUMENT.search(exc.detail)
        param = found.group(1) if found else None
    return f"action.args.{param}" if param else "action"


def observation_payload(
    observation: dict[str, Any], reward: float | None, done: bool, metadata: dict[str, Any]
) -> dict[str, Any]:
    """OpenEnv's serialised observation: the fields, plus ``metadata`` inside the observation
    (as ``Observation.model_dump`` gives it) and beside it (as ``StepResult.metadata``)."""
    return {
        "observation": {**observation, "metadata": metadata},
        "reward": reward,
        "done": done,
        "metadata": metadata,
    }


def from_reset(reply: ResetReply) -> dict[str, Any]:
    return observation_payload(reply["observation"], None, False, reply["info"])


def from_step(reply: StepReply) -> dict[str, Any]:
    """A step: ``done`` is terminated or truncated (both kept in the metadata); at episode end
    the metadata holds the verifier's summary (``metadata["verifier"]``)."""
    meta = {**reply["info"], "terminated": reply["terminated"], "truncated": reply["truncated"]}
    done = reply["terminated"] or reply["truncated"]
    return observation_payload(reply["observation"], reply["reward"], done, meta)


@dataclass(frozen=True)
class Parsed:
    """A step message understood: an env action, or OpenEnv's MCP tool listing."""

    action: Action | None = None
    list_tools: bool = False
    tool: str | None = None  # set when the action came as an MCP call_tool


def parse_action(action_set: ActionSet, data: Any) -> Parsed:
    """An OpenEnv action payload -> a validated palaestra action (or a tool listing).

    Raises :class:`ActionError` (the field in ``fields["field"]``) when it fails our schema.
    """
    if not isinstance(data, Mapping):
        raise ActionError("an OpenEnv action is a JSON object", field="action")
    kind = data.get("type")
    if kind == "list_tools":
        return Parsed(list_tools=True)
    if kind == "call_tool":
        extra = set(data) - {"type", "tool_name", "arguments", "metadata"}
        if extra:
            raise ActionError(f"unexpected key(s) {sorted(extra)} in call_tool", field="action")
        name = data.get("tool_name")
        arguments = data.get("arguments") or {}
        return Parsed(_parse(action_set, {"name": name, "args": arguments}), tool=str(name))
    if "action" in data:
        extra = set(data) - {"action", "metadata"}
        if extra:
            raise ActionError(f"unexpected key(s) {sorted(extra)} beside 'action'", field="action")
        return Parsed(_parse(action_set, data["action"]))
    body = {k: v for k, v in data.items() if k != "metadata"}
    return Parsed(_parse(action_set, body))


def _parse(action_set: ActionSet, raw: Any) -> Action:
    try:
        return action_set.parse(raw)
    except ActionError as exc:
        exc.fields.setdefault("field", action_field(exc))
        raise


def reset_args(data: Any) -> tuple[int | None, dict[str, Any] | None, str | None]:
    """OpenEnv reset keywords -> (seed, palaestra reset options, episode_id). ``task`` is a
    shorthand for ``options={"task": ...}``."""
    if not isinstance(data, Mapping):
        raise InvalidRequest("reset data is a JSON object", field="data")
    extra = set(data) - RESET_KEYS
    if extra:
        raise InvalidRequest(
            f"unknown reset keyword(s) {sorted(extra)}; known: {sorted(RESET_KEYS)}",
            field=f"data.{sorted(extra)[0]}",
        )
    seed = data.get("seed")
    if seed is not None and (type(seed) is not int or not 0 <= seed < 2**32):
        raise InvalidRequest("seed must be an int, 0 <= seed < 2**32", field="data.seed")
    options = data.get("options")
    if options is not None and not isinstance(options, Mapping):
        raise InvalidRequest("options is a JSON object", field="data.options")
    options = dict(options) if options else None
    if data.get("task") is not None:
        options = {**(options or {}), "task": data["task"]}
    episode = data.get("episode_id")
    return seed, options, None if episode is None else str(episode)[:255]


def mcp_tools(action_set: ActionSet) -> list[dict[str, Any]]:
    """The action set as MCP tools (``name``, ``description``, ``inputSchema``), from the same
    OpenAI tool definitions the v1 API lists; OpenEnv's client also reads ``input_schema``."""
    out = []
    for tool in action_set.tools():
        fn = tool["function"]
        schema = fn["parameters"]
        out.append(
            {
                "name": fn["name"],
                "description": fn["description"],
                "inputSchema": schema,
                "input_schema": schema,
            }
        )
    return out


def action_schema(action_set: ActionSet) -> dict[str, Any]:
    """The action JSON Schema: the canonical encoding (``ActionSet.json_schema()``) or a
    call string wrapped as ``{"action": "click('a1')"}``."""
    canonical = action_set.json_schema()
    wrapped = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "description": "a call string, e.g. click('a1')"}
        },
        "required": ["action"],
        "additionalProperties": False,
    }
    return {"title": canonical["title"], "anyOf": [*canonical["oneOf"], wrapped]}


def space_schema(space: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON Schema of one serialised gymnasium space as it travels (``palaestra.codec``)."""
    kind = space.get("type")
    if kind == "Dict":
        props = {k: space_schema(v) for k, v in space["spaces"].items()}
        return {"type": "object", "properties": props}
    if kind in ("Text", "FreeText"):
        return {"type": "string", "maxLength": space.get("max_length")}
    if kind == "JSONText":  # palaestra.spaces.JSONText: one JSON document as text
        return {
            "type": "string",
            "maxLength": space.get("max_length"),
            "contentMediaType": "application/json",
        }
    if kind == "Discrete":
        start = space.get("start", 0)
        return {"type": "integer", "minimum": start, "maximum": start + space["n"] - 1}
    if kind == "Box":
        shape, dtype = space["shape"], space["dtype"]
        if dtype == "uint8" and len(shape) in (2, 3):
            return {
                "type": "object",
                "description": f"image {shape} uint8 as base64 PNG/JPEG: "
                '{"__image__": <base64>, "format": ..., "shape": [...]}',
            }
        if shape in ([], [1]):
            return {"type": ["number", "array"], "description": f"{dtype} {shape}"}
        return {"type": ["array", "object"], "description": f"array {shape} {dtype}"}
    if kind in ("Sequence", "Tuple", "MultiDiscrete", "MultiBinary"):
        return {"type": "array"}
    return {}


def observation_schema(space: Mapping[str, Any]) -> dict[str, Any]:
    schema = space_schema(space)
    props = dict(schema.get("properties", {}))
    props.setdefault("last_action_error", {"type": "string"})
    props["metadata"] = {
        "type": "object",
        "description": "step, max_steps, terminated, truncated; at episode end 'verifier': "
        "{score, success, error}",
    }
    return {"title": "observation", "type": "object", "properties": props}


STATE_SCHEMA: dict[str, Any] = {
    "title": "state",
    "type": "object",
    "properties": {
        "episode_id": {"type": ["string", "null"]},
        "step_count": {"type": "integer", "minimum": 0},
        "session_id": {"type": "string", "description": "the palaestra session (v1 API)"},
        "env": {"type": "string"},
        "task": {"type": ["string", "null"]},
        "done": {"type": "boolean"},
    },
}
