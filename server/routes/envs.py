"""Env listings: ids, families, actions and, per env, its default spaces."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from palaestra import registry
from palaestra.server.catalog import env_entries, env_entry
from palaestra.server.http import JSON
from palaestra.server.state import Owner, State

router = APIRouter()


@router.get("/v1/envs")
async def list_envs(who: str = Owner) -> Response:
    return JSON({"envs": await run_in_threadpool(env_entries)})


@router.get("/v1/envs/{env_id:path}")
async def get_env(env_id: str, gw: State, who: str = Owner) -> Response:
    spec = await run_in_threadpool(registry.spec, env_id)
    entry = await run_in_threadpool(env_entry, spec, True)
    if "unavailable" not in entry:
        entry["spaces"] = (await gw.sessions.describe(spec))["spaces"]
    return JSON(entry)
