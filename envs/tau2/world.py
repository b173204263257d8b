"""One tau2 episode's world, whichever the domain: what the env, the user and the grader share.

A world answers tool calls from either side (``requestor`` is tau2's ``assistant`` or ``user``)
as tau2's environment does (``Result``: the text the caller reads, ``Error: ...`` when the call
failed, and the world unchanged then), and shows its state as plain JSON data that two worlds
compare by. Retail has no user side: a user tool call answers tau2's error for that.

:func:`open_world` builds a task's initial world (its ``initialization_actions`` applied);
:func:`gold_state` is the state the task's gold actions reach from there (cached per task, the
``DB`` check's reference); :func:`assertions` runs a task's ``env_assertions`` on a world.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass
from typing import Any, Protocol

from palaestra.envs.tau2 import retail, store, telecom_eval
from palaestra.envs.tau2.tasks import get, gold_actions
from palaestra.envs.tau2.telecom_device import DeviceTools
from palaestra.envs.tau2.telecom_eval import Result, TelecomWorld
from palaestra.envs.tau2.telecom_world import AgentTools, tool_names

#: the agent's tools that may change the world (tau2's ``ToolType.WRITE``): a call of one needs
#: the user's explicit yes to the assistant's previous message, as both policies require
WRITES = {
    "retail": frozenset(retail.WRITE),
    "telecom": frozenset(
        {
            "suspend_line",
            "resume_line",
            "send_payment_request",
            "enable_roaming",
            "disable_roaming",
            "refuel_data",
        }
    ),
}
AGENT_TOOLS = {"retail": tuple(retail.TOOLS), "telecom": tuple(tool_names(AgentTools))}
USER_TOOLS: dict[str, tuple[str, ...]] = {"retail": (), "telecom": tuple(tool_names(DeviceTools))}


class Tau2World(Protocol):
    domain: str

    def call(self, requestor: str, name: str, arguments: Any) -> Result: ...

    def state(self) -> dict[str, Any]: ...


class RetailWorld:
    """tau2's retail database in a private SQLite copy (:mod:`.store`); no user side."""

    domain = "retail"

    def __init__(self) -> None:
        self.conn = store.fresh()

    def call(self, requestor: str, name: str, arguments: Any) -> Result:
        if requestor == "user":
            return Result("Error: User tools not available", error=True)
        if requestor != "assistant":
            return Result(f"Error: Invalid requestor: {requestor}", error=True)
        content, error = retail.call(self.conn, name, arguments)
        return Result(content, error)

    def state(self) -> dict[str, Any]:
        """Each entity as its canonical JSON text: two worlds compare row by row at string
        speed, and the verifier parses only the entities that differ."""
        return store.dump(self.conn)


def open_world(domain: str, task: dict[str, Any] | None) -> Tau2World:
    """A fresh world for ``task`` (``None``: the initial world, nothing applied)."""
    if domain == "retail":
        return RetailWorld()  # retail tasks have no initialization actions
    if domain == "telecom":
        return TelecomWorld() if task is None else telecom_eval.reset(task)
    raise ValueError(f"unknown tau2 domain {domain!r}")


@dataclass(frozen=True)
class ReplayError(Exception):
    """A gold action answered with an error: tau2 rejects it too (some gold lists try a wrong
    email on purpose), or our semantics are wrong."""

    index: int
    action: dict[str, Any]
    message: str

    def __str__(self) -> str:
        return f"gold action {self.index} ({self.action.get('name')}): {self.message}"


def replay(
    world: Tau2World, actions: list[dict[str, Any]], *, strict: bool = False
) -> list[ReplayError]:
    """Make tau2's gold calls (``{"name", "arguments", "requestor"}``) in order; the ones that
    answered an error. tau2's evaluator logs such an error and goes on, and so do we; with
    ``strict`` the first one raises instead."""
    errors = []
    for index, action in enumerate(actions):
        requestor = action.get("requestor", "assistant")
        result = world.call(requestor, action["name"], action.get("arguments") or {})
        if result.error:
            if strict:
                raise ReplayError(index, action, result.content)
            errors.append(ReplayError(index, action, result.content))
    return errors


@functools.lru_cache(maxsize=256)
def _gold(domain: str, task_json: str) -> dict[str, Any]:
    key = json.loads(task_json)
    world = open_world(domain, {"initial_state": key["init"]})
    replay(world, key["actions"])
    return snapshot(world)


def snapshot(world: Tau2World) -> dict[str, Any]:
    """A world's state as JSON data (telecom's dates as ISO text): what is compared and
    recorded. Retail's is already that (entities as JSON text, 4 MB: never re-encoded)."""
    state = world.state()
    if world.domain == "retail":
        return state
    return json.loads(json.dumps(state, sort_keys=True, default=str))


def gold_state(domain: str, task: dict[str, Any]) -> dict[str, Any]:
    """The state the task's gold actions reach (a gold call that errs is skipped, as tau2's
    evaluator does), cached by the task's content: shared, so never to be modified."""
    key = json.dumps(
        {"init": task.get("initial_state"), "actions": gold_actions(task)}, sort_keys=True
    )
    return _gold(domain, key)


def assertions(world: Tau2World, task: dict[str, Any]) -> list[dict[str, Any]]:
    """Each ``env_assertion`` of the task on a copy of ``world``: ``{"name", "ok"}``."""
    listed = task["evaluation_criteria"].get("env_assertions") or []
    if not listed or not isinstance(world, TelecomWorld):
        return []
    scratch = copy.deepcopy(world)  # an assertion may not change the world it judges
    return [{"name": name, "ok": ok} for name, ok in telecom_eval.env_assertions(scratch, task)]


def gold_of(domain: str, task_id: str) -> dict[str, Any]:
    """:func:`gold_state` of a task by id: what a recorded snapshot keeps to re-grade."""
    return gold_state(domain, get(domain, task_id))
