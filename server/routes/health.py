"""Health and Prometheus metrics."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from fastapi.responses import Response

import palaestra
from palaestra.server.http import JSON
from palaestra.server.state import State, key_from

router = APIRouter()


@router.get("/v1/health")
async def health(request: Request, gw: State) -> Response:
    """The status for anyone; the details (workers, pids, sessions) for a key holder unless
    the operator made them public (``public_monitoring``)."""
    if not gw.may_monitor(key_from(request.headers)):
        return JSON({"status": "ok", "version": palaestra.__version__})
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
async def prometheus(request: Request, gw: State) -> Response:
    if not gw.may_monitor(key_from(request.headers)):
        gw.authenticate(None)  # raises the 401 that says how to send a key
    gw.count_workers()
    return Response(gw.metrics.render(), media_type="text/plain; version=0.0.4")
