"""Evaluation jobs: a built-in agent over a suite, run by the gateway (``server/evals.py``).

The jobs share the persistent job store with synthesis jobs (``server/jobs.py``): they survive
a restart, and one interrupted by it continues with ``POST /v1/evals/{id}/resume``.
"""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from palaestra.server import models
from palaestra.server.http import JSON, body_schema, read_body
from palaestra.server.state import Owner, State

router = APIRouter()


@router.post("/v1/evals", status_code=202, openapi_extra=body_schema(models.CreateEval))
async def create_eval(request: Request, gw: State, who: str = Owner) -> Response:
    body = await read_body(request, models.CreateEval)
    await run_in_threadpool(gw.eval_jobs.validate, body)
    job = gw.eval_jobs.create(who, body)
    headers = {"Location": f"/v1/evals/{job.id}"}
    return JSON(gw.eval_jobs.public(job), status_code=202, headers=headers)


@router.get("/v1/evals")
async def list_evals(gw: State, who: str = Owner) -> Response:
    return JSON({"jobs": [gw.eval_jobs.public(j) for j in gw.eval_jobs.owned(who)]})


@router.get("/v1/evals/{job_id}")
async def get_eval(job_id: str, gw: State, who: str = Owner) -> Response:
    return JSON(gw.eval_jobs.public(gw.eval_jobs.get(who, job_id)))


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


@router.post("/v1/evals/{job_id}/cancel", status_code=202)
async def cancel_eval(job_id: str, gw: State, who: str = Owner) -> Response:
    job = await gw.eval_jobs.cancel(who, job_id)
    return JSON(gw.eval_jobs.public(job), status_code=202)


@router.post("/v1/evals/{job_id}/resume", status_code=202)
async def resume_eval(job_id: str, gw: State, who: str = Owner) -> Response:
    job = gw.eval_jobs.resume(who, job_id)
    return JSON(gw.eval_jobs.public(job), status_code=202)
