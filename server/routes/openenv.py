"""OpenEnv's protocol under ``/openenv/<env-or-task>/``: every env and every suite task is an
OpenEnv server that RL trainers' own clients (``GenericEnvClient``, ``MCPToolClient``) reach.

One base URL per env (``/openenv/palaestra/web-v0/``) or task (``/openenv/miniwob/click-button/``):

- ``WS /ws``: ``reset`` / ``step`` / ``state`` / ``close`` / ``mcp`` messages, answered
  ``observation`` / ``state`` / ``mcp`` / ``error``. One connection owns one palaestra session,
  created when it connects and closed when it drops (``?session_id=`` attaches to a session
  made by ``openenv/session/create`` instead, which it then does not close).
- ``POST /reset``, ``POST /step``, ``GET /state``: the same over HTTP; a reset without
  ``session_id`` creates a session and answers its id in ``metadata.session_id``.
- ``GET /health``, ``/schema``, ``/metadata``; the Task API (``/list_environments``,
  ``/<suite>/splits``, ``/tasks``, ``/num_tasks``, ``/task``, ``/task_range``); ``POST /mcp``
  (JSON-RPC: ``initialize``, ``tools/list``, ``tools/call``, ``openenv/session/create|close``).

Sessions go through the one :class:`~palaestra.server.sessions.SessionManager`, so API keys,
limits, recording and the verifier are the v1 API's. A key travels as OpenEnv's clients send
headers (``headers={"Authorization": "Bearer <key>"}`` or ``X-API-Key``) or as ``?api_key=``.
Every route, ``/health`` included, authenticates before it looks the target up, so a 404 that
lists envs, suites or tasks only ever reaches a key holder.
Wire shapes live in :mod:`palaestra.server.openenv_protocol`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any

import orjson
from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import Response
from pydantic import Field
from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection

import palaestra
from palaestra import family, registry, tasks
from palaestra.actions import ActionSet
from palaestra.errors import (
    ActionError,
    InvalidRequest,
    NotFound,
    PalaestraError,
    ResetNeeded,
    conceal,
)
from palaestra.server import models, ws
from palaestra.server import openenv_protocol as oe
from palaestra.server.http import JSON, check_json, read_body, unexpected
from palaestra.server.sessions import Session, SessionManager
from palaestra.server.state import Gateway, State, key_from

router = APIRouter()
log = logging.getLogger("palaestra.server")
PREFIX = "/openenv"


# ----- targets: an env id or a suite task ------------------------------------------------------
@dataclass(frozen=True)
class Target:
    ref: str
    env: str
    task: str | None
    description: str

    def create(self, options: dict[str, Any], record: bool | None) -> models.CreateSession:
        if self.task is not None:
            return models.CreateSession(task=self.task, options=options, record=record)
        return models.CreateSession(env=self.env, options=options, record=record)


def _find(gw: Gateway, ref: str) -> Target:
    """The env or task a prefix names (in a thread: a task loads its suite); a 404 names the
    envs and the suites that exist, and the suite's tasks when only the task id is wrong."""
    specs = registry.specs()
    if ref in specs:
        return Target(ref, ref, None, specs[ref].description)
    suite, sep, task_id = ref.partition("/")
    known = tasks.suite_names()
    if sep and suite in known:
        found = gw.suites.load(suite)
        for task in found.tasks:
            if task.id == task_id:
                return Target(ref, task.env, ref, task.instruction)
        ids = [t.id for t in found.tasks]
        shown = ", ".join(ids[:40]) + (f", ... ({len(ids)} in all)" if len(ids) > 40 else "")
        raise NotFound(
            f"suite {suite!r} has no task {task_id!r} under {PREFIX}/; its tasks: {shown}",
            field="target",
        )
    raise NotFound(
        f"no env or task {ref!r} under {PREFIX}/; envs: {', '.join(specs)}; "
        f"tasks as <suite>/<task_id> of the suites: {', '.join(known)}",
        field="target",
    )


async def resolve(gw: Gateway, ref: str) -> Target:
    return await run_in_threadpool(_find, gw, ref.strip("/"))


