"""tau2-bench's task files (``<domain>/tasks.json``, ``split_tasks.json``), read and checked.

A task file that does not parse is an error naming the task and the field, at load, so a bad
copy of the data never becomes a task that cannot be played or scored. Only the fields palaestra
reads are checked; the rest of a task (tau2's ``issues``, ``description``) is kept as it is.
"""

from __future__ import annotations

import functools
import json
from typing import Any, NoReturn

from palaestra.envs.tau2.store import DATA
from palaestra.verifiers.tau2 import REWARD_TYPES

DOMAINS = ("retail", "telecom")


class TaskFileError(ValueError):
    """A tau2 task that does not parse: names the domain, the task and the field."""


def _fail(domain: str, tid: str, field: str, what: str) -> NoReturn:
    raise TaskFileError(f"tau2 {domain} task {tid}: field {field!r} {what}")


def _need(cond: bool, domain: str, tid: str, field: str, what: str) -> None:
    if not cond:
        _fail(domain, tid, field, what)


def check(domain: str, task: Any, index: int = 0) -> dict[str, Any]:
    """``task`` if it has what palaestra reads, else :class:`TaskFileError`."""
    if not isinstance(task, dict) or not isinstance(task.get("id"), str):
        raise TaskFileError(f"tau2 {domain} tasks.json[{index}]: field 'id' missing or not text")
    tid = task["id"]
    scenario = task.get("user_scenario")
    if not isinstance(scenario, dict):
        _fail(domain, tid, "user_scenario", "is missing")
    instructions = scenario.get("instructions")
    if not isinstance(instructions, dict):
        _fail(domain, tid, "user_scenario.instructions", "is missing")
    _need(
        isinstance(instructions.get("reason_for_call"), str),
        domain,
        tid,
        "user_scenario.instructions.reason_for_call",
        "is missing or not text",
    )
    crit = task.get("evaluation_criteria")
    if not isinstance(crit, dict):
        _fail(domain, tid, "evaluation_criteria", "is missing")
    basis = crit.get("reward_basis")
    _need(
        isinstance(basis, list) and bool(basis) and set(basis) <= set(REWARD_TYPES),
        domain,
        tid,
        "evaluation_criteria.reward_basis",
        f"must be a non-empty list of {list(REWARD_TYPES)}",
    )
    actions = crit.get("actions") or []
    _need(isinstance(actions, list), domain, tid, "evaluation_criteria.actions", "is not a list")
    for i, action in enumerate(actions):
        ok = (
            isinstance(action, dict)
            and isinstance(action.get("name"), str)
            and isinstance(action.get("arguments", {}), dict)
        )
        _need(ok, domain, tid, f"evaluation_criteria.actions[{i}]", "needs a name and arguments")
    for key in ("communicate_info", "nl_assertions"):
        value = crit.get(key) or []
        _need(
            isinstance(value, list) and all(isinstance(v, str) for v in value),
            domain,
            tid,
            f"evaluation_criteria.{key}",
            "must be a list of text",
        )
    init = (task.get("initial_state") or {}).get("initialization_actions") or []
    for i, action in enumerate(init):
        ok = isinstance(action, dict) and action.get("env_type") in ("assistant", "user")
        _need(
            ok and isinstance(action.get("func_name"), str),
            domain,
            tid,
            f"initial_state.initialization_actions[{i}]",
            "needs env_type (assistant or user) and func_name",
        )
    return task


@functools.cache
def tasks(domain: str) -> dict[str, dict[str, Any]]:
    """The domain's tasks by id, every one checked (:func:`check`)."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown tau2 domain {domain!r}; domains: {list(DOMAINS)}")
    path = DATA / domain / "tasks.json"
    try:
        raw = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise TaskFileError(f"tau2 {domain}: {path} does not parse: {exc}") from exc
    if not isinstance(raw, list):
        raise TaskFileError(f"tau2 {domain}: {path} must hold a list of tasks")
    out: dict[str, dict[str, Any]] = {}
    for i, task in enumerate(raw):
        checked = check(domain, task, i)
        out[checked["id"]] = checked
    return out


def get(domain: str, task_id: str) -> dict[str, Any]:
    found = tasks(domain).get(task_id)
    if found is None:
        raise KeyError(f"tau2 {domain} has no task {task_id!r}")
    return found


@functools.cache
def split_of(domain: str) -> dict[str, str]:
    """Task id -> ``train`` or ``test``: tau2's splits (task metadata for the suites)."""
    raw = json.loads((DATA / domain / "split_tasks.json").read_text())
    return {tid: name for name in ("train", "test") for tid in raw.get(name, [])}


def gold_actions(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's gold tool calls (tau2's ``{"name", "arguments", "requestor"}``), in order."""
    return list(task["evaluation_criteria"].get("actions") or [])
