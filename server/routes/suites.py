"""Suite listings: names, counts and the agent's view of each task (no oracle, no verifier)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from palaestra.server.http import JSON
from palaestra.server.state import Owner, State

router = APIRouter()


@router.get("/v1/suites")
async def list_suites(gw: State, who: str = Owner) -> Response:
    return JSON({"suites": await run_in_threadpool(gw.suites.listing)})


@router.get("/v1/suites/{suite}/tasks")
async def list_tasks(suite: str, gw: State, who: str = Owner) -> Response:
    found = await run_in_threadpool(gw.suites.load, suite)
    return JSON({"tasks": [t.agent_view() for t in found.tasks]})