def _owner(gw: Gateway, conn: HTTPConnection) -> str:
    """The key from a header (``Authorization: Bearer``, ``X-API-Key``) or ``?api_key=``."""
    return gw.authenticate(key_from(conn.headers) or conn.query_params.get("api_key"))


def _query_options(conn: HTTPConnection) -> tuple[dict[str, Any], bool | None]:
    """Session options (a JSON object) and recording (true|false) from the headers
    ``X-Palaestra-Options`` / ``X-Palaestra-Record`` (OpenEnv's clients send ``headers=``, and
    append ``/ws`` to the base URL, so a query string cannot ride on it) or from
    ``?options=`` / ``?record=``."""
    raw = conn.headers.get("x-palaestra-options") or conn.query_params.get("options")
    options: Any = {}
    if raw:
        check_json(conn, raw, "options")
        try:
            options = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InvalidRequest(f"options is not JSON: {exc}", field="options") from None
        if not isinstance(options, dict):
            raise InvalidRequest("options is a JSON object", field="options")
    record = conn.headers.get("x-palaestra-record") or conn.query_params.get("record")
    if record is not None and record.lower() not in ("true", "false", "1", "0"):
        raise InvalidRequest("record is true or false", field="record")
    return options, None if record is None else record.lower() in ("true", "1")


# ----- one OpenEnv episode on one palaestra session --------------------------------------------
@dataclass
class Episode:
    """What OpenEnv tracks beside a palaestra session: its episode id, steps and end."""

    session: Session
    action_set: ActionSet
    episode_id: str | None = None
    step_count: int = 0
    ready: bool = False
    done: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, session: Session) -> Episode:
        return cls(session, ActionSet.from_json(session.spaces["action"]["action_set"]))

    def state(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "step_count": self.step_count,
            "session_id": self.session.id,
            "env": self.session.env_id,
            "task": self.session.task,
            "done": self.done,
        }

    async def reset(self, manager: SessionManager, data: Any) -> dict[str, Any]:
        seed, options, episode_id = oe.reset_args(data)
        reply = await manager.reset(self.session, seed, options)
        self.episode_id = episode_id or secrets.token_hex(8)
        self.step_count, self.ready, self.done = 0, True, False
        return oe.from_reset(reply)

    async def step(self, manager: SessionManager, data: Any) -> dict[str, Any]:
        """One step message; an MCP ``list_tools`` is answered without stepping."""
        parsed = oe.parse_action(self.action_set, data)
        if parsed.list_tools:
            return {"observation": {"tools": oe.mcp_tools(self.action_set)}, "done": self.done}
        if not self.ready:
            why = "the episode is over" if self.done else "no episode has started"
            raise ResetNeeded(f"{why}: send a 'reset' message first", field="type")
        assert parsed.action is not None
        reply = await manager.step(self.session, parsed.action.to_json())
        self.step_count += 1
        payload = oe.from_step(reply)
        if payload["done"]:
            self.ready, self.done = False, True
        if parsed.tool is not None:  # OpenEnv's CallToolObservation; its result's data is
            # what MCPToolClient.call_tool returns, the same over /ws and POST /mcp
            result = {k: payload[k] for k in ("observation", "reward", "done", "metadata")}
            payload["observation"] = {
                "tool_name": parsed.tool,
                "result": {"data": result},
                "error": None,
                "metadata": payload["metadata"],
            }
        return payload


def _episodes(request: HTTPConnection) -> dict[str, Episode]:
    """Episodes of sessions driven over HTTP (``/reset``, ``/step``, ``/mcp``), by session id."""
    store: dict[str, Episode] | None = getattr(request.app.state, "openenv_episodes", None)
    if store is None:
        store = request.app.state.openenv_episodes = {}
    return store


def _prune(store: dict[str, Episode], manager: SessionManager) -> None:
    for sid in [s for s in store if s not in manager.sessions]:
        del store[sid]


