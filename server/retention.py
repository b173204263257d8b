"""Retention of recorded runs: each run kept under a maximum size and age (operator settings
``run_max_mb`` and ``run_max_age_days``; 0 means no limit).

A recording grows fast (a MiniWoB pool member writes about 0.75 MB a minute), so the gateway
sweeps ``runs_dir`` every ``retention_every_s``: in each run, sessions older than the age limit
go, then the oldest sessions until the run fits its size. A session still live is never
touched. Every deletion is logged (run, session, size, age, why) and leaves the catalog.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from palaestra.server.episodes import EpisodeCatalog

log = logging.getLogger("palaestra.retention")


@dataclass
class Deleted:
    run_id: str
    session_id: str
    bytes: int
    age_days: float
    why: str


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def sweep(
    runs_dir: Path,
    catalog: EpisodeCatalog | None,
    max_bytes: float,
    max_age_s: float,
    live: Collection[str] = (),
    now: float | None = None,
) -> list[Deleted]:
    """Apply the policy once; the sessions deleted, each logged."""
    now = time.time() if now is None else now
    deleted: list[Deleted] = []
    for run in sorted(p for p in Path(runs_dir).iterdir() if (p / "run.json").is_file()):
        sessions = sorted(
            (p.parent for p in run.glob("*/session.json")),
            key=lambda d: (d / "session.json").stat().st_mtime,
        )
        sizes = {d: _size(d) for d in sessions}
        total = sum(sizes.values())
        for d in sessions:
            if d.name in live:
                continue
            age = now - (d / "events.jsonl" if (d / "events.jsonl").exists() else d).stat().st_mtime
            why = None
            if max_age_s and age > max_age_s:
                why = f"older than {max_age_s / 86400:g} days"
            elif max_bytes and total > max_bytes:
                why = f"run over {max_bytes / 1e6:g} MB ({total / 1e6:.1f} MB)"
            if why is None:
                continue
            shutil.rmtree(d, ignore_errors=True)
            total -= sizes[d]
            gone = Deleted(run.name, d.name, sizes[d], round(age / 86400, 3), why)
            log.warning(
                "retention: deleted %s/%s (%.2f MB, %.2f days old): %s",
                gone.run_id,
                gone.session_id,
                gone.bytes / 1e6,
                gone.age_days,
                why,
            )
            if catalog is not None:
                catalog.forget(run.name, d.name)
            deleted.append(gone)
    return deleted


async def run_retention(
    every_s: float, once: Callable[[], list[Deleted]]
) -> None:  # pragma: no cover - a loop around sweep
    while True:
        await asyncio.sleep(every_s)
        await asyncio.to_thread(once)
