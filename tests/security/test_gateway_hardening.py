"""Gateway hardening (issue 28, item 4), tried as a hostile client on a gateway with two keys.

Each test is one finding and fails if its hole reopens: one key starving the others of job
slots, OpenEnv routes (health, 404s) answering strangers, the API's docs public on a keyed
gateway, server paths in eval answers, deep JSON as a 500, trickling connections held for
ever, and the dashboard's cookie, sign-out and headers; and the MiniWoB site server's listings.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from palaestra.errors import CapacityExceeded
from palaestra.server.app import create_app
from palaestra.server.jobs import Job, JobManager, JobStore
from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings
from tests.conftest import BENCH_ENV

ALICE = "alice-hardening-5e4d3c2b1a"
BOB = "bob-hardening-9f8e7d6c5b"
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {name: tmp_path_factory.mktemp(name) for name in ("runs", "evals", "jobs")}


@pytest.fixture(scope="module")
def keyed(dirs: dict[str, Path]) -> Iterator[str]:
    """A real gateway (one worker) with the keys of Alice and Bob; short connection deadlines."""
    settings = Settings(
        workers=1,
        runs_dir=dirs["runs"],
        evals_dir=dirs["evals"],
        jobs_db=dirs["jobs"] / "jobs.sqlite3",
        api_keys=[ALICE, BOB],
        record=False,
        header_timeout_s=1.0,
        body_timeout_s=1.0,
    )
    with gateway_thread(settings) as url:
        yield url


@pytest.fixture
def alice(keyed: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=keyed, headers={"X-API-Key": ALICE}, timeout=120) as c:
        yield c


@pytest.fixture
def anon(keyed: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=keyed, timeout=120) as c:
        yield c


# ----- 1. job slots are shared fairly between keys ----------------------------------------------
class Held(JobManager):
    """A job kind whose jobs run until the test lets them go (the real life cycle and store)."""

    kind = "held"
    noun = "held jobs"

    def __init__(self, store: JobStore, limit: int) -> None:
        super().__init__(store, limit)
        self.release: dict[str, asyncio.Event] = {}

    async def work(self, job: Job) -> dict[str, Any] | None:
        await self.release.setdefault(job.id, asyncio.Event()).wait()
        return {}

    async def finish(self, job: Job) -> None:
        self.release.setdefault(job.id, asyncio.Event()).set()
        await self.wait(job.id)
        await asyncio.sleep(0)  # the freed slot's next job starts


def _status(jobs: Held, job: Job) -> str:
    return jobs.get(job.owner, job.id).status


@pytest.mark.parametrize("limit", [1, 2])
def test_one_key_holding_every_slot_does_not_lock_another_key_out(
    tmp_path: Path, limit: int
) -> None:
    """Alice fills every slot; Bob's job is taken (it waits, not 429) and runs on the next
    slot to free, before Alice's next; Alice, at her share, is refused meanwhile."""

    async def scenario() -> None:
        jobs = Held(JobStore(tmp_path / "jobs.sqlite3"), limit)
        hers = [jobs.submit("alice", {}) for _ in range(limit)]
        await asyncio.sleep(0)
        assert [_status(jobs, j) for j in hers] == ["running"] * limit
        his = jobs.submit("bob", {})  # the finding: CapacityExceeded here
        assert _status(jobs, his) == "queued"
        with pytest.raises(CapacityExceeded) as refused:
            jobs.submit("alice", {})
        assert refused.value.fields["share"] == max(1, -(-limit // 2))
        with pytest.raises(CapacityExceeded):  # Bob holds his share too: one waiting
            jobs.submit("bob", {})
        await jobs.finish(hers[0])
        assert _status(jobs, his) == "running"
        # alone again, a key may use every slot
        await jobs.finish(his)
        more = [jobs.submit("alice", {}) for _ in range(limit - len(hers) + 1)]
        await asyncio.sleep(0)
        assert all(_status(jobs, j) == "running" for j in more)
        await jobs.close_all()
        jobs.store.close()

    asyncio.run(scenario())


def test_a_waiting_job_can_be_cancelled_and_a_shutdown_interrupts_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        jobs = Held(JobStore(tmp_path / "jobs.sqlite3"), 1)
        jobs.submit("alice", {})
        first = jobs.submit("bob", {})
        cancelled = await jobs.cancel("bob", first.id)
        assert cancelled.status == "cancelled" and not jobs.waiting
        second = jobs.submit("bob", {})
        await jobs.close_all()
        assert _status(jobs, second) == "interrupted"
        jobs.store.close()

    asyncio.run(scenario())


# ----- 2. OpenEnv and MCP routes need a key, health included; 404s list nothing to a stranger --
def test_openenv_routes_need_a_key_and_tell_a_stranger_nothing(
    anon: httpx.Client, alice: httpx.Client
) -> None:
    base = f"/openenv/{BENCH_ENV}"
    calls = [
        ("GET", f"{base}/health", None),
        ("GET", "/openenv/no-such-env/health", None),
        ("GET", "/openenv/miniwob/no-such-task/health", None),
        ("GET", f"{base}/schema", None),
        ("GET", f"{base}/metadata", None),
        ("GET", f"{base}/list_environments", None),
        ("POST", f"{base}/reset", {}),
        ("POST", f"{base}/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("POST", "/openenv/no-such-env/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    ]
    for method, path, body in calls:
        r = anon.request(method, path, json=body)
        assert r.status_code == 401, (path, r.text)
        assert "miniwob" not in r.text and "palaestra-bench" not in r.text, (path, r.text)
    # a key holder is answered as before, 404s naming what exists included
    assert alice.get(f"{base}/health").json() == {"status": "healthy"}
    gone = alice.get("/openenv/no-such-env/health")
    assert gone.status_code == 404 and "palaestra-bench" in gone.json()["detail"]


def test_an_openenv_websocket_without_a_key_is_refused_naming_nothing(keyed: str) -> None:
    import websocket

    ws = websocket.create_connection(keyed.replace("http", "ws") + "/openenv/nope/ws", timeout=60)
    try:
        ws.send(json.dumps({"type": "reset", "data": {}}))
        refusal = json.loads(ws.recv())
    finally:
        ws.close()
    assert refusal["type"] == "error" and refusal["data"]["status"] == 401
    assert "palaestra-bench" not in json.dumps(refusal)


# ----- 3. /docs and /openapi.json: off on a keyed gateway unless the operator says so ----------
@pytest.mark.parametrize(
    ("settings", "served"),
    [
        ({"api_keys": [ALICE]}, False),
        ({"api_keys": [ALICE], "public_docs": True}, True),
        ({}, True),  # a loopback gateway without keys keeps them
        ({"public_docs": False}, False),
    ],
)
def test_docs_are_served_only_as_the_settings_say(
    tmp_path: Path, settings: dict[str, Any], served: bool
) -> None:
    app = create_app(Settings(workers=1, runs_dir=tmp_path, **settings))  # not started
    client = TestClient(app, headers={"X-API-Key": ALICE})
    for path in ("/docs", "/redoc", "/openapi.json"):
        assert (client.get(path).status_code == 200) is served, path
    if served:
        csp = client.get("/docs").headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp


# ----- 4. no server paths in eval answers ------------------------------------------------------
def test_eval_answers_carry_no_server_path(alice: httpx.Client, dirs: dict[str, Path]) -> None:
    body = {"suite": "faulty", "agent": "oracle", "tasks": ["count-3"], "seeds": [0]}
    made = alice.post("/v1/evals", json=body)
    assert made.status_code == 202, made.text
    job_id = made.json()["job_id"]
    deadline = time.monotonic() + 240
    while (job := alice.get(f"/v1/evals/{job_id}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.1)
    assert job["status"] == "succeeded", job
    assert (dirs["evals"] / job_id / "summary.json").exists()  # the server still writes there
    answers = [
        alice.get(f"/v1/evals/{job_id}").text,
        alice.get(f"/v1/evals/{job_id}/results").text,
        alice.get("/v1/evals").text,
    ]
    for text in answers:
        assert str(dirs["evals"]) not in text and "/tmp/" not in text, text
        assert '"out"' not in text, text


def test_a_jobs_error_names_no_server_path(tmp_path: Path) -> None:
    """A job failing on a file of the server's says which, by the folder's name only."""

    class Failing(JobManager):
        kind = "failing"

        async def work(self, job: Job) -> dict[str, Any] | None:
            (tmp_path / "evals" / job.id / "results.jsonl").read_text()
            return None

    async def scenario() -> Job:
        settings = Settings(evals_dir=tmp_path / "evals", runs_dir=tmp_path / "runs")
        from palaestra.server.jobs import server_paths

        jobs = Failing(JobStore(tmp_path / "jobs.sqlite3"), 1, server_paths(settings))
        job = jobs.submit("alice", {})
        await jobs.wait(job.id)
        jobs.store.close()
        return job

    job = asyncio.run(scenario())
    assert job.status == "failed" and job.error is not None
    assert str(tmp_path) not in job.error and f"<evals_dir>/{job.id}" in job.error


# ----- 5. deep JSON: a 422 naming the limit before anything parses it --------------------------
def _deep(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _deep_text(depth: int, wrap: dict[str, Any]) -> str:
    """``wrap`` as JSON with ``"DEEP"`` replaced by ``depth`` nested arrays (json.dumps itself
    stops at Python's recursion limit)."""
    return json.dumps(wrap).replace('"DEEP"', "[" * depth + "0" + "]" * depth)


def _limit_problem(r: httpx.Response) -> None:
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    problem = r.json()
    assert problem["limit"] == 64 and "64" in problem["detail"], problem


@pytest.mark.parametrize("depth", [300, 1000])
def test_a_deeply_nested_action_is_a_422_on_step_and_pool_step(
    alice: httpx.Client, depth: int
) -> None:
    sid = alice.post("/v1/sessions", json={"env": BENCH_ENV}).json()["session_id"]
    assert alice.post(f"/v1/sessions/{sid}/reset", json={}).status_code == 200
    step = _deep_text(depth, {"action": "DEEP"})
    _limit_problem(alice.post(f"/v1/sessions/{sid}/step", content=step))
    assert alice.post(f"/v1/sessions/{sid}/step", json={"action": "noop()"}).status_code == 200
    pool = alice.post("/v1/pools", json={"env": BENCH_ENV, "size": 1}).json()["pool_id"]
    assert alice.post(f"/v1/pools/{pool}/reset", json={}).status_code == 200
    _limit_problem(
        alice.post(f"/v1/pools/{pool}/step", content=_deep_text(depth, {"actions": ["DEEP"]}))
    )
    r = alice.post(f"/v1/pools/{pool}/step", json={"actions": ["noop()"]})
    assert r.status_code == 200, r.text
    # deep options on a create are refused the same way
    _limit_problem(
        alice.post(
            "/v1/sessions", content=_deep_text(depth, {"env": BENCH_ENV, "options": {"x": "DEEP"}})
        )
    )
    alice.delete(f"/v1/pools/{pool}")
    alice.delete(f"/v1/sessions/{sid}")


def test_a_deeply_nested_message_is_a_422_over_websockets_and_openenv(
    keyed: str, alice: httpx.Client
) -> None:
    import websocket

    sid = alice.post("/v1/sessions", json={"env": BENCH_ENV}).json()["session_id"]
    ws = websocket.create_connection(
        keyed.replace("http", "ws") + f"/v1/sessions/{sid}/ws?api_key={ALICE}", timeout=60
    )
    try:
        ws.send(json.dumps({"op": "reset"}))
        assert "observation" in json.loads(ws.recv())
        ws.send(_deep_text(500, {"op": "step", "action": "DEEP"}))
        error = json.loads(ws.recv())["error"]
        assert error["status"] == 422 and error["limit"] == 64, error
        ws.send(json.dumps({"op": "step", "action": "noop()"}))
        assert "observation" in json.loads(ws.recv())
    finally:
        ws.close()
    alice.delete(f"/v1/sessions/{sid}")
    # OpenEnv over HTTP: reset, then a deep step
    base = f"/openenv/{BENCH_ENV}"
    reset = alice.post(f"{base}/reset", json={})
    assert reset.status_code == 200, reset.text
    oe_sid = reset.json()["metadata"]["session_id"]
    deep = _deep_text(
        500, {"action": {"name": "noop", "args": {"x": "DEEP"}}, "session_id": oe_sid}
    )
    _limit_problem(alice.post(f"{base}/step", content=deep))
    _limit_problem(
        alice.post(
            f"{base}/mcp",
            content=_deep_text(
                500, {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "DEEP"}}
            ),
        )
    )
    alice.delete(f"/v1/sessions/{oe_sid}")
    # OpenEnv over its WebSocket: an error frame naming the limit, and the socket goes on
    ws = websocket.create_connection(
        keyed.replace("http", "ws") + f"/openenv/{BENCH_ENV}/ws",
        header=[f"X-API-Key: {ALICE}"],
        timeout=120,
    )
    try:
        ws.send(_deep_text(500, {"type": "step", "data": "DEEP"}))
        frame = json.loads(ws.recv())
        assert frame["type"] == "error" and frame["data"]["status"] == 422, frame
        assert "64" in frame["data"]["message"]
        ws.send(json.dumps({"type": "state"}))
        assert json.loads(ws.recv())["type"] == "state"
    finally:
        ws.close()


def test_nesting_within_the_limit_is_parsed_as_before(alice: httpx.Client) -> None:
    """The check counts brackets outside strings only: an action *string* full of brackets,
    and options nested a few levels, are the env's to judge."""
    sid = alice.post("/v1/sessions", json={"env": BENCH_ENV}).json()["session_id"]
    alice.post(f"/v1/sessions/{sid}/reset", json={})
    r = alice.post(f"/v1/sessions/{sid}/step", json={"action": "noop()" + "[" * 500})
    assert r.status_code in (200, 422) and "max_json_depth" not in r.text, r.text
    r = alice.post(f"/v1/sessions/{sid}/step", json={"action": _deep(50)})
    assert "max_json_depth" not in r.text, r.text
    alice.delete(f"/v1/sessions/{sid}")


# ----- 6. slow clients: header and body deadlines ----------------------------------------------
def test_trickling_connections_are_closed_at_the_header_deadline(keyed: str) -> None:
    """300 clients sending a request line a byte at a time, and one sending nothing: all are
    disconnected (header_timeout_s is 1 s here); a keep-alive client idle for longer than
    that still works."""
    host, port = keyed.removeprefix("http://").split(":")
    socks = [socket.create_connection((host, int(port))) for _ in range(300)]
    silent = socket.create_connection((host, int(port)))
    line = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n"
    closed: set[int] = set()
    deadline = time.monotonic() + 30
    sent = 0
    while len(closed) < len(socks) and time.monotonic() < deadline:
        for i, s in enumerate(socks):
            if i in closed:
                continue
            try:
                s.send(line[sent % len(line) : sent % len(line) + 1])
                s.setblocking(False)
                try:
                    if s.recv(64) == b"":
                        closed.add(i)
                except BlockingIOError:
                    pass
            except OSError:
                closed.add(i)
        sent += 1
        time.sleep(0.1)
    assert len(closed) == len(socks), f"{len(socks) - len(closed)} trickling sockets still open"
    silent.settimeout(30)
    assert silent.recv(64) == b""
    with httpx.Client(base_url=keyed, timeout=30) as http:
        assert http.get("/v1/health").status_code == 200
        time.sleep(1.5)  # idle longer than the header deadline, under keep_alive_s
        assert http.get("/v1/health").status_code == 200
    for s in (*socks, silent):
        s.close()


def test_a_trickling_body_is_a_408(keyed: str) -> None:
    host, port = keyed.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as s:
        s.sendall(
            b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nX-API-Key: "
            + ALICE.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{"
        )
        s.settimeout(0.2)
        answer = b""
        deadline = time.monotonic() + 30
        while b"\r\n\r\n" not in answer and time.monotonic() < deadline:
            try:
                s.send(b" ")
                answer += s.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                break
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]


# ----- 7. the dashboard: Secure cookie over TLS, same-origin sign-out, headers on every page ---
def _dashboard(tmp_path: Path, peer: str = "testclient", **settings: Any) -> TestClient:
    app = create_app(Settings(workers=1, runs_dir=tmp_path, api_keys=[ALICE], **settings))
    return TestClient(app, client=(peer, 50000), follow_redirects=False)


def _cookie(r: httpx.Response) -> str:
    assert r.status_code == 303, r.text
    return r.headers["set-cookie"].lower()


def test_the_dashboard_cookie_is_secure_over_tls_or_a_trusted_proxy(tmp_path: Path) -> None:
    form = {"api_key": ALICE}
    plain = _dashboard(tmp_path)
    assert "secure" not in _cookie(plain.post("/dashboard/login", data=form))
    tls = TestClient(plain.app, base_url="https://testserver", follow_redirects=False)
    assert "; secure" in _cookie(tls.post("/dashboard/login", data=form))
    forwarded = {"X-Forwarded-Proto": "https"}
    proxied = _dashboard(tmp_path, "10.0.0.2", trusted_proxies=["10.0.0.0/24"])
    assert "; secure" in _cookie(proxied.post("/dashboard/login", data=form, headers=forwarded))
    # anyone else saying so is not believed
    stranger = _dashboard(tmp_path, "10.0.1.9", trusted_proxies=["10.0.0.0/24"])
    assert "secure" not in _cookie(stranger.post("/dashboard/login", data=form, headers=forwarded))


def test_sign_out_needs_the_dashboards_own_origin(tmp_path: Path) -> None:
    client = _dashboard(tmp_path)
    for headers in ({"Origin": "https://evil.example"}, {"Referer": "https://evil.example/x"}, {}):
        r = client.post("/dashboard/logout", headers=headers)
        assert r.status_code == 403 and "set-cookie" not in r.headers, (headers, r.text)
    ok = client.post("/dashboard/logout", headers={"Origin": "http://testserver"})
    assert ok.status_code == 303 and "palaestra_dashboard" in ok.headers["set-cookie"]


def test_every_page_forbids_framing_and_sniffing(tmp_path: Path) -> None:
    client = _dashboard(tmp_path)
    pages = [
        client.get("/"),
        client.get("/dashboard/runs/live/sessions/nope"),
        client.get("/no-such-page"),
        client.get("/v1/health"),
        client.post("/dashboard/logout"),
    ]
    for r in pages:
        assert r.headers["x-frame-options"] == "DENY", r.request.url
        assert r.headers["x-content-type-options"] == "nosniff", r.request.url
        csp = r.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "default-src 'self'" in csp, r.request.url


# ----- 8. the MiniWoB static server lists no folder --------------------------------------------
def test_the_static_site_server_lists_no_directory(tmp_path: Path) -> None:
    from palaestra.envs.web import sites

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "secret-answer.html").write_text("<p>the answer</p>")
    (tmp_path / "page.html").write_text("<p>a page</p>")
    base = sites.origin(tmp_path)
    for folder in ("/", "/sub/"):
        r = httpx.get(base + folder)
        assert r.status_code == 404 and "secret-answer" not in r.text and "page.html" not in r.text
    assert httpx.get(base + "/page.html").text == "<p>a page</p>"
    assert httpx.get(base + "/sub/secret-answer.html").status_code == 200
