"""Synthesis jobs: long jobs with progress, each writing a suite the gateway then serves.

The jobs live in the gateway's persistent job store (``server/jobs.py``): they survive a
restart, and one interrupted by it is resumed with ``POST /v1/synth/jobs/{id}/resume``.
"""

from __future__ import annotations

from palaestra.server import models
from palaestra.server.routes.jobs import job_routes

router = job_routes(
    "/v1/synth/jobs", ("synth_job", "synth_jobs"), models.CreateSynthJob, lambda gw: gw.synth_jobs
)
