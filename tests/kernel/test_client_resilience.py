"""The clients' retries, WebSocket reconnection and sync/async parity, against real servers on
127.0.0.1: a scripted HTTP server (stdlib) for answers the gateway gives only under load, a TCP
proxy in front of the real gateway to break connections the way a network does."""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Generator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np
import pytest

from palaestra.client import AsyncClient, Client, RemoteEnv, Retries, _retry_after
from palaestra.errors import (
    CapacityExceeded,
    JobNotFound,
    PalaestraError,
    SessionNotFound,
    TransportError,
)
from palaestra.server.runner import free_port
from tests.conftest import BENCH_ENV, FAULTY_ENV

DROP = "drop"  # close the connection without answering
FAST = Retries(backoff=0.01)
STEP = {"observation": {"count": 1}, "reward": 0.0, "terminated": False, "truncated": False}


def _answer(status: int, body: Any = None, **headers: str) -> tuple[int, Any, dict[str, str]]:
    return status, body if body is not None else {}, headers


def _busy(status: int, **headers: str) -> tuple[int, Any, dict[str, str]]:
    problem = CapacityExceeded("busy", retry_after_s=1).to_problem() if status == 429 else {}
    return _answer(status, problem or {"detail": "starting"}, **headers)


class Scripted:
    """A real HTTP/1.1 server that answers each ``(method, path)`` from a script (answers used
    in turn, the last one repeating) and records every request it read."""

    def __init__(self, port: int = 0) -> None:
        self.script: dict[tuple[str, str], list[Any]] = {}
        self.hits: list[tuple[str, str]] = []
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def serve(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                key = (self.command, self.path)
                scripted.hits.append(key)
                answers = scripted.script.get(key) or [_answer(404, {"detail": "unscripted"})]
                answer = answers.pop(0) if len(answers) > 1 else answers[0]
                if answer == DROP:
                    self.close_connection = True
                    return
                status, body, headers = answer
                data = json.dumps(body).encode()
                self.send_response(status)
                kind = "application/problem+json" if status >= 400 else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name.replace("_", "-"), value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, method: str, path: str, *answers: Any) -> None:
        self.script[(method, path)] = list(answers)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    server = Scripted()
    yield server
    server.close()


def call(kind: str, url: str, name: str, *args: Any, retries: Retries = FAST, **kw: Any) -> Any:
    """One client method, on the sync or the async client."""
    if kind == "sync":
        with Client(url, retries=retries) as client:
            return getattr(client, name)(*args, **kw)

    async def go() -> Any:
        async with AsyncClient(url, retries=retries) as client:
            return await getattr(client, name)(*args, **kw)

    return asyncio.run(go())


KINDS = pytest.mark.parametrize("kind", ["sync", "async"])


@KINDS
def test_a_429_is_retried_after_what_retry_after_says(scripted, kind):
    # a 429 means the gateway refused before acting, so even a step goes again
    scripted.answer("POST", "/v1/sessions/s1/step", _busy(429, retry_after="1"), _answer(200, STEP))
    started = time.monotonic()
    reply = call(kind, scripted.url, "step", "s1", "add(1)")
    assert reply["observation"] == {"count": 1}
    assert time.monotonic() - started >= 0.95  # the header's second, not the 10 ms backoff
    assert scripted.hits == [("POST", "/v1/sessions/s1/step")] * 2


@KINDS
def test_a_503_is_retried_with_backoff(scripted, kind):
    scripted.answer("GET", "/v1/envs", _busy(503), _busy(503), _answer(200, {"envs": []}))
    assert call(kind, scripted.url, "envs") == []
    assert len(scripted.hits) == 3


@KINDS
def test_a_long_retry_after_or_the_last_attempt_raises_the_error(scripted, kind):
    scripted.answer("POST", "/v1/sessions", _busy(429, retry_after="30"))
    started = time.monotonic()
    with pytest.raises(CapacityExceeded) as err:
        call(kind, scripted.url, "create_session", BENCH_ENV)
    # 30 s asked, none waited: a bound far from both, so load decides neither way
    assert time.monotonic() - started < 15 and err.value.fields["retry_after_s"] == 1
    assert len(scripted.hits) == 1  # 30 s is over max_retry_after: said at once, not waited
    scripted.answer("GET", "/v1/health", _busy(503))
    with pytest.raises(PalaestraError) as err:
        call(kind, scripted.url, "health", retries=Retries(attempts=2, backoff=0.01))
    assert err.value.fields["http_status"] == 503 and len(scripted.hits) == 3


