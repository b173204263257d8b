"""HTTP plumbing shared by every router: responses, problems, bodies and the body limit.

Responses are serialised with orjson straight into a Response, skipping FastAPI's generic
encoder, because a localhost step must cost well under a few milliseconds. Every error leaves
as ``application/problem+json``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import traceback
from typing import Any

import numpy as np
import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from palaestra.errors import InvalidRequest, PalaestraError, PayloadTooLarge, conceal
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


class RequestTimeout(PalaestraError, status=408, title="Request timeout"): ...


class BodyLimit:
    """Refuse bodies over the limit before they are read whole, and bodies that have not
    arrived ``timeout_s`` after the headers (a client trickling a body would hold a request
    open for ever); count answers by status.

    The deadline is one timer per request that declares a body, cancelled once the body is
    in; when it fires it cancels the request's task (reading the body, as every route does
    first) and the answer is a 408. A timer per ``receive`` cost a step 30 us more."""

    def __init__(self, app: Any, limit: int, metrics: Metrics, timeout_s: float = 60.0) -> None:
        self.app = app
        self.limit = limit
        self.metrics = metrics
        self.timeout_s = timeout_s

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        has_body = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                if value.isdigit() and int(value) > self.limit:
                    await self._too_large(send)
                    return
                has_body = value != b"0"
            elif name == b"transfer-encoding":
                has_body = True
        received = 0
        started = expired = False
        task = asyncio.current_task() if has_body else None
        timer: asyncio.TimerHandle | None = None

        def expire() -> None:
            nonlocal expired
            expired = True
            if task is not None:
                task.cancel()

        if has_body:
            timer = asyncio.get_running_loop().call_later(self.timeout_s, expire)

        async def limited_receive() -> dict[str, Any]:
            nonlocal received, timer
            message: dict[str, Any] = await receive()
            if timer is not None and not message.get("more_body", False):
                timer.cancel()  # the body is in (or the client left)
                timer = None
            received += len(message.get("body", b""))
            if received > self.limit:
                raise _TooLarge
            return message

        async def counting_send(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                self.metrics.requests.labels(status=f"{message['status'] // 100}xx").inc()
            await send(message)

        try:
            await self.app(scope, limited_receive, counting_send)
        except _TooLarge:
            await self._too_large(send)
        except asyncio.CancelledError:
            if not expired or task is None:
                raise
            task.uncancel()
            if not started:
                limit = self.timeout_s
                why = f"the request body did not arrive within {limit:g} s (body_timeout_s)"
                await _refuse(send, RequestTimeout(why, limit_s=limit))
        finally:
            if timer is not None:
                timer.cancel()

    async def _too_large(self, send: Any) -> None:
        exc = PayloadTooLarge(f"request body exceeds {self.limit} bytes", limit_bytes=self.limit)
        await _refuse(send, exc)


async def _refuse(send: Any, exc: PalaestraError) -> None:
    """Answer a problem from outside the app, and close the connection (its body is unread)."""
    await send(
        {
            "type": "http.response.start",
            "status": exc.status,
            "headers": [(b"content-type", PROBLEM.encode()), (b"connection", b"close")],
        }
    )
    await send({"type": "http.response.body", "body": orjson.dumps(exc.to_problem())})


class _TooLarge(Exception):
    pass


# ----- headers every answer carries -----------------------------------------------------------
#: the dashboard's pages: scripts, styles, images and event streams from this origin only, never
#: framed (clickjacking), forms posted only here. Inline <script>/<style> stay allowed: the
#: templates carry them (their output is autoescaped)
CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
#: Swagger UI and ReDoc (when the operator serves them) load their code from jsDelivr
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; img-src 'self' data: https:; "
    "worker-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]


class SecurityHeaders:
    """``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY``, a referrer policy and a
    Content-Security-Policy on every HTTP answer (API answers included: a JSON body a browser
    sniffed as HTML would run in the gateway's origin). No route sets these itself, so they
    are appended as they are."""

    def __init__(self, app: Any, docs: tuple[str, ...] = ()) -> None:
        self.app = app
        self.docs = docs
        self.headers = [*_HEADERS, (b"content-security-policy", CSP.encode())]
        self.docs_headers = [*_HEADERS, (b"content-security-policy", DOCS_CSP.encode())]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = self.docs_headers if scope["path"] in self.docs else self.headers

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)


def field_errors(exc: RequestValidationError) -> InvalidRequest:
    errors = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        errors.append({"field": loc or "body", "message": err.get("msg", "")})
    summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
    first = errors[0]["field"] if errors else "body"
    return InvalidRequest(f"invalid request: {summary}", field=first, errors=errors)


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The body's JSON Schema for /docs (bodies are parsed by :func:`read_body`)."""
    json_schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    return {"requestBody": {"content": {"application/json": {"schema": json_schema}}}}


# ----- JSON in: bounded before it is parsed ---------------------------------------------------
#: a JSON string with its escapes (brackets inside one do not nest)
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENS = bytes.maketrans(b"{}", b"[]")


def too_deep(raw: bytes | str, limit: int) -> bool:
    """Whether JSON text nests deeper than ``limit`` arrays and objects, found without parsing
    it: orjson parses 1024 levels but writes only 254, so a deep action parsed fine and then
    failed (500) on its way to the worker. The scan is in C (a regex drops the strings, numpy
    sums the brackets); a body with fewer brackets than the limit is not scanned at all.
    Unbalanced brackets are left to the parser, which names the syntax error."""
    data = raw.encode() if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", data).translate(_OPENS, _NOT_BRACKETS)
    # "[" is 91 and "]" is 93: each bracket steps the depth by 92 - byte
    depth = np.cumsum(np.int8(92) - np.frombuffer(brackets, np.int8), dtype=np.int32)
    return bool(depth.size and depth[-1] == 0 and depth.max() > limit)


def check_json(conn: Any, raw: bytes | str, what: str = "body") -> None:
    """Bound JSON text from a client (a body, a WebSocket message, a header) before it is
    parsed, with the limits of the gateway serving ``conn``: a 413 or a 422 naming the limit,
    never a 500 later."""
    settings = conn.app.state.gateway.settings
    if len(raw) > settings.max_body_bytes:
        limit = settings.max_body_bytes
        raise PayloadTooLarge(f"{what} exceeds {limit} bytes", limit_bytes=limit, field=what)
    if too_deep(raw, settings.max_json_depth):
        depth = settings.max_json_depth
        raise InvalidRequest(
            f"{what} nests arrays and objects deeper than {depth} levels (max_json_depth)",
            field=what,
            limit=depth,
        )


async def read_body(request: Request, model: type[BaseModel]) -> Any:
    """Parse a JSON body into ``model`` whatever its content-type (``curl -d`` sends a form
    type), so every client that sends JSON is understood; an empty body means defaults."""
    raw = await request.body()
    check_json(request, raw)
    try:
        data = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"body is not valid JSON: {exc}", field="body") from None
    return validate(model, data)


def validate(model: type[BaseModel], data: Any) -> Any:
    """One validation for REST bodies and WebSocket messages: a 422 naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise field_errors(RequestValidationError(exc.errors())) from None