async def _http_episode(
    request: HTTPConnection, gw: Gateway, who: str, sid: Any, where: str
) -> Episode:
    if not isinstance(sid, str) or not sid:
        raise InvalidRequest(
            f"{where} needs the 'session_id' a reset answered (metadata.session_id)",
            field="session_id",
        )
    session = gw.sessions.get(who, sid)
    store = _episodes(request)
    episode = store.get(sid)
    if episode is None or episode.session is not session:
        episode = store[sid] = Episode.of(session)
    return episode


async def _new_session(gw: Gateway, conn: HTTPConnection, who: str, target: Target) -> Session:
    options, record = _query_options(conn)
    (session,) = await gw.sessions.create(who, target.create(options, record))
    return session


async def _close(gw: Gateway, session: Session, reason: str) -> None:
    if gw.sessions.sessions.get(session.id) is session:
        with contextlib.suppress(PalaestraError):
            await gw.sessions.close(session, reason)


# ----- WebSocket ------------------------------------------------------------------------------
def _dumps(reply: dict[str, Any]) -> str:
    return orjson.dumps(reply, option=orjson.OPT_SERIALIZE_NUMPY).decode()


@router.websocket(PREFIX + "/{target:path}/ws")
async def openenv_ws(websocket: WebSocket, target: str, gw: State) -> None:
    """One OpenEnv connection, one palaestra session: made on connect, closed on disconnect.
    A refusal (key, unknown target, capacity) is the answer to the first message, an error
    frame, and then the socket closes.

    The session is opened in a task while the socket is read: a cold suite or env can take
    longer than the keepalive ping, and a socket whose reader waits with a message queued
    stops reading, so the pongs would go unread and the connection would be dropped.
    """
    await websocket.accept()
    opening = asyncio.ensure_future(_open(gw, websocket, target))
    try:
        await _serve(websocket, gw, opening)
    finally:
        with contextlib.suppress(Exception):  # a refusal was answered already
            episode, owns = await opening
            if owns:
                await _close(gw, episode.session, "its OpenEnv connection closed")


async def _open(gw: Gateway, websocket: WebSocket, target: str) -> tuple[Episode, bool]:
    """The connection's episode: a new session, or ``?session_id=`` (made by
    ``openenv/session/create``), which the connection then does not own."""
    who = _owner(gw, websocket)
    found = await resolve(gw, target)
    attach = websocket.query_params.get("session_id")
    if attach:
        store = _episodes(websocket)
        episode = store.get(attach)
        if episode is None or episode.session is not gw.sessions.get(who, attach):
            episode = store[attach] = Episode.of(gw.sessions.get(who, attach))
        return episode, False
    return Episode.of(await _new_session(gw, websocket, who, found)), True


async def _serve(websocket: WebSocket, gw: Gateway, opening: asyncio.Future[Any]) -> None:
    episode: Episode | None = None

    async def answer(raw: str) -> ws.Reply:
        nonlocal episode
        try:
            if episode is None:
                episode, _ = await asyncio.shield(opening)
        except Exception as exc:
            failed = exc if isinstance(exc, PalaestraError) else unexpected(exc, str(websocket.url))
            return ws.Reply(_dumps(oe.error_from(conceal(failed, log))), close=1008)
        reply = await _answer(gw, episode, raw, websocket)
        return ws.Reply(None, close=1000) if reply is None else ws.Reply(_dumps(reply))

    await ws.serve(websocket, answer)


