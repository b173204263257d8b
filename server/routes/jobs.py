"""The routes every kind of gateway job has, made once for each (``server/jobs.py``): create
(202 with a ``Location``), list the caller's, get one, cancel, resume. A kind adds its own
beside them (evaluation results).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from palaestra.server.http import JSON, body_schema, read_body
from palaestra.server.jobs import Job
from palaestra.server.state import Gateway, Owner, State


class Jobs(Protocol):
    """What the routes call on a kind's manager (a :class:`~palaestra.server.jobs.JobManager`
    with its ``create``)."""

    def create(self, owner: str, body: Any) -> Job: ...

    def public(self, job: Job) -> dict[str, Any]: ...

    def owned(self, owner: str) -> list[Job]: ...

    def get(self, owner: str, job_id: str) -> Job: ...

    async def cancel(self, owner: str, job_id: str, wait_s: float = 30.0) -> Job: ...

    def resume(self, owner: str, job_id: str) -> Job: ...


def job_routes(
    path: str,
    names: tuple[str, str],
    body: type[BaseModel],
    manager: Callable[[Gateway], Jobs],
    check: Callable[[Gateway, Any], None] | None = None,
) -> APIRouter:
    """A router with the five job routes under ``path``, reaching the kind's manager through
    ``manager(gateway)``. ``names`` (one job, several) name the routes as the API has always
    named them (``create_eval``, ``list_evals``: OpenAPI's operation ids). ``check(gateway,
    body)`` refuses a body before the job is made (in a thread: it may load a suite)."""
    one, many = names
    router = APIRouter()

    async def create(request: Request, gw: State, who: str = Owner) -> Response:
        jobs, parsed = manager(gw), await read_body(request, body)
        if check is not None:
            await run_in_threadpool(check, gw, parsed)
        job = jobs.create(who, parsed)
        headers = {"Location": f"{path}/{job.id}"}
        return JSON(jobs.public(job), status_code=202, headers=headers)

    async def listing(gw: State, who: str = Owner) -> Response:
        jobs = manager(gw)
        return JSON({"jobs": [jobs.public(j) for j in jobs.owned(who)]})

    async def get(job_id: str, gw: State, who: str = Owner) -> Response:
        jobs = manager(gw)
        return JSON(jobs.public(jobs.get(who, job_id)))

    async def cancel(job_id: str, gw: State, who: str = Owner) -> Response:
        jobs = manager(gw)
        return JSON(jobs.public(await jobs.cancel(who, job_id)), status_code=202)

    async def resume(job_id: str, gw: State, who: str = Owner) -> Response:
        jobs = manager(gw)
        return JSON(jobs.public(jobs.resume(who, job_id)), status_code=202)

    schema = body_schema(body)
    router.add_api_route(
        path, create, methods=["POST"], status_code=202, name=f"create_{one}", openapi_extra=schema
    )
    router.add_api_route(path, listing, methods=["GET"], name=f"list_{many}")
    router.add_api_route(f"{path}/{{job_id}}", get, methods=["GET"], name=f"get_{one}")
    for verb, route in (("cancel", cancel), ("resume", resume)):
        router.add_api_route(
            f"{path}/{{job_id}}/{verb}", route, methods=["POST"], status_code=202,
            name=f"{verb}_{one}",
        )  # fmt: skip
    return router
