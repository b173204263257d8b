"""Re-score recorded episodes with today's verifiers, from their end-state snapshots.

When a verifier is fixed, old runs are re-scored without re-running agents: each episode's
snapshot (what the verifier read at its end, :mod:`palaestra.workers.snapshot`) is served back
through a :class:`~palaestra.verifiers.validation.StaticProbe` to the task's current
declarative verifier, and every verdict that changed is listed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from palaestra.data.episodes import Episode, RunReport, read_run
from palaestra.tasks import Task, get_task
from palaestra.verifiers.base import DeclarativeVerifier
from palaestra.verifiers.validation import StaticProbe
from palaestra.workers.snapshot import restore


@dataclass
class Regraded:
    episode: str
    task: str | None
    old_score: float | None
    old_success: bool | None
    score: float | None
    success: bool | None
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.error is None and (
            self.old_success != self.success or self.old_score != self.score
        )


def regrade_episode(ep: Episode, task_of: Callable[[str], Task] = get_task) -> Regraded:
    old = ep.verdict
    row = Regraded(ep.key, ep.meta.get("task"), old["score"], old["success"], None, None)
    snap = ep.end.get("snapshot")
    if not ep.meta.get("task"):
        row.error = "no task, so no verifier"
    elif not snap:
        row.error = "no end-state snapshot recorded (recorded before snapshots, or unrecorded)"
    else:
        folder = ep.session_dir / snap
        try:
            state = restore(orjson.loads((folder / "state.json").read_bytes()), folder)
            result = DeclarativeVerifier(task_of(ep.meta["task"]).verifier).verify(
                StaticProbe(state)
            )
        except Exception as exc:  # a missing task or snapshot: reported, the rest goes on
            row.error = f"{type(exc).__name__}: {exc}"
        else:
            row.score, row.success, row.error = result.score, result.success, result.error
    return row


def regrade(
    path: Path, task_of: Callable[[str], Task] = get_task, report: RunReport | None = None
) -> list[Regraded]:
    """Every finished episode of the run at ``path``, re-scored."""
    return [regrade_episode(ep, task_of) for ep in read_run(path, report)]


def summary(rows: list[Regraded]) -> dict[str, Any]:
    return {
        "episodes": len(rows),
        "regraded": sum(r.error is None for r in rows),
        "changed": [asdict(r) for r in rows if r.changed],
        "not_regraded": [{"episode": r.episode, "why": r.error} for r in rows if r.error],
    }
