"""The gateway: FastAPI routes of HTTP API v1 (DESIGN.md section 4).

Routes stay thin: they authenticate, validate the body (pydantic, ``extra="forbid"``) and hand
over to the session and pool managers. Every error leaves as ``application/problem+json``.
Responses are serialised with orjson straight into a Response, skipping FastAPI's generic
encoder, because a localhost step must cost well under a few milliseconds.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
from fastapi import Depends, FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

import palaestra
from palaestra import recording, registry, tasks
from palaestra.errors import (
    InvalidRequest,
    NotFound,
    PalaestraError,
    PayloadTooLarge,
    Unauthorized,
)
from palaestra.server import models
from palaestra.server.metrics import Metrics
from palaestra.server.pools import PoolManager
from palaestra.server.sessions import SessionManager, owner_of
from palaestra.server.settings import Settings
from palaestra.server.synth import SynthJobManager
from palaestra.workers.base import Backend

PROBLEM = "application/problem+json"


class JSON(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)


def problem(exc: PalaestraError) -> Response:
    headers = {}
    if exc.status == 429:
        headers["Retry-After"] = str(int(exc.fields.get("retry_after_s", 5)))
    return Response(
        orjson.dumps(exc.to_problem(), default=str), exc.status, headers, media_type=PROBLEM
    )


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
        body = orjson.dumps(exc.to_problem())
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", PROBLEM.encode()), (b"connection", b"close")],
            }
        )
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


def _field_errors(exc: RequestValidationError) -> InvalidRequest:
    errors = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        errors.append({"field": loc or "body", "message": err.get("msg", "")})
    summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
    first = errors[0]["field"] if errors else "body"
    return InvalidRequest(f"invalid request: {summary}", field=first, errors=errors)


def make_backend(settings: Settings) -> Backend:
    """The worker backend the settings name (Docker and Ray are imported only when asked for)."""
    if settings.backend == "docker":
        from palaestra.workers.docker import DockerBackend

        return DockerBackend(
            settings.docker_image,
            settings.gateway_name,
            settings.docker_worker_cpus,
            settings.docker_worker_memory_mb,
            settings.docker_worker_pids,
            settings.docker_host,
        )
    if settings.backend == "ray":
        from palaestra.workers.ray import RayBackend

        return RayBackend(
            settings.ray_address,
            settings.ray_placement,
            settings.ray_worker_cpus,
            settings.ray_worker_memory_mb,
            settings.ray_worker_resources,
            settings.ray_node_ip,
        )
    from palaestra.workers.local import LocalBackend

    return LocalBackend()


def create_app(settings: Settings | None = None, backend: Backend | None = None) -> FastAPI:
    settings = settings or Settings.from_env()
    if backend is None:
        backend = make_backend(settings)
        backend.heartbeat_s = settings.heartbeat_s
    metrics = Metrics()
    manager = SessionManager(settings, backend, metrics)
    pools = PoolManager(manager)
    synth_jobs = SynthJobManager(settings)
    keys = {k: owner_of(k) for k in settings.api_keys}
    started = time.time()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        registry.load_plugins()
        # before the workers start, which inherit the variable: they must find new suites too
        Path(settings.suites_dir).mkdir(parents=True, exist_ok=True)
        tasks.add_suite_path(settings.suites_dir)
        await backend.start(settings.workers)
        reaper = asyncio.create_task(manager.run_reaper())
        try:
            yield
        finally:
            reaper.cancel()
            await synth_jobs.close_all()
            await manager.close_all()
            await backend.stop()

    app = FastAPI(
        title="palaestra gateway",
        version=palaestra.__version__,
        lifespan=lifespan,
        default_response_class=JSON,
    )
    app.state.settings = settings
    app.state.manager = manager
    app.state.backend = backend
    app.state.synth_jobs = synth_jobs
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes, metrics=metrics)

    @app.exception_handler(PalaestraError)
    async def _palaestra_error(request: Request, exc: PalaestraError) -> Response:
        return problem(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> Response:
        return problem(_field_errors(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        err = PalaestraError(str(exc.detail), path=request.url.path)
        body = {**err.to_problem(), "status": exc.status_code, "title": str(exc.detail)}
        body["type"] = "about:blank"
        return Response(orjson.dumps(body), exc.status_code, media_type=PROBLEM)

    def authenticate(key: str | None) -> str:
        if not keys:
            return owner_of(None)
        if key is None or key not in keys:
            raise Unauthorized(
                "missing or unknown API key: send 'Authorization: Bearer <key>' or 'X-API-Key'"
            )
        return keys[key]

    def _key_from(headers: Any) -> str | None:
        auth = headers.get("authorization")
        if auth and auth.lower().startswith("bearer "):
            return str(auth[7:].strip())
        return headers.get("x-api-key")

    async def owner(request: Request) -> str:
        return authenticate(_key_from(request.headers))

    Owner = Depends(owner)

    # ----- discovery -----------------------------------------------------------------------
    @app.get("/v1/health")
    async def health() -> Response:
        metrics.workers_alive.labels(backend=backend.name).set(
            sum(w.alive for w in backend.workers)
        )
        return JSON(
            {
                "status": "ok",
                "version": palaestra.__version__,
                "backend": backend.name,
                "uptime_s": round(time.time() - started, 1),
                "sessions": len(manager.sessions),
                "workers": [w.describe() for w in backend.workers],
            }
        )

    @app.get("/v1/envs")
    async def list_envs(who: str = Owner) -> Response:
        return JSON({"envs": [_env_entry(s) for s in registry.specs().values()]})

    @app.get("/v1/envs/{env_id:path}")
    async def get_env(env_id: str, who: str = Owner) -> Response:
        spec = registry.spec(env_id)
        entry = _env_entry(spec, detail=True)
        if "unavailable" not in entry:
            entry["spaces"] = (await manager.describe(spec))["spaces"]
        return JSON(entry)

    @app.get("/v1/suites")
    async def list_suites(who: str = Owner) -> Response:
        out = []
        for name in tasks.suite_names():
            suite = tasks.get_suite(name)
            out.append({"name": name, "description": suite.description, "tasks": len(suite.tasks)})
        return JSON({"suites": out})

    @app.get("/v1/suites/{suite}/tasks")
    async def list_tasks(suite: str, who: str = Owner) -> Response:
        return JSON({"tasks": [t.agent_view() for t in tasks.get_suite(suite).tasks]})

    # ----- sessions ------------------------------------------------------------------------
    @app.post("/v1/sessions", status_code=201, openapi_extra=_schema(models.CreateSession))
    async def create_session(request: Request, who: str = Owner) -> Response:
        body = await _body(request, models.CreateSession)
        (session,) = await manager.create(who, body)
        return JSON(session.public(), status_code=201)

    @app.get("/v1/sessions")
    async def list_sessions(who: str = Owner) -> Response:
        return JSON({"sessions": [s.public() for s in manager.owned(who)]})

    @app.get("/v1/sessions/{sid}")
    async def get_session(sid: str, who: str = Owner) -> Response:
        return JSON(manager.get(who, sid).public())

    @app.post("/v1/sessions/{sid}/reset", openapi_extra=_schema(models.Reset))
    async def reset(sid: str, request: Request, who: str = Owner) -> Response:
        body = await _body(request, models.Reset)
        session = manager.get(who, sid)
        return JSON(await manager.reset(session, body.seed, body.options))

    @app.post("/v1/sessions/{sid}/step", openapi_extra=_schema(models.Step))
    async def step(sid: str, request: Request, who: str = Owner) -> Response:
        body = await _body(request, models.Step)
        session = manager.get(who, sid)
        return JSON(await manager.step(session, body.action))

    @app.get("/v1/sessions/{sid}/screenshot")
    async def screenshot(sid: str, who: str = Owner) -> Response:
        png = await manager.render(manager.get(who, sid))
        return Response(base64.b64decode(png), media_type="image/png")

    @app.delete("/v1/sessions/{sid}", status_code=204)
    async def delete_session(sid: str, who: str = Owner) -> Response:
        await manager.close(manager.get(who, sid))
        return Response(status_code=204)

    @app.websocket("/v1/sessions/{sid}/ws")
    async def session_ws(websocket: WebSocket, sid: str) -> None:
        try:
            who = authenticate(
                _key_from(websocket.headers) or websocket.query_params.get("api_key")
            )
            session = manager.get(who, sid)
        except PalaestraError as exc:
            await websocket.close(code=4000 + exc.status, reason=exc.detail[:120])
            return
        await websocket.accept()
        await _serve_ws(websocket, manager, session)

    # ----- pools ---------------------------------------------------------------------------
    @app.post("/v1/pools", status_code=201, openapi_extra=_schema(models.CreatePool))
    async def create_pool(request: Request, who: str = Owner) -> Response:
        body = await _body(request, models.CreatePool)
        pool = await pools.create(who, body)
        return JSON(pool.public(), status_code=201)

    @app.get("/v1/pools/{pool_id}")
    async def get_pool(pool_id: str, who: str = Owner) -> Response:
        return JSON(pools.get(who, pool_id).public())

    @app.post("/v1/pools/{pool_id}/reset", openapi_extra=_schema(models.PoolReset))
    async def reset_pool(pool_id: str, request: Request, who: str = Owner) -> Response:
        body = await _body(request, models.PoolReset)
        return JSON(await pools.reset(pools.get(who, pool_id), body.seed, body.options))

    @app.post("/v1/pools/{pool_id}/step", openapi_extra=_schema(models.PoolStep))
    async def step_pool(pool_id: str, request: Request, who: str = Owner) -> Response:
        body = await _body(request, models.PoolStep)
        return JSON(await pools.step(pools.get(who, pool_id), body.actions))

    @app.post("/v1/pools/{pool_id}/resize", openapi_extra=_schema(models.PoolResize))
    async def resize_pool(pool_id: str, request: Request, who: str = Owner) -> Response:
        body = await _body(request, models.PoolResize)
        return JSON(await pools.resize(pools.get(who, pool_id), body.size))

    @app.post("/v1/pools/{pool_id}/send", openapi_extra=_schema(models.PoolSend))
    async def send_pool(pool_id: str, request: Request, who: str = Owner) -> Response:
        body = await _body(request, models.PoolSend)
        return JSON(pools.send(pools.get(who, pool_id), body.actions, body.env_ids))

    @app.post("/v1/pools/{pool_id}/recv", openapi_extra=_schema(models.PoolRecv))
    async def recv_pool(pool_id: str, request: Request, who: str = Owner) -> Response:
        body = await _body(request, models.PoolRecv)
        return JSON(await pools.recv(pools.get(who, pool_id), body.batch_size, body.timeout_s))

    @app.delete("/v1/pools/{pool_id}", status_code=204)
    async def delete_pool(pool_id: str, who: str = Owner) -> Response:
        await pools.close(pools.get(who, pool_id))
        return Response(status_code=204)

    # ----- synthesis jobs ------------------------------------------------------------------
    @app.post("/v1/synth/jobs", status_code=202, openapi_extra=_schema(models.CreateSynthJob))
    async def create_synth_job(request: Request, who: str = Owner) -> Response:
        body = await _body(request, models.CreateSynthJob)
        job = synth_jobs.submit(who, body)
        headers = {"Location": f"/v1/synth/jobs/{job.id}"}
        return JSON(job.public(), status_code=202, headers=headers)

    @app.get("/v1/synth/jobs")
    async def list_synth_jobs(who: str = Owner) -> Response:
        return JSON({"jobs": [j.public() for j in synth_jobs.owned(who)]})

    @app.get("/v1/synth/jobs/{job_id}")
    async def get_synth_job(job_id: str, who: str = Owner) -> Response:
        return JSON(synth_jobs.get(who, job_id).public())

    # ----- runs ----------------------------------------------------------------------------
    @app.get("/v1/runs")
    async def list_runs(who: str = Owner) -> Response:
        runs = []
        for run in recording.list_runs(settings.runs_dir):
            run["sessions"] = [
                s for s in run["sessions"] if _session_owner(settings, run["run_id"], s) == who
            ]
            if run["sessions"]:
                runs.append(run)
        return JSON({"runs": runs})

    @app.get("/v1/runs/{run_id}/sessions/{sid}")
    async def get_recording(run_id: str, sid: str, who: str = Owner) -> Response:
        if _session_owner(settings, run_id, sid) != who:
            raise NotFound(f"no recorded session {run_id}/{sid} for this API key")
        events = []
        for event in recording.read_events(settings.runs_dir / run_id / sid):
            if isinstance(event.get("verifier"), dict):
                v = event["verifier"]  # the checks reveal the answer; only the outcome leaves
                event["verifier"] = {k: v.get(k) for k in ("score", "success", "error")}
            events.append(event)
        return JSON({"run_id": run_id, "session_id": sid, "events": events})

    # ----- operations ----------------------------------------------------------------------
    @app.get("/metrics")
    async def prometheus() -> Response:
        metrics.workers_alive.labels(backend=backend.name).set(
            sum(w.alive for w in backend.workers)
        )
        return Response(metrics.render(), media_type="text/plain; version=0.0.4")

    templates = Environment(
        loader=PackageLoader("palaestra.server", "templates"), autoescape=select_autoescape()
    )

    @app.get("/", response_class=HTMLResponse)
    async def dashboard() -> HTMLResponse:
        html = templates.get_template("dashboard.html").render(
            version=palaestra.__version__,
            backend=backend.name,
            workers=[w.describe() for w in backend.workers],
            envs=list(registry.specs().values()),
            suites=tasks.suite_names(),
            sessions=len(manager.sessions),
            auth=bool(keys),
        )
        return HTMLResponse(html)

    return app


def _schema(model: type[models._Body]) -> dict[str, Any]:
    """The body's JSON Schema for /docs (bodies are parsed by :func:`_body`)."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    return {"requestBody": {"content": {"application/json": {"schema": schema}}}}


