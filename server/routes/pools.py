"""Pools: batched sessions, stepped in lockstep or asynchronously (send/recv), resizable."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from palaestra.server import models
from palaestra.server.http import JSON, body_schema, read_body
from palaestra.server.state import Owner, State

router = APIRouter()


@router.post("/v1/pools", status_code=201, openapi_extra=body_schema(models.CreatePool))
async def create_pool(request: Request, gw: State, who: str = Owner) -> Response:
    body = await read_body(request, models.CreatePool)
    pool = await gw.pools.create(who, body)
    return JSON(pool.public(), status_code=201)


@router.get("/v1/pools/{pool_id}")
async def get_pool(pool_id: str, gw: State, who: str = Owner) -> Response:
    return JSON(gw.pools.get(who, pool_id).public())


@router.post("/v1/pools/{pool_id}/reset", openapi_extra=body_schema(models.PoolReset))
async def reset_pool(pool_id: str, request: Request, gw: State, who: str = Owner) -> Response:
    body = await read_body(request, models.PoolReset)
    return JSON(await gw.pools.reset(gw.pools.get(who, pool_id), body.seed, body.options))


@router.post("/v1/pools/{pool_id}/step", openapi_extra=body_schema(models.PoolStep))
async def step_pool(pool_id: str, request: Request, gw: State, who: str = Owner) -> Response:
    body = await read_body(request, models.PoolStep)
    return JSON(await gw.pools.step(gw.pools.get(who, pool_id), body.actions))


@router.post("/v1/pools/{pool_id}/resize", openapi_extra=body_schema(models.PoolResize))
async def resize_pool(pool_id: str, request: Request, gw: State, who: str = Owner) -> Response:
    body = await read_body(request, models.PoolResize)
    return JSON(await gw.pools.resize(gw.pools.get(who, pool_id), body.size))


@router.post("/v1/pools/{pool_id}/send", openapi_extra=body_schema(models.PoolSend))
async def send_pool(pool_id: str, request: Request, gw: State, who: str = Owner) -> Response:
    body = await read_body(request, models.PoolSend)
    return JSON(gw.pools.send(gw.pools.get(who, pool_id), body.actions, body.env_ids))


@router.post("/v1/pools/{pool_id}/recv", openapi_extra=body_schema(models.PoolRecv))
async def recv_pool(pool_id: str, request: Request, gw: State, who: str = Owner) -> Response:
    body = await read_body(request, models.PoolRecv)
    pool = gw.pools.get(who, pool_id)
    return JSON(await gw.pools.recv(pool, body.batch_size, body.timeout_s))


@router.delete("/v1/pools/{pool_id}", status_code=204)
async def delete_pool(pool_id: str, gw: State, who: str = Owner) -> Response:
    await gw.pools.close(gw.pools.get(who, pool_id))
    return Response(status_code=204)
