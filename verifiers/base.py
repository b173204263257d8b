"""The verifier protocol, results, declarative check kinds and composites.

A task's ``verifier`` field is data, e.g.::

    {"kind": "all", "checks": [
        {"kind": "equals", "path": "order.status", "value": "paid"},
        {"kind": "regex", "path": "answer", "pattern": "^4[0-9]$"}]}

Leaves name a registered check kind; ``all``, ``any`` and ``weighted`` combine them. Each
family registers the kinds that read its own state (SQL on an app database, files outside a
sandbox, a CAD solid) with :func:`check_kind`. The probe is privileged: it is built by the env on
the worker and never handed to the agent. A verifier that raises yields ``error``, not a
silent zero, so a broken verifier is never mistaken for a failing agent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from palaestra.family import load_check_modules


@runtime_checkable
class StateProbe(Protocol):
    """Privileged, read-only access to the world's state. Families add richer methods."""

    def read(self) -> Mapping[str, Any]: ...


@dataclass
class CheckResult:
    kind: str
    passed: bool
    score: float
    detail: str = ""
    children: list[CheckResult] = field(default_factory=list)


@dataclass
class VerifierResult:
    score: float
    success: bool
    checks: list[CheckResult] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def public(self) -> dict[str, Any]:
        """What the agent may see: the outcome, not the checks (they reveal the answer)."""
        return {"score": self.score, "success": self.success, "error": self.error}


@runtime_checkable
class Verifier(Protocol):
    def verify(self, probe: StateProbe) -> VerifierResult: ...


CheckFn = Callable[[StateProbe, dict[str, Any]], CheckResult]
_KINDS: dict[str, CheckFn] = {}


def check_kind(name: str) -> Callable[[CheckFn], CheckFn]:
    """Register a leaf check kind. The function gets the probe and the check's own fields."""

    def deco(fn: CheckFn) -> CheckFn:
        _KINDS[name] = fn
        return fn

    return deco


def check_kinds() -> list[str]:
    return sorted([*_KINDS, *_COMPOSITES])


def lookup(state: Any, path: str) -> Any:
    """Dotted path into nested mappings/lists: ``"orders.0.status"``. KeyError if absent."""
    value = state
    for part in path.split(".") if path else []:
        if isinstance(value, Mapping):
            value = value[part]
        elif isinstance(value, list | tuple):
            value = value[int(part)]
        else:
            raise KeyError(path)
    return value


def _leaf(kind: str, passed: bool, detail: str) -> CheckResult:
    return CheckResult(kind, passed, 1.0 if passed else 0.0, detail)


@check_kind("equals")
def _equals(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    actual = lookup(probe.read(), spec["path"])
    return _leaf("equals", actual == spec["value"], f"{spec['path']} = {actual!r}")


@check_kind("not_equals")
def _not_equals(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    actual = lookup(probe.read(), spec["path"])
    return _leaf("not_equals", actual != spec["value"], f"{spec['path']} = {actual!r}")


@check_kind("exists")
def _exists(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    try:
        lookup(probe.read(), spec["path"])
    except (KeyError, IndexError):
        return _leaf("exists", False, f"{spec['path']} is absent")
    return _leaf("exists", True, f"{spec['path']} is present")


@check_kind("in_range")
def _in_range(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    actual = lookup(probe.read(), spec["path"])
    lo, hi = spec.get("min", float("-inf")), spec.get("max", float("inf"))
    return _leaf("in_range", lo <= actual <= hi, f"{spec['path']} = {actual!r}")


@check_kind("contains")
def _contains(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    actual = lookup(probe.read(), spec["path"])
    needle = spec["value"]
    if isinstance(actual, str) and isinstance(needle, str) and not spec.get("case_sensitive"):
        passed = needle.lower() in actual.lower()
    else:
        passed = needle in actual
    return _leaf("contains", passed, f"{spec['path']} has {len(actual)} item(s)/char(s)")


@check_kind("regex")
def _regex(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    actual = lookup(probe.read(), spec["path"])
    passed = re.search(spec["pattern"], str(actual)) is not None
    return _leaf("regex", passed, f"{spec['path']} {'matches' if passed else 'does not match'}")


def _all(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """Every check must pass; the score is the mean of the scored checks. A check marked
    ``"gate": true`` scores nothing itself but zeroes the score when it fails, so doing nothing
    does not earn credit for the checks that only forbid things (no rule broken, no row lost)."""
    kids = [evaluate(c, probe) for c in spec["checks"]]
    gates = [k for k, c in zip(kids, spec["checks"], strict=True) if c.get("gate")]
    scored = [k for k, c in zip(kids, spec["checks"], strict=True) if not c.get("gate")]
    score = sum(k.score for k in scored) / len(scored) if scored else 1.0
    if not all(g.passed for g in gates):
        score = 0.0
    return CheckResult("all", all(k.passed for k in kids), score, "", kids)


def _any(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    kids = [evaluate(c, probe) for c in spec["checks"]]
    return CheckResult(
        "any", any(k.passed for k in kids), max((k.score for k in kids), default=0.0), "", kids
    )


def _weighted(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    items = spec["checks"]
    kids = [evaluate(item["check"], probe) for item in items]
    weights = [float(item.get("weight", 1.0)) for item in items]
    total = sum(weights) or 1.0
    score = sum(w * k.score for w, k in zip(weights, kids, strict=True)) / total
    threshold = float(spec.get("threshold", 1.0))
    return CheckResult("weighted", score >= threshold - 1e-9, score, "", kids)


_COMPOSITES: dict[str, CheckFn] = {"all": _all, "any": _any, "weighted": _weighted}


def evaluate(spec: Mapping[str, Any], probe: StateProbe) -> CheckResult:
    kind = spec.get("kind")
    fn = _COMPOSITES.get(str(kind)) or _KINDS.get(str(kind))
    if fn is None:  # check kinds live with their family: load the installed families' modules
        failures = load_check_modules(lambda: str(kind) in _KINDS)
        fn = _KINDS.get(str(kind))
        if fn is None:
            broken = f" (check modules that failed to load: {'; '.join(failures)})"
            raise ValueError(
                f"unknown check kind {kind!r}; known: {check_kinds()}{broken if failures else ''}"
            )
    fields = {k: v for k, v in spec.items() if k not in ("kind", "gate")}
    return fn(probe, fields)


def _leaves(result: CheckResult) -> list[CheckResult]:
    if not result.children:
        return [result]
    return [leaf for child in result.children for leaf in _leaves(child)]


class DeclarativeVerifier:
    """A verifier built from a task's ``verifier`` data."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec = dict(spec)

    def verify(self, probe: StateProbe) -> VerifierResult:
        try:
            root = evaluate(self.spec, probe)
        except Exception as exc:  # a broken verifier must be visible, never a silent 0
            return VerifierResult(0.0, False, [], f"{type(exc).__name__}: {exc}")
        return VerifierResult(
            round(min(max(root.score, 0.0), 1.0), 6), root.passed, _leaves(root), None
        )
