"""The gateway: HTTP API v1 (docs/api.md), assembled from one router per resource.

Routes stay thin: they authenticate, validate the body (pydantic, ``extra="forbid"``) and hand
over to the session and pool managers, which they reach through the app's
:class:`~palaestra.server.state.Gateway` (``server/state.py``). The routers live in
``server/routes/``; responses, problems and bodies in ``server/http.py``; env and suite listings,
loaded off the event loop, in ``server/catalog.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI

import palaestra
from palaestra import registry, tasks
from palaestra.redaction import install_log_redaction
from palaestra.resolve import resolve
from palaestra.server.http import JSON, BodyLimit, SecurityHeaders, install_error_handlers
from palaestra.server.retention import run_retention, sweep
from palaestra.server.routes import ROUTERS
from palaestra.server.routes import openenv as openenv_routes
from palaestra.server.settings import Settings
from palaestra.server.state import Gateway
from palaestra.workers.base import Backend

#: each worker backend's class and the settings its constructor takes, in order (named by
#: string: Docker's and Ray's client libraries are imported only by a gateway that uses them)
BACKENDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "local": ("palaestra.workers.local:LocalBackend", ("worker_user", "worker_python")),
    "docker": (
        "palaestra.workers.docker:DockerBackend",
        ("docker_image", "gateway_name", "docker_worker_cpus", "docker_worker_memory_mb",
         "docker_worker_pids", "docker_host"),
    ),
    "ray": (
        "palaestra.workers.ray:RayBackend",
        ("ray_address", "ray_placement", "ray_worker_cpus", "ray_worker_memory_mb",
         "ray_worker_resources", "ray_node_ip"),
    ),
}  # fmt: skip


def make_backend(settings: Settings) -> Backend:
    """The worker backend the settings name, built from the settings :data:`BACKENDS` lists."""
    target, names = BACKENDS[settings.backend]
    backend: Backend = resolve(target)(*(getattr(settings, name) for name in names))
    return backend


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    async with running(app.state.gateway):
        yield


@contextlib.asynccontextmanager
async def running(gw: Gateway) -> AsyncIterator[Gateway]:
    """The gateway's life without its HTTP server: workers started, jobs recovered, runs
    indexed, reaper and retention running; all stopped on the way out. The app's lifespan,
    and ``palaestra eval``'s in-process gateway (server/runner.py: no HTTP to itself)."""
    registry.load_plugins()
    # uvicorn's handlers exist by now: the operator's secrets never reach a log line
    install_log_redaction(gw.settings.operator().secrets())
    # before the workers start, which inherit the variable: they must find new suites too
    Path(gw.settings.suites_dir).mkdir(parents=True, exist_ok=True)
    tasks.add_suite_path(gw.settings.suites_dir)
    await gw.backend.start(gw.settings.workers)
    # jobs a crashed gateway left running are marked interrupted, for their owners to resume
    gw.jobs.recover()
    # runs recorded before the episode catalog existed (or copied in) are indexed once
    Path(gw.settings.runs_dir).mkdir(parents=True, exist_ok=True)
    await asyncio.to_thread(gw.sessions.episodes.index_missing, gw.settings.runs_dir)
    reaper = asyncio.create_task(gw.sessions.run_reaper())
    s = gw.settings
    retention = None
    if s.run_max_mb or s.run_max_age_days:  # runs kept under a size and an age, deletions logged
        retention = asyncio.create_task(
            run_retention(
                s.retention_every_s,
                lambda: sweep(
                    s.runs_dir,
                    gw.sessions.episodes,
                    s.run_max_mb * 1e6,
                    s.run_max_age_days * 86400,
                    set(gw.sessions.sessions),
                ),
            )
        )
    try:
        yield gw
    finally:
        reaper.cancel()
        if retention is not None:
            retention.cancel()
        await gw.synth_jobs.close_all()
        await gw.eval_jobs.close_all()
        await gw.sessions.close_all()
        await gw.backend.stop()
        gw.jobs.close()
        gw.sessions.episodes.close()


def build_gateway(settings: Settings, backend: Backend | None = None) -> Gateway:
    """The gateway's state on the backend the settings name (not started: see :func:`running`)."""
    if backend is None:
        backend = make_backend(settings)
        backend.heartbeat_s = settings.heartbeat_s
    return Gateway.build(settings, backend)


def create_app(settings: Settings | None = None, backend: Backend | None = None) -> FastAPI:
    settings = settings or Settings.from_env()
    gw = build_gateway(settings, backend)
    # a keyed gateway shows its API's shape to no stranger unless the operator says so
    docs = settings.docs_public()
    app = FastAPI(
        title="palaestra gateway",
        version=palaestra.__version__,
        lifespan=lifespan,
        default_response_class=JSON,
        docs_url="/docs" if docs else None,
        redoc_url="/redoc" if docs else None,
        openapi_url="/openapi.json" if docs else None,
    )
    app.state.gateway = gw
    # the pieces by name, for tests and operators poking at a live app
    app.state.settings = settings
    app.state.manager = gw.sessions
    app.state.backend = gw.backend
    app.state.synth_jobs = gw.synth_jobs
    app.state.eval_jobs = gw.eval_jobs
    app.add_middleware(
        BodyLimit,
        limit=settings.max_body_bytes,
        metrics=gw.metrics,
        timeout_s=settings.body_timeout_s,
    )
    # the outermost layer: every answer, errors of the layers inside included, gets the headers
    app.add_middleware(SecurityHeaders, docs=("/docs", "/redoc") if docs else ())
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.include_router(openenv_routes.router)  # /openenv/<env-or-task>/: OpenEnv's protocol
    return app
