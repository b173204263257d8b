"""Gymnasium spaces <-> JSON, so a remote client rebuilds the very spaces the env publishes."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from palaestra.actions import ActionSet, ActionSpace


def _bound(arr: np.ndarray) -> Any:
    """A uniform bound travels as one number; a varying one as a nested list."""
    flat = arr.reshape(-1)
    if flat.size and np.all(flat == flat[0]):
        value = flat[0].item()
    else:
        return arr.tolist()
    if isinstance(value, float) and not np.isfinite(value):
        return "inf" if value > 0 else "-inf"
    return value


def _unbound(value: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    if value == "inf":
        return np.full(shape, np.inf, dtype=dtype)
    if value == "-inf":
        return np.full(shape, -np.inf, dtype=dtype)
    return np.broadcast_to(np.asarray(value, dtype=dtype), shape).copy()


class FreeText(spaces.Text):
    """Text of any characters up to ``max_length``: goals, page text, error messages.

    Gymnasium's ``Text`` only admits a fixed alphabet, which real page text or an agent's unicode
    input would break; this keeps the length bound and drops the alphabet check.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None) -> None:
        super().__init__(max_length, min_length=min_length, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"FreeText({self.min_length}, {self.max_length})"


class JSONText(FreeText):
    """Text holding one JSON document (a list of elements, tool schemas, a tool's result).

    Declared so a client can ask for the value instead of its text: with ``structured`` the
    gateway parses these fields and the client's space becomes :class:`JSONValue`. Text cut
    at ``max_length`` may not parse; it then stays text."""

    def __repr__(self) -> str:
        return f"JSONText({self.min_length}, {self.max_length})"


class JSONValue(spaces.Space[Any]):
    """A parsed JSON value (object, list, string, number, boolean or null): a structured
    observation field. Not flattenable; ``sample`` gives an empty list."""

    def __init__(self, max_length: int = 1_000_000, seed: Any = None) -> None:
        self.max_length = max_length
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        return []

    def contains(self, x: Any) -> bool:
        return _is_json(x)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JSONValue) and other.max_length == self.max_length

    def __hash__(self) -> int:
        return hash(("JSONValue", self.max_length))

    def __repr__(self) -> str:
        return f"JSONValue({self.max_length})"


def _is_json(x: Any) -> bool:
    if x is None or isinstance(x, str | bool | int | float):
        return True
    if isinstance(x, list):
        return all(_is_json(v) for v in x)
    if isinstance(x, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in x.items())
    return False


def json_text_keys(space: spaces.Space | dict[str, Any]) -> tuple[str, ...]:
    """The keys of a Dict space (or of its JSON form) that hold JSON text."""
    if isinstance(space, dict):
        items = space.get("spaces", {}) if space.get("type") == "Dict" else {}
        return tuple(k for k, v in items.items() if v.get("type") == "JSONText")
    if isinstance(space, spaces.Dict):
        return tuple(k for k, v in space.spaces.items() if isinstance(v, JSONText))
    return ()


def structured(space: spaces.Space) -> spaces.Space:
    """The space of structured observations: each JSONText field becomes a JSONValue."""
    if not isinstance(space, spaces.Dict):
        return space
    return spaces.Dict(
        {
            k: JSONValue(v.max_length) if isinstance(v, JSONText) else v
            for k, v in space.spaces.items()
        }
    )


def space_to_json(space: spaces.Space) -> dict[str, Any]:
    if isinstance(space, ActionSpace):
        return {"type": "ActionSpace", "action_set": space.action_set.to_json()}
    if isinstance(space, JSONValue):
        return {"type": "JSONValue", "max_length": space.max_length}
    if isinstance(space, JSONText):
        return {"type": "JSONText", "min_length": space.min_length, "max_length": space.max_length}
    if isinstance(space, FreeText):
        return {"type": "FreeText", "min_length": space.min_length, "max_length": space.max_length}
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "shape": list(space.shape),
            "dtype": str(space.dtype),
            "low": _bound(space.low),
            "high": _bound(space.high),
        }
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": space.nvec.tolist()}
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": space.n}
    if isinstance(space, spaces.Text):
        return {
            "type": "Text",
            "min_length": space.min_length,
            "max_length": space.max_length,
            "charset": "".join(sorted(space.character_set)),
        }
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {k: space_to_json(v) for k, v in space.spaces.items()}}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [space_to_json(s) for s in space.spaces]}
    if isinstance(space, spaces.Sequence):
        return {"type": "Sequence", "space": space_to_json(space.feature_space)}
    raise TypeError(f"cannot serialise space {space!r}")


def space_from_json(data: dict[str, Any]) -> spaces.Space:
    kind = data["type"]
    if kind == "ActionSpace":
        return ActionSpace(ActionSet.from_json(data["action_set"]))
    if kind == "Box":
        shape = tuple(data["shape"])
        dtype = np.dtype(data["dtype"])
        return spaces.Box(
            _unbound(data["low"], shape, dtype), _unbound(data["high"], shape, dtype), dtype=dtype
        )
    if kind == "FreeText":
        return FreeText(data["max_length"], min_length=data["min_length"])
    if kind == "JSONText":
        return JSONText(data["max_length"], min_length=data["min_length"])
    if kind == "JSONValue":
        return JSONValue(data["max_length"])
    if kind == "Discrete":
        return spaces.Discrete(data["n"], start=data.get("start", 0))
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(data["nvec"])
    if kind == "MultiBinary":
        return spaces.MultiBinary(data["n"])
    if kind == "Text":
        return spaces.Text(
            data["max_length"], min_length=data["min_length"], charset=data["charset"]
        )
    if kind == "Dict":
        return spaces.Dict({k: space_from_json(v) for k, v in data["spaces"].items()})
    if kind == "Tuple":
        return spaces.Tuple([space_from_json(s) for s in data["spaces"]])
    if kind == "Sequence":
        return spaces.Sequence(space_from_json(data["space"]))
    raise ValueError(f"unknown space type {kind!r}")