async def _answer(
    gw: Gateway, episode: Episode, raw: str, websocket: WebSocket
) -> dict[str, Any] | None:
    where = websocket.url.path
    try:
        check_json(websocket, raw, "message")
        msg = orjson.loads(raw)
    except PalaestraError as exc:
        return oe.error_from(exc)
    except orjson.JSONDecodeError as exc:
        return oe.error(f"Invalid JSON: {exc}", oe.INVALID_JSON)
    try:
        if not isinstance(msg, dict):
            raise InvalidRequest("a message is a JSON object with a 'type'", field="type")
        kind = msg.get("type")
        extra = set(msg) - {"type", "data"}
        if extra:
            raise InvalidRequest(f"unexpected key(s) {sorted(extra)}", field=sorted(extra)[0])
        if kind == "step":
            if "data" not in msg:
                raise InvalidRequest("a step message carries the action in 'data'", field="data")
            return {"type": "observation", "data": await episode.step(gw.sessions, msg["data"])}
        if kind == "reset":
            data = msg.get("data") or {}
            return {"type": "observation", "data": await episode.reset(gw.sessions, data)}
        if kind == "state":
            return {"type": "state", "data": episode.state()}
        if kind == "close":
            return None
        if kind == "mcp":
            return {"type": "mcp", "data": await _rpc(gw, episode, msg.get("data"))}
        return oe.error(
            f"Unknown message type: {kind!r}; use reset, step, state, close or mcp",
            oe.UNKNOWN_TYPE,
            "type",
        )
    except PalaestraError as exc:
        return oe.error_from(conceal(exc, log))
    except Exception as exc:  # a gateway bug: logged, the socket stays open
        return oe.error_from(unexpected(exc, where))


# ----- HTTP: reset, step, state ---------------------------------------------------------------
class HttpReset(models._Body):
    seed: models.Seed | None = None
    episode_id: str | None = Field(default=None, max_length=255)
    options: dict[str, Any] | None = None
    task: str | None = Field(default=None, description="shorthand for options.task")
    session_id: str | None = Field(default=None, description="reset this session again")


class HttpStep(models._Body):
    action: dict[str, Any] = Field(description="an OpenEnv action (see /schema)")
    session_id: str = Field(description="the session a reset answered (metadata.session_id)")
    timeout_s: float | None = Field(default=None, gt=0)
    request_id: str | None = Field(default=None, max_length=255)


@router.post(PREFIX + "/{target:path}/reset")
async def http_reset(target: str, request: Request, gw: State) -> Response:
    who = _owner(gw, request)
    found = await resolve(gw, target)
    body: HttpReset = await read_body(request, HttpReset)
    if body.session_id:
        episode = await _http_episode(request, gw, who, body.session_id, "reset")
    else:
        session = await _new_session(gw, request, who, found)
        store = _episodes(request)
        _prune(store, gw.sessions)
        episode = store[session.id] = Episode.of(session)
    data = body.model_dump(exclude_unset=True, exclude={"session_id"})
    payload = await episode.reset(gw.sessions, data)
    payload["metadata"]["session_id"] = episode.session.id
    return JSON(payload)


@router.post(PREFIX + "/{target:path}/step")
async def http_step(target: str, request: Request, gw: State) -> Response:
    who = _owner(gw, request)
    await resolve(gw, target)
    body: HttpStep = await read_body(request, HttpStep)
    episode = await _http_episode(request, gw, who, body.session_id, "step")
    try:
        return JSON(await episode.step(gw.sessions, body.action))
    except ActionError as exc:  # the body's field: action...
        exc.fields["field"] = exc.fields.get("field", "action")
        raise


@router.get(PREFIX + "/{target:path}/state")
async def http_state(target: str, request: Request, gw: State) -> Response:
    who = _owner(gw, request)
    await resolve(gw, target)
    sid = request.query_params.get("session_id")
    return JSON((await _http_episode(request, gw, who, sid, "state")).state())


# ----- HTTP: health, schema, metadata ---------------------------------------------------------
@router.get(PREFIX + "/{target:path}/health")
async def health(target: str, request: Request, gw: State) -> Response:
    """Like every route here, it needs a key when keys are configured: an unknown target's
    404 lists the envs and suites, which are a key holder's to see (as ``/v1/envs`` is)."""
    _owner(gw, request)
    await resolve(gw, target)
    return JSON({"status": "healthy"})


async def _spaces(gw: Gateway, found: Target) -> dict[str, Any]:
    spec = await run_in_threadpool(registry.spec, found.env)
    described: dict[str, Any] = (await gw.sessions.describe(spec))["spaces"]
    return described


