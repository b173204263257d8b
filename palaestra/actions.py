"""Action sets: one declaration of a family's primitives, many uses.

From a list of :class:`Primitive` come the parser (canonical JSON and call strings), validation,
a ``gymnasium.Space`` with ``contains``/``sample``, a prompt description and JSON Schema / OpenAI
tool definitions, so none of these can drift from the others. Call strings are parsed with
``ast`` and only literals are accepted: an agent's text is never evaluated.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from palaestra.errors import ActionError

_TYPES: dict[str, type] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "strs": list,
    "object": dict,
    "id": str,
}
_JSON_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "object": "object",
}
_MISSING: Any = object()


@dataclass(frozen=True)
class Param:
    """A typed parameter. ``type`` is ``str``, ``int``, ``float``, ``bool``, ``strs`` (a list
    of strings, also given as one string, as BrowserGym's ``select_option`` takes) or ``object``
    (a JSON object, also given as JSON text, as tool-calling models often send arguments) or
    ``id`` (an element id: a string, also given as an unquoted non-negative integer, as
    BrowserGym agents write ``click(12)``; other numbers are ambiguous and refused)."""

    name: str
    type: str = "str"
    description: str = ""
    default: Any = _MISSING
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] | None = None
    max_length: int | None = None

    def __post_init__(self) -> None:
        if self.type not in _TYPES:
            raise ValueError(f"param {self.name!r}: type must be one of {sorted(_TYPES)}")

    @property
    def required(self) -> bool:
        return self.default is _MISSING

    def validate(self, action: str, value: Any) -> Any:
        """Return the value coerced to the declared type, or raise ActionError naming it."""
        where = f"{action}(): argument {self.name!r}"
        if self.type == "strs" and isinstance(value, str):
            value = [value]
        if self.type == "id" and not isinstance(value, str):
            value = _id_text(where, action, self.name, value)
        if self.type == "strs" and isinstance(value, list | tuple):
            if not all(isinstance(v, str) for v in value):
                raise ActionError(f"{where} must be a string or a list of strings", action=action)
            value = list(value)
        if self.type == "object" and isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ActionError(f"{where} is not valid JSON: {exc}", action=action) from None
        if self.type == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        expected = _TYPES[self.type]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ActionError(
                f"{where} must be {self.type}, got {type(value).__name__} {value!r}",
                action=action,
                param=self.name,
            )
        if self.choices is not None and value not in self.choices:
            raise ActionError(
                f"{where} must be one of {list(self.choices)}, got {value!r}",
                action=action,
                param=self.name,
            )
        checked: Any = value  # of the declared type now (isinstance narrows it to object)
        if self.minimum is not None and checked < self.minimum:
            raise ActionError(f"{where} must be >= {self.minimum}, got {value!r}", action=action)
        if self.maximum is not None and checked > self.maximum:
            raise ActionError(f"{where} must be <= {self.maximum}, got {value!r}", action=action)
        if self.max_length is not None and self.type == "str" and len(checked) > self.max_length:
            raise ActionError(f"{where} is longer than {self.max_length} characters", action=action)
        return value

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = (
            {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
            if self.type == "strs"
            else {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]}
            if self.type == "id"
            else {"type": _JSON_TYPES[self.type]}
        )
        if self.description:
            schema["description"] = self.description
        if self.choices is not None:
            schema["enum"] = list(self.choices)
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        if self.max_length is not None:
            schema["maxLength"] = self.max_length
        if not self.required:
            schema["default"] = self.default
        return schema

    def sample(self, rng: np.random.Generator) -> Any:
        if self.choices is not None:
            return self.choices[int(rng.integers(len(self.choices)))]
        lo = self.minimum if self.minimum is not None else 0
        hi = self.maximum if self.maximum is not None else lo + 100
        if self.type == "int":
            return int(rng.integers(int(lo), int(hi) + 1))
        if self.type == "float":
            return float(rng.uniform(lo, hi))
        if self.type == "bool":
            return bool(rng.integers(2))
        if self.type == "object":
            return {}
        if self.type == "strs":
            return [Param("x").sample(rng) for _ in range(int(rng.integers(1, 3)))]
        if self.type == "id":
            return str(int(rng.integers(1, 100)))
        length = int(rng.integers(1, min(self.max_length or 12, 12) + 1))
        return "".join(chr(int(c)) for c in rng.integers(ord("a"), ord("z") + 1, size=length))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        for key in ("description", "minimum", "maximum", "max_length"):
            if getattr(self, key) not in (None, ""):
                out[key] = getattr(self, key)
        if self.choices is not None:
            out["choices"] = list(self.choices)
        if not self.required:
            out["default"] = self.default
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Param:
        data = dict(data)
        if "choices" in data:
            data["choices"] = tuple(data["choices"])
        return cls(**data)


def _id_text(where: str, action: str, param: str, value: Any) -> str:
    """An unquoted element id -> its text; only a non-negative integer names one id."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    raise ActionError(
        f'{where}: {value!r} is an ambiguous element id (an id is a string such as "12", '
        "or a non-negative integer)",
        action=action,
        param=param,
    )


