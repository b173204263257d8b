"""Evaluation jobs: a built-in agent over a suite, run by the gateway (``server/evals.py``).

The jobs share the persistent job store with synthesis jobs (``server/jobs.py``): they survive
a restart, and one interrupted by it continues with ``POST /v1/evals/{id}/resume``.
"""

from __future__ import annotations

from fastapi import Query
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from palaestra.server import models
from palaestra.server.http import JSON
from palaestra.server.routes.jobs import job_routes
from palaestra.server.state import Owner, State

router = job_routes(
    "/v1/evals",
    ("eval", "evals"),
    models.CreateEval,
    lambda gw: gw.eval_jobs,
    check=lambda gw, body: gw.eval_jobs.validate(body),
)


@router.get("/v1/evals/{job_id}/results")
async def eval_results(
    job_id: str,
    gw: State,
    who: str = Owner,
    offset: int = Query(default=0, ge=0),
    limit: int = Query(default=1000, ge=1, le=10_000),
) -> Response:
    job = gw.eval_jobs.get(who, job_id)
    return JSON(await run_in_threadpool(gw.eval_jobs.results, job, offset, limit))
