"""Synthesis jobs: long jobs with progress, each writing a suite the gateway then serves."""

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
    job = gw.synth_jobs.submit(who, body)
    headers = {"Location": f"/v1/synth/jobs/{job.id}"}
    return JSON(job.public(), status_code=202, headers=headers)


@router.get("/v1/synth/jobs")
async def list_synth_jobs(gw: State, who: str = Owner) -> Response:
    return JSON({"jobs": [j.public() for j in gw.synth_jobs.owned(who)]})


@router.get("/v1/synth/jobs/{job_id}")
async def get_synth_job(job_id: str, gw: State, who: str = Owner) -> Response:
    return JSON(gw.synth_jobs.get(who, job_id).public())