@dataclass(frozen=True)
class Primitive:
    """One action primitive such as ``click(bid)``."""

    name: str
    description: str = ""
    params: tuple[Param, ...] = ()

    def signature(self) -> str:
        parts = [p.name if p.required else f"{p.name}={p.default!r}" for p in self.params]
        return f"{self.name}({', '.join(parts)})"

    def bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Map positional and keyword arguments onto the declared params, validated."""
        if len(args) > len(self.params):
            raise ActionError(
                f"{self.name}() takes {len(self.params)} argument(s), got {len(args)}; "
                f"usage: {self.signature()}",
                action=self.name,
            )
        bound: dict[str, Any] = {p.name: v for p, v in zip(self.params, args, strict=False)}
        known = {p.name for p in self.params}
        for key, value in kwargs.items():
            if key not in known:
                raise ActionError(
                    f"{self.name}() has no argument {key!r}; usage: {self.signature()}",
                    action=self.name,
                )
            if key in bound:
                raise ActionError(f"{self.name}() got {key!r} twice", action=self.name)
            bound[key] = value
        out: dict[str, Any] = {}
        for p in self.params:
            if p.name in bound:
                out[p.name] = p.validate(self.name, bound[p.name])
            elif p.required:
                raise ActionError(
                    f"{self.name}() is missing argument {p.name!r}; usage: {self.signature()}",
                    action=self.name,
                    param=p.name,
                )
            else:
                out[p.name] = p.default
        return out

    def json_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {p.name: p.json_schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }


def primitive(name: str, description: str = "", *params: Param) -> Primitive:
    return Primitive(name, description, tuple(params))


@dataclass(frozen=True)
class Action:
    """A parsed, validated action: the canonical form every env receives."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "args": dict(self.args)}

    def to_call(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.name}({inner})"


