"""The dashboard: workers, envs and suites at a glance, as HTML."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

import palaestra
from palaestra import registry, tasks
from palaestra.server.state import State, key_from

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
async def dashboard(request: Request, gw: State) -> HTMLResponse:
    envs, suites = await run_in_threadpool(lambda: (registry.specs(), tasks.suite_names()))
    # the workers (pids) and the session count are health details: for key holders only
    details = gw.may_monitor(key_from(request.headers) or request.query_params.get("api_key"))
    html = gw.templates.get_template("dashboard.html").render(
        version=palaestra.__version__,
        backend=gw.backend.name,
        workers=[w.describe() for w in gw.backend.workers] if details else [],
        envs=list(envs.values()),
        suites=suites,
        sessions=len(gw.sessions.sessions) if details else "?",
        auth=bool(gw.keys),
    )
    return HTMLResponse(html)
