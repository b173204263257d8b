"""Synthesis jobs: long jobs with progress, each writing a suite the gateway then serves.

The jobs live in the gateway's persistent job store (``server/jobs.py``): they survive a
restart, and one interrupted by it is resumed with ``POST /v1/synth/jobs/{id}/resume``.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from palaestra.server import models
from palaestra.server.http import JSON, body_schema, read_body
from palaestra.server.state import Owner, State

router = APIRouter()


@router.post("/v1/synth/jobs", status_code=202, openapi_extra=body_schema(models.CreateSynthJob))
async def create_synth_job(request: Request, gw: State, who: str = Owner) -> Response:
    body = await read_body(request, models.CreateSynthJob)
    job = gw.synth_jobs.create(who, body)
    headers = {"Location": f"/v1/synth/jobs/{job.id}"}
    return JSON(gw.synth_jobs.public(job), status_code=202, headers=headers)


@router.get("/v1/synth/jobs")
async def list_synth_jobs(gw: State, who: str = Owner) -> Response:
    return JSON({"jobs": [gw.synth_jobs.public(j) for j in gw.synth_jobs.owned(who)]})


@router.get("/v1/synth/jobs/{job_id}")
async def get_synth_job(job_id: str, gw: State, who: str = Owner) -> Response:
    return JSON(gw.synth_jobs.public(gw.synth_jobs.get(who, job_id)))


@router.post("/v1/synth/jobs/{job_id}/cancel", status_code=202)
async def cancel_synth_job(job_id: str, gw: State, who: str = Owner) -> Response:
    job = await gw.synth_jobs.cancel(who, job_id)
    return JSON(gw.synth_jobs.public(job), status_code=202)


@router.post("/v1/synth/jobs/{job_id}/resume", status_code=202)
async def resume_synth_job(job_id: str, gw: State, who: str = Owner) -> Response:
    job = gw.synth_jobs.resume(who, job_id)
    return JSON(gw.synth_jobs.public(job), status_code=202)
