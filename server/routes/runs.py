"""Recorded runs: the caller's own runs, episodes and images only, and verifier reports reduced
to the outcome. Listings are pages of the episode catalog (``server/episodes.py``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import orjson
from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, Response

from palaestra import recording
from palaestra.errors import NotFound
from palaestra.server.episodes import EpisodeQuery, RunQuery
from palaestra.server.http import JSON
from palaestra.server.state import Owner, State

router = APIRouter()
#: the listings' query parameters, one dataclass each (the catalog's own filters)
Runs = Annotated[RunQuery, Depends()]
Episodes = Annotated[EpisodeQuery, Depends()]
_IMAGE = re.compile(r"^[A-Za-z0-9_.-]+\.(png|jpg)$")


@router.get("/v1/runs")
async def list_runs(gw: State, query: Runs, who: str = Owner) -> Response:
    page = gw.sessions.episodes.runs(who, query)
    page["runs"] = page.pop("items")
    return JSON(page)


@router.get("/v1/runs/{run_id}/episodes")
async def list_episodes(run_id: str, gw: State, query: Episodes, who: str = Owner) -> Response:
    page = gw.sessions.episodes.episodes(who, run_id, query)
    page["episodes"] = page.pop("items")
    return JSON(page)


@router.get("/v1/runs/{run_id}/sessions/{sid}")
async def get_recording(run_id: str, sid: str, gw: State, who: str = Owner) -> Response:
    session_dir = _owned(gw.settings.runs_dir, run_id, sid, who)
    events = []
    corrupt = recording.Corrupt()
    for event in recording.read_events(session_dir, corrupt=corrupt):
        if isinstance(event.get("verifier"), dict):
            v = event["verifier"]  # the checks reveal the answer; only the outcome leaves
            event["verifier"] = {k: v.get(k) for k in ("score", "success", "error")}
        event.pop("snapshot", None)  # the end state is the verifier's, not the agent's
        events.append(event)
    body = {"run_id": run_id, "session_id": sid, "events": events, "corrupt_lines": corrupt}
    return JSON(body)


@router.get("/v1/runs/{run_id}/sessions/{sid}/images/{name}")
async def get_image(run_id: str, sid: str, name: str, gw: State, who: str = Owner) -> Response:
    """An image a recorded observation names (``{"__file__": "images/<name>"}``)."""
    session_dir = _owned(gw.settings.runs_dir, run_id, sid, who)
    path = session_dir / "images" / name
    if not _IMAGE.match(name) or not path.is_file():
        raise NotFound(f"no image {name!r} in recorded session {run_id}/{sid}")
    media = "image/png" if name.endswith(".png") else "image/jpeg"
    return FileResponse(path, media_type=media)


def _owned(runs_dir: Path, run_id: str, sid: str, who: str) -> Path:
    """The recorded session's folder if it is the caller's; a 404 otherwise (foreign or absent
    look the same)."""
    if _owner(runs_dir, run_id, sid) != who:
        raise NotFound(f"no recorded session {run_id}/{sid} for this API key")
    return Path(runs_dir) / run_id / sid


def _owner(runs_dir: Path, run_id: str, sid: str) -> str | None:
    if "/" in run_id or "/" in sid or run_id.startswith(".") or sid.startswith("."):
        return None
    meta = Path(runs_dir) / run_id / sid / "session.json"
    try:
        return str(orjson.loads(meta.read_bytes()).get("owner"))
    except (OSError, orjson.JSONDecodeError):
        return None