@router.get(PREFIX + "/{target:path}/schema")
async def schema(target: str, request: Request, gw: State) -> Response:
    _owner(gw, request)
    spaces = await _spaces(gw, await resolve(gw, target))
    action_set = ActionSet.from_json(spaces["action"]["action_set"])
    return JSON(
        {
            "action": oe.action_schema(action_set),
            "observation": oe.observation_schema(spaces["observation"]),
            "state": oe.STATE_SCHEMA,
        }
    )


@router.get(PREFIX + "/{target:path}/metadata")
async def metadata(target: str, request: Request, gw: State) -> Response:
    _owner(gw, request)
    found = await resolve(gw, target)
    return JSON(
        {
            "name": found.ref,
            "description": found.description or found.env,
            "readme_content": None,
            "version": palaestra.__version__,
            "author": "palaestra",
            "documentation_url": None,
        }
    )


# ----- the Task API over the suites -----------------------------------------------------------
SPLIT = "test"


class SplitBody(models._Body):
    split: str


class TaskBody(SplitBody):
    index: int


class RangeBody(SplitBody):
    start: int | None = None
    stop: int | None = None


def _environments(found: Target) -> list[str]:
    """The suites a target offers: a task's own suite, an env family's suites."""
    if found.task is not None:
        return [found.task.partition("/")[0]]
    fam_name = registry.spec(found.env).family
    fams = family.families()
    return [s.name for s in fams[fam_name].suites] if fam_name in fams else []


async def _suite_tasks(gw: Gateway, target: str, suite: str, split: str) -> list[dict[str, Any]]:
    found = await resolve(gw, target)
    offered = await run_in_threadpool(_environments, found)
    if suite not in offered:
        raise NotFound(
            f"unknown environment {suite!r} here; list_environments: {', '.join(offered)}",
            field="env_name",
        )
    if split != SPLIT:
        raise NotFound(f"unknown split {split!r}; splits: {SPLIT}", field="split")
    loaded = await run_in_threadpool(gw.suites.load, suite)
    rows = [t for t in loaded.tasks if found.task is None or f"{suite}/{t.id}" == found.task]
    return [
        {**t.agent_view(), "ref": f"{suite}/{t.id}", "openenv": f"{PREFIX}/{suite}/{t.id}/"}
        for t in rows
    ]


@router.get(PREFIX + "/{target:path}/list_environments")
async def list_environments(target: str, request: Request, gw: State) -> Response:
    _owner(gw, request)
    return JSON(await run_in_threadpool(_environments, await resolve(gw, target)))


@router.get(PREFIX + "/{target:path}/{suite}/splits")
async def list_splits(target: str, suite: str, request: Request, gw: State) -> Response:
    _owner(gw, request)
    await _suite_tasks(gw, target, suite, SPLIT)
    return JSON([{"name": SPLIT, "type": SPLIT}])


@router.post(PREFIX + "/{target:path}/{suite}/tasks")
async def list_tasks(target: str, suite: str, request: Request, gw: State) -> Response:
    _owner(gw, request)
    body: SplitBody = await read_body(request, SplitBody)
    return JSON({"tasks": await _suite_tasks(gw, target, suite, body.split), "env_name": suite})


@router.post(PREFIX + "/{target:path}/{suite}/num_tasks")
async def num_tasks(target: str, suite: str, request: Request, gw: State) -> Response:
    _owner(gw, request)
    body: SplitBody = await read_body(request, SplitBody)
    return JSON({"num_tasks": len(await _suite_tasks(gw, target, suite, body.split))})


@router.post(PREFIX + "/{target:path}/{suite}/task")
async def get_task(target: str, suite: str, request: Request, gw: State) -> Response:
    _owner(gw, request)
    body: TaskBody = await read_body(request, TaskBody)
    rows = await _suite_tasks(gw, target, suite, body.split)
    if not 0 <= body.index < len(rows):
        raise InvalidRequest(f"index must be in [0, {len(rows)})", field="index")
    return JSON({"task": rows[body.index]})


@router.post(PREFIX + "/{target:path}/{suite}/task_range")
async def get_task_range(target: str, suite: str, request: Request, gw: State) -> Response:
    _owner(gw, request)
    body: RangeBody = await read_body(request, RangeBody)
    rows = await _suite_tasks(gw, target, suite, body.split)
    return JSON({"tasks": rows[body.start : body.stop]})


