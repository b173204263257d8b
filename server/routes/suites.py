"""Suite listings: names, counts and the agent's view of each task (``Task.agent_view``: no
oracle, no verifier, no private metadata)."""

from __future__ import annotations

from fastapi import APIRouter, Query
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from palaestra.server.http import JSON
from palaestra.server.state import Owner, State

router = APIRouter()


@router.get("/v1/suites")
async def list_suites(gw: State, who: str = Owner) -> Response:
    return JSON({"suites": await run_in_threadpool(gw.suites.listing)})


@router.get("/v1/suites/{suite}/tasks")
async def list_tasks(
    suite: str,
    gw: State,
    who: str = Owner,
    split: str | None = Query(None, description="only the tasks of this split (tau2's train/test)"),
) -> Response:
    """The views of the suite's tasks (of one split if given: ``SuiteCatalog.views``)."""
    return JSON({"tasks": await run_in_threadpool(gw.suites.views, suite, split)})
