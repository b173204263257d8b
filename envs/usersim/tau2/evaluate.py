"""tau2-bench's ``DB`` reward basis (``src/tau2/evaluator/evaluator_env.py``).

tau2 replays the task's gold actions on a fresh copy of the initial world and compares the hash
of that database with the hash of the database the episode ended with. We compare the two
worlds row by row, so a failure also says which entities differ (the verifier's evidence).

Left for the next session: initialization actions before the replay (none in retail),
``COMMUNICATE``, the action checks, the ``reward_basis`` product, and the NL assertions.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from palaestra.envs.usersim.tau2 import retail, store


@dataclass(frozen=True)
class ReplayError(Exception):
    """A gold action answered with an error: the task or our tool semantics are wrong."""

    index: int
    action: dict[str, Any]
    message: str

    def __str__(self) -> str:
        return f"gold action {self.index} ({self.action.get('name')}): {self.message}"


@dataclass(frozen=True)
class DbCheck:
    passed: bool
    #: (table, id) of every entity that differs; ``None`` on a side where it is missing
    diff: list[tuple[str, str, Any, Any]] = field(default_factory=list)

    @property
    def reward(self) -> float:
        return 1.0 if self.passed else 0.0


def replay(
    conn: sqlite3.Connection, actions: list[dict[str, Any]], *, strict: bool = False
) -> list[ReplayError]:
    """Apply gold actions (tau2's ``{"name", "arguments"}``) in order and return the ones that
    answered an error. tau2's evaluator logs such an error and goes on (some tasks' gold
    actions look up a wrong email on purpose, or try a call that must fail), so do we; with
    ``strict`` the first error raises instead."""
    errors = []
    for index, action in enumerate(actions):
        content, error = retail.call(conn, action["name"], action.get("arguments") or {})
        if error:
            if strict:
                raise ReplayError(index, action, content)
            errors.append(ReplayError(index, action, content))
    return errors


@functools.lru_cache(maxsize=256)
def _gold(actions: str) -> dict[str, dict[str, str]]:
    conn = store.fresh()
    replay(conn, json.loads(actions))
    return store.dump(conn)


def gold_world(actions: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """The expected final world of a task, cached by its gold actions."""
    return _gold(json.dumps(actions, sort_keys=True))


def compare(expected: dict[str, dict[str, str]], actual: dict[str, dict[str, str]]) -> DbCheck:
    diff = []
    for table in store.TABLES:
        want, got = expected.get(table, {}), actual.get(table, {})
        for key in sorted(want.keys() | got.keys()):
            if want.get(key) != got.get(key):
                load = lambda s: None if s is None else json.loads(s)  # noqa: E731
                diff.append((table, key, load(want.get(key)), load(got.get(key))))
    return DbCheck(passed=not diff, diff=diff)


def check_db(task: dict[str, Any], conn: sqlite3.Connection) -> DbCheck:
    """tau2's DB check of an episode's final world against the task's gold replay."""
    actions = task.get("evaluation_criteria", {}).get("actions") or []
    return compare(gold_world(actions), store.dump(conn))
