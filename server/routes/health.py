"""Health and Prometheus metrics."""

from __future__ import annotations

import time

from fastapi import APIRouter
from fastapi.responses import Response

import palaestra
from palaestra.server.http import JSON
from palaestra.server.state import State

router = APIRouter()


@router.get("/v1/health")
async def health(gw: State) -> Response:
    gw.count_workers()
    return JSON(
        {
            "status": "ok",
            "version": palaestra.__version__,
            "backend": gw.backend.name,
            "uptime_s": round(time.time() - gw.started, 1),
            "sessions": len(gw.sessions.sessions),
            "workers": [w.describe() for w in gw.backend.workers],
        }
    )


@router.get("/metrics")
async def prometheus(gw: State) -> Response:
    gw.count_workers()
    return Response(gw.metrics.render(), media_type="text/plain; version=0.0.4")