# ----- MCP (JSON-RPC 2.0) ---------------------------------------------------------------------
PROTOCOL_VERSION = "2025-06-18"


class RpcError(Exception):
    def __init__(self, code: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.field = code, message, field


async def _rpc(
    gw: Gateway,
    episode: Episode | None,
    request: Any,
    conn: HTTPConnection | None = None,
    who: str | None = None,
    found: Target | None = None,
) -> dict[str, Any]:
    """One JSON-RPC request -> its response. Over the WebSocket ``episode`` is the
    connection's; over HTTP a ``session_id`` parameter names one (made by
    ``openenv/session/create``)."""
    rid = request.get("id") if isinstance(request, dict) else None
    try:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise RpcError(-32600, "a JSON-RPC request is an object with a 'method'", "method")
        method, params = request["method"], request.get("params") or {}
        if not isinstance(params, dict):
            raise RpcError(-32602, "params must be an object", "params")
        result = await _rpc_method(gw, episode, method, params, conn, who, found)
        return {"jsonrpc": "2.0", "id": rid, "result": result}
    except RpcError as exc:
        err: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.field:
            err["data"] = {"field": exc.field}
        return {"jsonrpc": "2.0", "id": rid, "error": err}
    except PalaestraError as exc:
        exc = conceal(exc, log)
        data = {"field": exc.fields.get("field"), "status": exc.status}
        code = -32602 if exc.status in (400, 422) else -32000
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "error": {"code": code, "message": exc.detail, "data": data},
        }


async def _rpc_method(
    gw: Gateway,
    episode: Episode | None,
    method: str,
    params: dict[str, Any],
    conn: HTTPConnection | None,
    who: str | None,
    found: Target | None,
) -> Any:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", PROTOCOL_VERSION),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "palaestra", "version": palaestra.__version__},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        if episode is None:
            assert found is not None
            spaces = await _spaces(gw, found)
            return {"tools": oe.mcp_tools(ActionSet.from_json(spaces["action"]["action_set"]))}
        return {"tools": oe.mcp_tools(episode.action_set)}
    if method == "openenv/session/create":
        if episode is not None:
            return {"session_id": episode.session.id}
        assert conn is not None and who is not None and found is not None
        session = await _new_session(gw, conn, who, found)
        store = _episodes(conn)
        _prune(store, gw.sessions)
        store[session.id] = Episode.of(session)
        return {"session_id": session.id}
    if method not in ("openenv/session/close", "tools/call"):
        raise RpcError(-32601, f"unknown method {method!r}", "method")
    if episode is None:
        assert conn is not None and who is not None
        episode = await _http_episode(conn, gw, who, params.get("session_id"), method)
    if method == "openenv/session/close":
        await _close(gw, episode.session, "closed by openenv/session/close")
        return {"closed": True}
    # tools/call
    name = params.get("name")
    if not isinstance(name, str):
        raise RpcError(-32602, "tools/call needs the tool 'name'", "name")
    if not episode.ready:  # an MCP agent never resets: the first call starts an episode
        await episode.reset(gw.sessions, {})
    action = {"type": "call_tool", "tool_name": name, "arguments": params.get("arguments")}
    payload = await episode.step(gw.sessions, action)
    structured = payload["observation"]["result"]["data"]
    text = orjson.dumps(structured, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "data": structured,
        "isError": False,
    }


@router.post(PREFIX + "/{target:path}/mcp")
async def mcp(target: str, request: Request, gw: State) -> Response:
    who = _owner(gw, request)
    found = await resolve(gw, target)
    raw = await request.body()
    check_json(request, raw)
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        err = {"code": -32700, "message": f"parse error: {exc}"}
        return JSON({"jsonrpc": "2.0", "id": None, "error": err})
    if isinstance(body, dict) and "id" not in body:  # a notification: no answer
        return Response(status_code=202)
    return JSON(await _rpc(gw, None, body, request, who, found))
