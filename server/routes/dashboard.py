"""The dashboard: workers, envs and suites at a glance, as HTML."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

import palaestra
from palaestra import registry, tasks
from palaestra.server.state import State

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
async def dashboard(gw: State) -> HTMLResponse:
    envs, suites = await run_in_threadpool(lambda: (registry.specs(), tasks.suite_names()))
    html = gw.templates.get_template("dashboard.html").render(
        version=palaestra.__version__,
        backend=gw.backend.name,
        workers=[w.describe() for w in gw.backend.workers],
        envs=list(envs.values()),
        suites=suites,
        sessions=len(gw.sessions.sessions),
        auth=bool(gw.keys),
    )
    return HTMLResponse(html)
