"""A recorded run read back as episodes: what regrade, replay and export iterate over."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palaestra import recording
from palaestra.errors import NotFound


@dataclass
class Episode:
    session_dir: Path
    meta: dict[str, Any]
    number: int
    seed: int | None
    reset: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> str:
        """``<session>/<episode>``: how the CLI names it inside its run."""
        return f"{self.session_dir.name}/{self.number}"

    @property
    def complete(self) -> bool:
        last = self.steps[-1] if self.steps else {}
        return bool(last.get("terminated") or last.get("truncated"))

    @property
    def end(self) -> dict[str, Any]:
        return self.steps[-1] if self.steps else {}

    @property
    def verdict(self) -> dict[str, Any]:
        """The verifier's outcome as recorded: score, success, error."""
        v = self.end.get("verifier") or (self.end.get("info") or {}).get("verifier") or {}
        return {"score": v.get("score"), "success": v.get("success"), "error": v.get("error")}

    @property
    def instruction(self) -> str:
        """The instruction the agent was given: the goal the env showed at reset when it shows
        one (a MiniWoB episode's own "Click on Tab #1.", drawn from its seed), else the task
        view's instruction (``info["task"]``, what ``Task.agent_view`` gave). Never the
        suite's generic description when the episode had its own."""
        obs = self.reset.get("observation")
        goal = obs.get("goal") if isinstance(obs, dict) else None
        if isinstance(goal, str) and goal.strip():
            return goal
        view = (self.reset.get("info") or {}).get("task") or {}
        found = view.get("instruction") if isinstance(view, dict) else None
        return str(found or self.meta.get("task") or "")

    @property
    def family(self) -> str:
        env = str(self.meta.get("env") or "")
        return env.split("/")[-1].rsplit("-v", 1)[0] if env else ""


@dataclass
class RunReport:
    """What reading a run found beyond its episodes: corrupt lines, unfinished episodes."""

    corrupt: dict[str, list[int]] = field(default_factory=dict)
    incomplete: list[str] = field(default_factory=list)

    @property
    def still_written(self) -> bool:
        return bool(self.incomplete)

    def lines(self) -> list[str]:
        out = [f"skipped corrupt line(s) {v} of {k}/events.jsonl" for k, v in self.corrupt.items()]
        if self.incomplete:
            out.append(
                f"{len(self.incomplete)} episode(s) not finished (still being written, or their "
                f"session stopped mid-episode): {', '.join(self.incomplete[:10])}"
            )
        return out


def run_dir(runs_dir: Path, run_id: str) -> Path:
    """The run's folder; NotFound (404) for a name that is not a recorded run."""
    path = Path(runs_dir) / run_id
    if "/" in run_id or run_id.startswith(".") or not (path / "run.json").is_file():
        raise NotFound(f"no recorded run {run_id!r} under {runs_dir}", run_id=run_id)
    return path


def read_run(path: Path, report: RunReport | None = None) -> Iterator[Episode]:
    """Every finished episode of the run at ``path``, session by session; unfinished ones and
    corrupt lines go to ``report``."""
    report = report if report is not None else RunReport()
    tags = json.loads((path / "run.json").read_text()).get("tags") or {}
    for session_dir in sorted(p.parent for p in path.glob("*/session.json")):
        meta = json.loads((session_dir / "session.json").read_text())
        meta.setdefault("tags", tags)
        corrupt = recording.Corrupt()
        current: Episode | None = None
        for event in recording.read_events(session_dir, corrupt=corrupt):
            kind = event.get("type")
            if kind == "reset":
                if current is not None and not current.complete:
                    report.incomplete.append(current.key)
                current = Episode(
                    session_dir, meta, int(event.get("episode", 0)), event.get("seed"), event
                )
            elif kind == "step" and current is not None:
                current.steps.append(event)
                if current.complete:
                    yield current
                    current = None
        if current is not None and not current.complete:
            report.incomplete.append(current.key)
        if corrupt:
            report.corrupt[session_dir.name] = list(corrupt)


def find(path: Path, key: str) -> Episode:
    """One episode by ``<session>`` (its first) or ``<session>/<n>``; NotFound otherwise."""
    session, _, number = key.partition("/")
    for ep in read_run(path):
        if ep.session_dir.name == session and (not number or str(ep.number) == number):
            return ep
    raise NotFound(f"no finished episode {key!r} in run {path.name}", episode=key)