class ActionSet:
    """The declared primitives of one env family."""

    def __init__(self, primitives: Sequence[Primitive], name: str = "") -> None:
        self.name = name
        self.primitives: dict[str, Primitive] = {p.name: p for p in primitives}
        if len(self.primitives) != len(primitives):
            raise ValueError("duplicate primitive names in action set")

    def __contains__(self, name: object) -> bool:
        return name in self.primitives

    def parse(self, action: Any) -> Action:
        """Canonical JSON (dict or JSON text), a call string, an OpenAI tool call (dict or JSON
        text) or an Action -> validated Action."""
        if isinstance(action, Action):
            return self._build(action.name, (), action.args)
        if isinstance(action, str):
            text = action.strip()
            if text.startswith("{"):
                try:
                    action = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ActionError(f"action is not valid JSON: {exc}") from None
            else:
                return self._parse_call(text)
        if isinstance(action, Mapping) and "function" in action:
            try:
                return self._parse_tool_call(action)
            except ActionError as exc:
                if not exc.detail.startswith("tool call"):
                    exc.detail = f"tool call {_quote(action)}: {exc.detail}"
                raise
        if isinstance(action, Mapping):
            extra = set(action) - {"name", "args"}
            if extra or "name" not in action:
                raise ActionError(
                    'a JSON action is {"name": ..., "args": {...}}'
                    + (f"; unexpected key(s) {sorted(extra)}" if extra else "")
                )
            args = action.get("args") or {}
            if not isinstance(args, Mapping):
                raise ActionError("action 'args' must be an object")
            return self._build(action["name"], (), args)
        raise ActionError(
            f"an action is a call string or a JSON object, got {type(action).__name__}"
        )

    def parse_many(self, action: Any) -> list[Action]:
        """One step's actions: ``[parse(action)]``, or each call of a ``tool_calls`` list.

        A list of tool calls (or of any actions) and an assistant message holding
        ``tool_calls`` (as a chat completion returns it; its text ``content`` is not an action)
        are several actions for one step. All are parsed before any is applied, so an invalid
        one refuses the whole step and the world is unchanged; its error quotes the call."""
        calls = tool_calls(action)
        if calls is None:
            return [self.parse(action)]
        if not calls:
            raise ActionError(f"an empty list of tool calls: {_quote(action)}")
        out = []
        for i, call in enumerate(calls):
            try:
                out.append(self.parse(call))
            except ActionError as exc:
                quoted = exc.detail.startswith("tool call")  # parse() quoted the call already
                what = "" if quoted else f" {_quote(call)}:"
                exc.detail = f"(call {i + 1} of {len(calls)}){what} {exc.detail}"
                raise
        return out

    def _parse_tool_call(self, call: Mapping[str, Any]) -> Action:
        """An OpenAI tool call (``{"type": "function", "function": {"name": ..., "arguments":
        "<JSON text>"}}``, as a chat completion returns it) against :meth:`tools`."""
        function = call.get("function")
        if not isinstance(function, Mapping) or "name" not in function:
            raise ActionError('a tool call is {"type": "function", "function": {"name": ...}}')
        arguments = function.get("arguments") or {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                raise ActionError(
                    f"tool call {function['name']!r}: arguments are not valid JSON ({exc}): "
                    f"{arguments[:200]!r}",
                    action=str(function["name"]),
                ) from None
        if not isinstance(arguments, Mapping):
            raise ActionError(
                f"tool call {function['name']!r}: arguments must be a JSON object",
                action=str(function["name"]),
            )
        return self._build(function["name"], (), arguments)

    def _build(self, name: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Action:
        if not isinstance(name, str) or name not in self.primitives:
            raise ActionError(
                f"unknown action {name!r}; available: {', '.join(self.primitives)}",
                action=str(name),
            )
        return Action(name, self.primitives[name].bind(args, kwargs))

    def _parse_call(self, text: str) -> Action:
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as exc:
            raise ActionError(f"cannot parse action {text[:200]!r}: {exc.msg}") from None
        call = tree.body
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            raise ActionError(
                f"an action is one call such as {self._example()}, got {text[:200]!r}"
            )
        try:
            args = [ast.literal_eval(a) for a in call.args]
            kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}
        except (ValueError, SyntaxError, TypeError):
            raise ActionError(
                f"action arguments must be literals (strings, numbers, booleans): {text[:200]!r}",
                action=call.func.id,
            ) from None
        if len(kwargs) != len(call.keywords):
            raise ActionError("**kwargs are not allowed in actions", action=call.func.id)
        return self._build(call.func.id, args, kwargs)

    def _example(self) -> str:
        first = next(iter(self.primitives.values()))
        return first.signature()

    def describe(self) -> str:
        """Text for a prompt: one line per primitive with its parameters."""
        lines = []
        for p in self.primitives.values():
            lines.append(f"{p.signature()}: {p.description}".rstrip(": "))
            for param in p.params:
                constraint = []
                if param.choices is not None:
                    constraint.append(f"one of {list(param.choices)}")
                if param.minimum is not None:
                    constraint.append(f">= {param.minimum}")
                if param.maximum is not None:
                    constraint.append(f"<= {param.maximum}")
                extra = f" ({', '.join(constraint)})" if constraint else ""
                lines.append(f"    {param.name}: {param.type}{extra} {param.description}".rstrip())
        return "\n".join(lines)

    def json_schema(self) -> dict[str, Any]:
        """JSON Schema of the canonical JSON encoding."""
        return {
            "title": self.name or "action",
            "oneOf": [
                {
                    "type": "object",
                    "description": p.description,
                    "properties": {"name": {"const": p.name}, "args": p.json_schema()},
                    "required": ["name"],
                    "additionalProperties": False,
                }
                for p in self.primitives.values()
            ],
        }

    def tools(self) -> list[dict[str, Any]]:
        """OpenAI-style function tool definitions, one per primitive."""
        return [
            {
                "type": "function",
                "function": {
                    "name": p.name,
                    "description": p.description,
                    "parameters": p.json_schema(),
                },
            }
            for p in self.primitives.values()
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "primitives": [
                {
                    "name": p.name,
                    "description": p.description,
                    "params": [x.to_json() for x in p.params],
                }
                for p in self.primitives.values()
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ActionSet:
        return cls(
            [
                Primitive(
                    p["name"],
                    p.get("description", ""),
                    tuple(Param.from_json(x) for x in p.get("params", [])),
                )
                for p in data["primitives"]
            ],
            name=data.get("name", ""),
        )

    def space(self, seed: int | None = None) -> ActionSpace:
        return ActionSpace(self, seed=seed)


def tool_calls(action: Any) -> list[Any] | None:
    """The calls of a multi-call action (a list, or an assistant message's ``tool_calls``, as
    dict or JSON text), or None for a single action."""
    if isinstance(action, str) and action.strip()[:1] in ("[", "{"):
        try:
            loaded = json.loads(action)
        except json.JSONDecodeError:
            return None  # parse() reports the bad JSON
        if isinstance(loaded, list) or (isinstance(loaded, Mapping) and "tool_calls" in loaded):
            action = loaded
    if isinstance(action, list | tuple):
        return list(action)
    if isinstance(action, Mapping) and "tool_calls" in action:
        calls = action["tool_calls"]
        if not isinstance(calls, list):
            raise ActionError(f"'tool_calls' must be a list, got {_quote(calls)}")
        return list(calls)
    return None


def _quote(value: Any, limit: int = 200) -> str:
    """What an agent sent, for an error message: JSON (or repr) cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ActionSpace(gym.Space[dict]):
    """The Gymnasium view of an ActionSet. Samples are canonical JSON dicts."""

    def __init__(self, action_set: ActionSet, seed: int | None = None) -> None:
        self.action_set = action_set
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        prims = list(self.action_set.primitives.values())
        prim = prims[int(self.np_random.integers(len(prims)))]
        args = {p.name: p.sample(self.np_random) for p in prim.params}
        return {"name": prim.name, "args": args}

    def contains(self, x: Any) -> bool:
        try:
            self.action_set.parse(x)
        except ActionError:
            return False
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActionSpace) and (
            self.action_set.to_json() == other.action_set.to_json()
        )

    def __hash__(self) -> int:
        return hash(json.dumps(self.action_set.to_json(), sort_keys=True))

    def __repr__(self) -> str:
        return f"ActionSpace({', '.join(self.action_set.primitives)})"

    def to_jsonable(self, sample_n: Sequence[Any]) -> list[Any]:  # type: ignore[override]
        return list(sample_n)

    def from_jsonable(self, sample_n: Sequence[Any]) -> list[Any]:
        return list(sample_n)
