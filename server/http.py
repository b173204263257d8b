"""HTTP plumbing shared by every router: responses, problems, bodies and the body limit.

Responses are serialised with orjson straight into a Response, skipping FastAPI's generic
encoder, because a localhost step must cost well under a few milliseconds. Every error leaves
as ``application/problem+json``.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from palaestra.errors import InvalidRequest, PalaestraError, PayloadTooLarge, conceal
from palaestra.server import models
from palaestra.server.metrics import Metrics

PROBLEM = "application/problem+json"
log = logging.getLogger("palaestra.server")


class JSON(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)


def public_problem(exc: PalaestraError) -> dict[str, Any]:
    """The problem a client sees: never a traceback; a 5xx carries the ``correlation_id`` of
    the gateway's log line that holds the details."""
    return conceal(exc, log).to_problem()


def problem(exc: PalaestraError) -> Response:
    headers = {}
    if exc.status == 429:
        headers["Retry-After"] = str(int(exc.fields.get("retry_after_s", 5)))
    return Response(
        orjson.dumps(public_problem(exc), default=str), exc.status, headers, media_type=PROBLEM
    )


def unexpected(exc: BaseException, where: str) -> PalaestraError:
    """A bug in the gateway itself: logged with its traceback, answered as a bare 500."""
    err = PalaestraError(
        "the gateway failed on this request; quote the correlation_id to its operator",
        trace="".join(traceback.format_exception(exc)),
        path=where,
    )
    conceal(err, log)
    return err


async def _palaestra_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, PalaestraError)
    return problem(exc)


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    return problem(field_errors(exc))


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    return problem(unexpected(exc, request.url.path))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    err = PalaestraError(str(exc.detail), path=request.url.path)
    content = {**err.to_problem(), "status": exc.status_code, "title": str(exc.detail)}
    content["type"] = "about:blank"
    return Response(orjson.dumps(content), exc.status_code, media_type=PROBLEM)


def install_error_handlers(app: FastAPI) -> None:
    """Palaestra errors, bad bodies and Starlette's own errors (404, 405) as problems."""
    app.add_exception_handler(PalaestraError, _palaestra_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)


class BodyLimit:
    """Refuse bodies over the limit before they are read whole, and count answers by status."""

    def __init__(self, app: Any, limit: int, metrics: Metrics) -> None:
        self.app = app
        self.limit = limit
        self.metrics = metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await self._too_large(send)
                return
        received = 0

        async def limited_receive() -> dict[str, Any]:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.limit:
                raise _TooLarge
            return message

        async def counting_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.metrics.requests.labels(status=f"{message['status'] // 100}xx").inc()
            await send(message)

        try:
            await self.app(scope, limited_receive, counting_send)
        except _TooLarge:
            await self._too_large(send)

    async def _too_large(self, send: Any) -> None:
        exc = PayloadTooLarge(f"request body exceeds {self.limit} bytes", limit_bytes=self.limit)
        content = orjson.dumps(exc.to_problem())
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", PROBLEM.encode()), (b"connection", b"close")],
            }
        )
        await send({"type": "http.response.body", "body": content})


class _TooLarge(Exception):
    pass


def field_errors(exc: RequestValidationError) -> InvalidRequest:
    errors = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        errors.append({"field": loc or "body", "message": err.get("msg", "")})
    summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
    first = errors[0]["field"] if errors else "body"
    return InvalidRequest(f"invalid request: {summary}", field=first, errors=errors)


def body_schema(model: type[models._Body]) -> dict[str, Any]:
    """The body's JSON Schema for /docs (bodies are parsed by :func:`read_body`)."""
    json_schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    return {"requestBody": {"content": {"application/json": {"schema": json_schema}}}}


async def read_body(request: Request, model: type[models._Body]) -> Any:
    """Parse a JSON body into ``model`` whatever its content-type (``curl -d`` sends a form
    type), so every client that sends JSON is understood; an empty body means defaults."""
    raw = await request.body()
    try:
        data = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"body is not valid JSON: {exc}", field="body") from None
    return validate(model, data)


def validate(model: type[models._Body], data: Any) -> Any:
    """One validation for REST bodies and WebSocket messages: a 422 naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise field_errors(RequestValidationError(exc.errors())) from None
