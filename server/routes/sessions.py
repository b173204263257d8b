"""Sessions over REST and over a WebSocket (the same reset/step/close, lower latency)."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from fastapi import APIRouter, Query, Request, WebSocket
from fastapi.responses import Response

from palaestra import codec
from palaestra.errors import InvalidRequest, PalaestraError
from palaestra.server import models, ws
from palaestra.server.http import (
    JSON,
    body_schema,
    check_json,
    public_problem,
    read_body,
    unexpected,
    validate,
)
from palaestra.server.sessions import Session, SessionManager
from palaestra.server.state import Owner, State, key_from
from palaestra.spaces import json_text_keys
from palaestra.steps import ResetReply, StepReply

router = APIRouter()

#: ``?structured=true``: JSON-text fields (``tools``, ``ui_elements``, ``windows``, ...) come as
#: JSON values; the default keeps them as text, as before
Structured = Query(False, description="JSON-text observation fields as JSON values")


def _shaped(reply: Any, session: Session, structured: bool) -> Any:
    """A reset/step reply with the session's JSONText fields parsed when asked for."""
    if not structured or not isinstance(reply, dict) or "observation" not in reply:
        return reply
    keys = json_text_keys(session.spaces.get("observation", {}))
    return {**reply, "observation": codec.structure(reply["observation"], keys)}


@router.post("/v1/sessions", status_code=201, openapi_extra=body_schema(models.CreateSession))
async def create_session(request: Request, gw: State, who: str = Owner) -> Response:
    body = await read_body(request, models.CreateSession)
    (session,) = await gw.sessions.create(who, body)
    return JSON(session.public(), status_code=201)


@router.get("/v1/sessions")
async def list_sessions(gw: State, who: str = Owner) -> Response:
    return JSON({"sessions": [s.public() for s in gw.sessions.owned(who)]})


@router.get("/v1/sessions/{sid}")
async def get_session(sid: str, gw: State, who: str = Owner) -> Response:
    return JSON(gw.sessions.get(who, sid).public())


def _call(model: type[models.Reset] | type[models.Step]) -> Callable[..., Awaitable[Response]]:
    """The REST route of a reset or a step: its body, the caller's session, the shaped reply."""

    async def route(
        sid: str, request: Request, gw: State, who: str = Owner, structured: bool = Structured
    ) -> Response:
        body = await read_body(request, model)
        return JSON(await _played(gw.sessions, gw.sessions.get(who, sid), body, structured))

    return route


for _op, _model in (("reset", models.Reset), ("step", models.Step)):
    router.add_api_route(
        f"/v1/sessions/{{sid}}/{_op}", _call(_model), methods=["POST"], name=_op,
        openapi_extra=body_schema(_model),
    )  # fmt: skip


async def _played(
    manager: SessionManager, session: Session, body: models.Reset | models.Step, structured: bool
) -> Any:
    """A reset or a step of ``session`` (from a REST body or a WebSocket message), shaped."""
    reply: StepReply | ResetReply
    if isinstance(body, models.Step):
        reply = await manager.step(session, body.action)
    else:
        reply = await manager.reset(session, body.seed, body.options)
    return _shaped(reply, session, structured)


@router.get("/v1/sessions/{sid}/screenshot")
async def screenshot(sid: str, gw: State, who: str = Owner) -> Response:
    png = await gw.sessions.render(gw.sessions.get(who, sid))
    return Response(base64.b64decode(png), media_type="image/png")


@router.delete("/v1/sessions/{sid}", status_code=204)
async def delete_session(sid: str, gw: State, who: str = Owner) -> Response:
    await gw.sessions.close(gw.sessions.get(who, sid))
    return Response(status_code=204)


@router.websocket("/v1/sessions/{sid}/ws")
async def session_ws(websocket: WebSocket, sid: str, gw: State) -> None:
    try:
        who = gw.authenticate(key_from(websocket.headers) or websocket.query_params.get("api_key"))
        session = gw.sessions.get(who, sid)
    except PalaestraError as exc:
        await websocket.close(code=4000 + exc.status, reason=exc.detail[:120])
        return
    await websocket.accept()
    structured = websocket.query_params.get("structured", "").lower() in ("1", "true")
    await _serve_ws(websocket, gw.sessions, session, structured)


async def _serve_ws(
    websocket: WebSocket, manager: SessionManager, session: Session, structured: bool = False
) -> None:
    """One JSON message per call: {"op": "reset"|"step"|"close", ...}; errors as {"error": ...}."""

    async def answer(raw: str) -> ws.Reply:
        try:
            check_json(websocket, raw, "message")
            msg = orjson.loads(raw)
            if not isinstance(msg, dict):
                raise InvalidRequest("a message is a JSON object with an 'op'", field="op")
            op = msg.get("op")
            fields = {k: v for k, v in msg.items() if k != "op"}
            reply: Any
            if op in ("reset", "step"):
                body = validate(models.Step if op == "step" else models.Reset, fields)
                reply = await _played(manager, session, body, structured)
            elif op == "close":
                await manager.close(session)
                return ws.Reply(orjson.dumps({"closed": True}), close=1000)
            else:
                raise InvalidRequest(f"unknown op {op!r}: use reset, step or close", field="op")
        except PalaestraError as exc:
            reply = {"error": public_problem(exc)}
        except orjson.JSONDecodeError as exc:
            reply = {"error": InvalidRequest(f"message is not JSON: {exc}").to_problem()}
        except Exception as exc:  # a gateway bug: logged, the socket stays open
            reply = {"error": public_problem(unexpected(exc, websocket.url.path))}
        return ws.Reply(orjson.dumps(reply).decode())

    await ws.serve(websocket, answer)