@KINDS
def test_connection_errors_are_retried_only_where_a_second_request_is_harmless(scripted, kind):
    scripted.answer("GET", "/v1/health", DROP, _answer(200, {"status": "ok"}))
    assert call(kind, scripted.url, "health") == {"status": "ok"}
    scripted.answer("DELETE", "/v1/sessions/s1", DROP, _answer(204))
    assert call(kind, scripted.url, "close_session", "s1") is None
    assert len(scripted.hits) == 4
    # the step and the session were sent when the connection broke: maybe done, not resent
    scripted.hits.clear()
    scripted.answer("POST", "/v1/sessions/s1/step", DROP, _answer(200, STEP))
    with pytest.raises(TransportError):
        call(kind, scripted.url, "step", "s1", "add(1)")
    scripted.answer("POST", "/v1/sessions", DROP, _answer(201, {"session_id": "s2"}))
    with pytest.raises(TransportError):
        call(kind, scripted.url, "create_session", BENCH_ENV)
    assert scripted.hits == [("POST", "/v1/sessions/s1/step"), ("POST", "/v1/sessions")]


@KINDS
def test_session_creation_waits_for_a_gateway_that_is_starting(kind):
    """A refused connection never sent anything: creating a session tries again, a step not."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    with pytest.raises(TransportError, match="cannot reach the gateway"):
        call(kind, url, "step", "s1", "add(1)", retries=Retries(backoff=30.0))
    assert time.monotonic() - started < 15  # no retry, so none of the 30 s backoff
    late: list[Scripted] = []

    def start() -> None:
        time.sleep(0.3)
        late.append(Scripted(port))
        late[0].answer("POST", "/v1/sessions", _answer(201, {"session_id": "s1"}))

    threading.Thread(target=start, daemon=True).start()
    try:
        made = call(kind, url, "create_session", BENCH_ENV, retries=Retries(backoff=0.2))
        assert made == {"session_id": "s1"} and late[0].hits == [("POST", "/v1/sessions")]
    finally:
        for server in late:
            server.close()


def test_retry_after_as_an_http_date():
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 3))
    after = _retry_after(httpx.Response(429, headers={"Retry-After": when}))
    assert after is not None and 1.5 < after <= 3
    assert _retry_after(httpx.Response(429, headers={"Retry-After": "soon"})) is None


# ----- WebSocket drops, through a proxy in front of the real gateway ---------------------------


class Proxy:
    """A TCP forwarder on 127.0.0.1 that breaks connections as a network would: ``cut()`` closes
    every open one; ``lose_next()`` closes the next one that sends, without forwarding it."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.target = (parts.hostname, parts.port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.open: list[tuple[socket.socket, socket.socket]] = []
        self.accepted = 0
        self.losing = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:
                return
            far = socket.create_connection(self.target)
            self.open.append((near, far))
            self.accepted += 1
            threading.Thread(target=self._pump, args=(near, far, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(far, near, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, outbound: bool) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if outbound and self.losing.is_set():
                    self.losing.clear()
                    break
                dst.sendall(data)
        self._close(src, dst)

    @staticmethod
    def _close(*socks: socket.socket) -> None:
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def cut(self) -> None:
        for pair in self.open:
            self._close(*pair)
        self.open.clear()

    def lose_next(self) -> None:
        self.losing.set()

    def close(self) -> None:
        self._close(self.listener)  # shutdown first: a bare close leaves accept() listening
        self.cut()


@pytest.fixture
def proxy(gateway) -> Iterator[Proxy]:
    p = Proxy(gateway)
    yield p
    p.close()


def _sees_the_drop(env: RemoteEnv) -> None:
    """Wait until the client's end of the WebSocket has the proxy's FIN (loopback is fast, but
    the test should not bet on it)."""
    assert env._ws is not None
    assert select.select([env._ws._ws.sock], [], [], 5)[0]


def test_a_dropped_websocket_is_reopened_on_the_same_session(proxy):
    env = RemoteEnv(BENCH_ENV, base_url=proxy.url, transport="ws")
    env.reset(seed=0)
    assert env.step("add(2)")[0]["count"] == 2
    opened = proxy.accepted
    proxy.cut()
    _sees_the_drop(env)
    obs, *_ = env.step("add(3)")
    assert obs["count"] == 5  # the same session went on: the episode was not lost
    assert proxy.accepted == opened + 1
    assert env.step("add(1)")[0]["count"] == 6
    env.close()


def test_a_lost_reset_is_sent_again_a_lost_step_is_not(proxy):
    env = RemoteEnv(BENCH_ENV, base_url=proxy.url, transport="ws")
    proxy.lose_next()
    obs, _ = env.reset(seed=0)  # lost on the way, sent again on a new connection
    assert obs["count"] == 0
    env.step("add(2)")
    proxy.lose_next()
    with pytest.raises(TransportError, match="may have applied it, so it is not sent again"):
        env.step("add(3)")
    obs, _ = env.reset(seed=0)  # the next call reconnects
    assert obs["count"] == 0 and env.step("add(1)")[0]["count"] == 1
    env.close()


def test_a_websocket_that_cannot_be_reopened_fails_clearly(proxy):
    env = RemoteEnv(BENCH_ENV, base_url=proxy.url, transport="ws")
    env.reset(seed=0)
    proxy.close()  # the gateway is out of reach for good
    _sees_the_drop(env)
    with pytest.raises(TransportError, match=r"dropped .* could not be re-opened: cannot open"):
        env.step("add(1)")
    env.close()  # still closes cleanly (the DELETE fails and is ignored)


# ----- one implementation: the async client does what the sync one does ------------------------


def test_the_async_client_has_every_method_of_the_sync_client():
    public = {n for n in dir(Client) if not n.startswith("_")}
    assert public <= set(dir(AsyncClient))
    client = AsyncClient("http://127.0.0.1:9")
    pending = client.health()
    assert asyncio.iscoroutine(pending)
    pending.close()
    asyncio.run(client.aclose())


Scenario = Generator[tuple[str, tuple[Any, ...], dict[str, Any]], Any, dict[str, Any]]


def scenario() -> Scenario:
    """Every route once; yields ``(method, args, kwargs)``, gets each answer back, returns what
    must be the same whichever client ran it."""
    out: dict[str, Any] = {}
    out["health"] = (yield "health", (), {})["status"]
    out["envs"] = sorted(e["id"] for e in (yield "envs", (), {}))
    out["suites"] = sorted(s["name"] for s in (yield "suites", (), {}))
    out["tasks"] = sorted(t["id"] for t in (yield "tasks", ("palaestra-bench",), {}))
    made = yield "create_session", (), {"task": "palaestra-bench/count-to-3"}
    sid = made["session_id"]
    out["reset"] = (yield "reset", (sid,), {"seed": 0})["observation"]
    out["step"] = yield "step", (sid, "add(3)"), {}
    out["done"] = yield "step", (sid, "done()"), {}
    runs = yield "runs", (), {}
    run_id = next(r["run_id"] for r in runs if sid in r["sessions"])
    events = (yield "recording", (run_id, sid), {})["events"]
    out["recording"] = [e["type"] for e in events]
    out["closed"] = yield "close_session", (sid,), {}
    faulty = (yield "create_session", (FAULTY_ENV,), {})["session_id"]
    yield "request", ("POST", f"/v1/sessions/{faulty}/reset", {}), {}
    out["screenshot"] = (yield "screenshot", (faulty,), {}).tolist()
    yield "close_session", (faulty,), {}
    pool = yield "create_pool", (2, BENCH_ENV), {"min_size": 1, "max_size": 3}
    pid = pool["pool_id"]
    out["pool_reset"] = (yield "reset_pool", (pid,), {"seed": 0})["observations"]
    out["pool_step"] = (yield "step_pool", (pid, ["add(1)", "add(2)"]), {})["observations"]
    yield "send_pool", (pid, ["add(4)"], [1]), {}
    got = yield "recv_pool", (pid, 1), {}
    out["pool_recv"] = (got["env_ids"], got["observations"])
    out["resized"] = len((yield "resize_pool", (pid, 3), {})["session_ids"])
    out["pool_closed"] = yield "close_pool", (pid,), {}
    out["jobs"] = isinstance((yield "synth_jobs", (), {}), list)
    try:
        yield "synth_job", ("no-such-job",), {}
    except JobNotFound:
        out["job"] = "JobNotFound"
    try:
        yield "step", ("no-such-session", "add(1)"), {}
    except SessionNotFound:
        out["session"] = "SessionNotFound"
    return out


async def _play(client: Client | AsyncClient) -> dict[str, Any]:
    """Run the scenario on a client, answering each yield; errors go back into it."""
    flow = scenario()
    answer: Any = None
    error: Exception | None = None
    while True:
        try:
            method, args, kwargs = flow.throw(error) if error is not None else flow.send(answer)
        except StopIteration as done:
            return done.value
        answer, error = None, None
        try:
            answer = getattr(client, method)(*args, **kwargs)
            if isinstance(client, AsyncClient):
                answer = await answer
        except PalaestraError as exc:
            error = exc


def test_the_async_client_makes_the_same_calls_as_the_sync_one(gateway):
    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        with Client(gateway) as sync:
            synced = await _play(sync)
        async with AsyncClient(gateway) as client:
            return synced, await _play(client)

    synced, awaited = asyncio.run(both())
    assert awaited == synced
    assert synced["step"]["observation"]["count"] == 3 and synced["done"]["terminated"]
    assert synced["recording"] == ["reset", "step", "step"] and synced["closed"] is None
    assert np.asarray(synced["screenshot"]).shape == (8, 8, 3)
    assert synced["job"] == "JobNotFound" and synced["session"] == "SessionNotFound"
