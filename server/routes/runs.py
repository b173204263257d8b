"""Recorded runs: the caller's own sessions only, and verifier reports reduced to the outcome."""

from __future__ import annotations

from pathlib import Path

import orjson
from fastapi import APIRouter
from fastapi.responses import Response

from palaestra import recording
from palaestra.errors import NotFound
from palaestra.server.http import JSON
from palaestra.server.state import Owner, State

router = APIRouter()


@router.get("/v1/runs")
async def list_runs(gw: State, who: str = Owner) -> Response:
    runs_dir = gw.settings.runs_dir
    runs = []
    for run in recording.list_runs(runs_dir):
        run["sessions"] = [s for s in run["sessions"] if _owner(runs_dir, run["run_id"], s) == who]
        if run["sessions"]:
            runs.append(run)
    return JSON({"runs": runs})


@router.get("/v1/runs/{run_id}/sessions/{sid}")
async def get_recording(run_id: str, sid: str, gw: State, who: str = Owner) -> Response:
    runs_dir = gw.settings.runs_dir
    if _owner(runs_dir, run_id, sid) != who:
        raise NotFound(f"no recorded session {run_id}/{sid} for this API key")
    events = []
    for event in recording.read_events(runs_dir / run_id / sid):
        if isinstance(event.get("verifier"), dict):
            v = event["verifier"]  # the checks reveal the answer; only the outcome leaves
            event["verifier"] = {k: v.get(k) for k in ("score", "success", "error")}
        events.append(event)
    return JSON({"run_id": run_id, "session_id": sid, "events": events})


def _owner(runs_dir: Path, run_id: str, sid: str) -> str | None:
    if "/" in run_id or "/" in sid or run_id.startswith(".") or sid.startswith("."):
        return None
    meta = Path(runs_dir) / run_id / sid / "session.json"
    try:
        return str(orjson.loads(meta.read_bytes()).get("owner"))
    except (OSError, orjson.JSONDecodeError):
        return None