async def _body(request: Request, model: type[models._Body]) -> Any:
    """Parse a JSON body into ``model`` whatever its content-type (``curl -d`` sends a form
    type), so every client that sends JSON is understood; an empty body means defaults."""
    raw = await request.body()
    try:
        data = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"body is not valid JSON: {exc}", field="body") from None
    return _validate(model, data)


def _validate(model: type[models._Body], data: Any) -> Any:
    """One validation for REST bodies and WebSocket messages: a 422 naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _field_errors(RequestValidationError(exc.errors())) from None


def _env_entry(spec: registry.EnvSpec, detail: bool = False) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": spec.id,
        "family": spec.family,
        "description": spec.description,
        "fixture": spec.fixture,
    }
    try:
        action_set = getattr(spec.load(), "action_set", None)
    except Exception as exc:  # a family whose extra is not installed still lists
        entry["unavailable"] = f"{type(exc).__name__}: {exc}"
        return entry
    if action_set is not None:
        entry["actions"] = [p.signature() for p in action_set.primitives.values()]
        if detail:
            entry["action_description"] = action_set.describe()
            entry["action_schema"] = action_set.json_schema()
            entry["tools"] = action_set.tools()
    return entry


def _session_owner(settings: Settings, run_id: str, sid: str) -> str | None:
    if "/" in run_id or "/" in sid or run_id.startswith(".") or sid.startswith("."):
        return None
    meta = Path(settings.runs_dir) / run_id / sid / "session.json"
    try:
        return str(orjson.loads(meta.read_bytes()).get("owner"))
    except (OSError, orjson.JSONDecodeError):
        return None


async def _serve_ws(websocket: WebSocket, manager: SessionManager, session: Any) -> None:
    """One JSON message per call: {"op": "reset"|"step"|"close", ...}; errors as {"error": ...}."""
    while True:
        try:
            raw = await websocket.receive_text()
        except WebSocketDisconnect:
            return
        try:
            msg = orjson.loads(raw)
            if not isinstance(msg, dict):
                raise InvalidRequest("a message is a JSON object with an 'op'", field="op")
            op = msg.get("op")
            fields = {k: v for k, v in msg.items() if k != "op"}
            if op == "step":
                reply: Any = await manager.step(session, _validate(models.Step, fields).action)
            elif op == "reset":
                body = _validate(models.Reset, fields)
                reply = await manager.reset(session, body.seed, body.options)
            elif op == "close":
                await manager.close(session)
                await websocket.send_bytes(orjson.dumps({"closed": True}))
                await websocket.close()
                return
            else:
                raise InvalidRequest(f"unknown op {op!r}: use reset, step or close", field="op")
        except PalaestraError as exc:
            reply = {"error": exc.to_problem()}
        except orjson.JSONDecodeError as exc:
            reply = {"error": InvalidRequest(f"message is not JSON: {exc}").to_problem()}
        await websocket.send_text(orjson.dumps(reply).decode())
