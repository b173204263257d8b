"""API hygiene (issue 15, item 5), tried as a hostile API client on a gateway with two keys.

Each test is one finding and fails if its hole reopens: tracebacks in problems, bad input that
fails a session, another key's closed session answering 409, health details and metrics without
a key, API keys readable from /proc or held in plain text. The last test is a bounded
schemathesis run over ``/openapi.json``: no 5xx and no leaked trace anywhere.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pwd
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from palaestra.server.app import create_app
from palaestra.server.runner import gateway_process, gateway_thread
from palaestra.server.settings import Settings
from tests.conftest import BENCH_ENV, FAULTY_ENV

ALICE = "alice-0f9e8d7c6b5a4f3e"
BOB = "bob-1a2b3c4d5e6f7a8b"
#: what must never reach a client: a traceback, a source file, a path into the install
LEAK = re.compile(r"Traceback|File \"|\.py\b|site-packages|/work/|/root/|\"trace\"")


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real gateway (two worker processes) with the keys of Alice and Bob."""
    settings = Settings(
        workers=2,
        runs_dir=tmp_path_factory.mktemp("runs"),
        api_keys=[ALICE, BOB],
        step_timeout_s=30.0,
        max_body_bytes=64_000,
        max_sessions_per_key=32,
        public_docs=True,  # the schemathesis run reads /openapi.json (off by default with keys)
    )
    with gateway_thread(settings) as url:
        yield url


@pytest.fixture
def alice(keyed: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=keyed, headers={"X-API-Key": ALICE}, timeout=30) as c:
        yield c


@pytest.fixture
def bob(keyed: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=keyed, headers={"Authorization": f"Bearer {BOB}"}, timeout=30) as c:
        yield c


@pytest.fixture
def anon(keyed: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=keyed, timeout=30) as c:
        yield c


def _session(http: httpx.Client, env: str = BENCH_ENV, **options: Any) -> str:
    r = http.post("/v1/sessions", json={"env": env, "options": options})
    assert r.status_code == 201, r.text
    sid = str(r.json()["session_id"])
    assert http.post(f"/v1/sessions/{sid}/reset", json={}).status_code == 200
    return sid


def _ws(base: str, sid: str, key: str) -> Any:
    import websocket

    url = base.replace("http", "ws", 1) + f"/v1/sessions/{sid}/ws?api_key={key}"
    return websocket.create_connection(url, timeout=30)


def _no_leak(problem: dict[str, Any]) -> str:
    """The problem carries no internals and a correlation id; returns the id."""
    text = json.dumps(problem)
    assert "trace" not in problem and not LEAK.search(text), text
    cid = problem.get("correlation_id")
    assert isinstance(cid, str) and len(cid) >= 8, text
    return cid


# ----- 1. no tracebacks to clients; the log has them, under the problem's correlation id ----
def test_an_env_crash_answers_no_traceback_but_a_correlation_id_in_the_log(
    keyed: str, alice: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    sid = _session(alice, FAULTY_ENV, allow_faults=True)
    r = alice.post(f"/v1/sessions/{sid}/step", json={"action": "crash()"})
    assert r.status_code == 502 and "RuntimeError: boom" in r.json()["detail"]
    cid = _no_leak(r.json())
    logged = [rec.getMessage() for rec in caplog.records if cid in rec.getMessage()]
    assert logged and "Traceback" in logged[0], "the traceback must stay in the gateway's log"
    # the session stays failed, and says so the same way
    again = alice.post(f"/v1/sessions/{sid}/step", json={"action": "ok()"})
    assert again.status_code == 502 and _no_leak(again.json()) == cid
    # the owner's recording keeps the error, not the traceback
    rec = alice.get(f"/v1/runs/live/sessions/{sid}")
    assert rec.status_code == 200 and not LEAK.search(rec.text), rec.text


def test_websocket_and_pool_errors_carry_no_traceback(keyed: str, alice: httpx.Client) -> None:
    sid = _session(alice, FAULTY_ENV, allow_faults=True)
    ws = _ws(keyed, sid, ALICE)
    try:
        ws.send(json.dumps({"op": "step", "action": "crash()"}))
        error = json.loads(ws.recv())["error"]
        assert error["status"] == 502
        _no_leak(error)
    finally:
        ws.close()
    r = alice.post(
        "/v1/pools", json={"env": FAULTY_ENV, "options": {"allow_faults": True}, "size": 1}
    )
    assert r.status_code == 201, r.text
    pool = r.json()["pool_id"]
    assert alice.post(f"/v1/pools/{pool}/reset", json={}).status_code == 200
    r = alice.post(f"/v1/pools/{pool}/step", json={"actions": ["crash()"]})
    assert r.status_code == 502
    _no_leak(r.json())
    alice.delete(f"/v1/pools/{pool}")


def test_a_gateway_bug_answers_a_bare_500_problem(caplog: pytest.LogCaptureFixture) -> None:
    from fastapi import FastAPI
    from starlette.testclient import TestClient

    from palaestra.server.http import install_error_handlers

    app = FastAPI()
    install_error_handlers(app)

    @app.get("/boom")
    async def boom() -> None:
        raise KeyError("/srv/palaestra/secret.py")

    r = TestClient(app, raise_server_exceptions=False).get("/boom")
    assert r.status_code == 500 and r.headers["content-type"].startswith("application/problem")
    assert "secret" not in r.text and "KeyError" not in r.text
    cid = _no_leak(r.json())
    assert any(cid in rec.getMessage() and "KeyError" in rec.getMessage() for rec in caplog.records)


# ----- 2. invalid values are 422 and never fail a session ------------------------------------
@pytest.mark.parametrize("seed", [-1, 2**32, 2**64, 1.5, "7", True])
def test_a_bad_seed_is_a_422_and_the_session_goes_on(alice: httpx.Client, seed: Any) -> None:
    sid = _session(alice)
    r = alice.post(f"/v1/sessions/{sid}/reset", json={"seed": seed})
    assert r.status_code == 422 and r.json()["field"] == "seed", r.text
    assert alice.post(f"/v1/sessions/{sid}/reset", json={"seed": 2**32 - 1}).status_code == 200
    step = alice.post(f"/v1/sessions/{sid}/step", json={"action": "noop()"})
    assert step.status_code == 200, step.text
    assert alice.get(f"/v1/sessions/{sid}").json()["failed"] is None
    alice.delete(f"/v1/sessions/{sid}")


def test_a_bad_seed_over_the_websocket_and_on_a_pool_is_a_422(
    keyed: str, alice: httpx.Client
) -> None:
    sid = _session(alice)
    ws = _ws(keyed, sid, ALICE)
    try:
        ws.send(json.dumps({"op": "reset", "seed": -1}))
        assert json.loads(ws.recv())["error"]["status"] == 422
        ws.send(json.dumps({"op": "reset", "seed": 3}))
        assert "observation" in json.loads(ws.recv())
    finally:
        ws.close()
    pool = alice.post("/v1/pools", json={"env": BENCH_ENV, "size": 2}).json()["pool_id"]
    for seed in (-1, [0, -1], 2**32 - 1):  # the last: member 1 would get 2**32
        r = alice.post(f"/v1/pools/{pool}/reset", json={"seed": seed})
        assert r.status_code == 422 and r.json()["field"].startswith("seed"), r.text
    assert alice.post(f"/v1/pools/{pool}/reset", json={"seed": 2**32 - 2}).status_code == 200
    r = alice.post(f"/v1/pools/{pool}/step", json={"actions": ["noop()", "noop()"]})
    assert r.status_code == 200, r.text
    alice.delete(f"/v1/pools/{pool}")


# ----- 3. another key's session is a 404, live or closed, everywhere -------------------------
def test_another_keys_session_is_a_404_live_or_closed(
    keyed: str, alice: httpx.Client, bob: httpx.Client
) -> None:
    import websocket

    sid = _session(alice)
    alice.post(f"/v1/sessions/{sid}/step", json={"action": "noop()"})

    def foreign_calls() -> list[httpx.Response]:
        return [
            bob.get(f"/v1/sessions/{sid}"),
            bob.post(f"/v1/sessions/{sid}/reset", json={}),
            bob.post(f"/v1/sessions/{sid}/step", json={"action": "noop()"}),
            bob.get(f"/v1/sessions/{sid}/screenshot"),
            bob.get(f"/v1/runs/live/sessions/{sid}"),
            bob.delete(f"/v1/sessions/{sid}"),
        ]

    for live in (True, False):
        for r in foreign_calls():
            assert r.status_code == 404, (live, r.request.url, r.text)
            assert "closed" not in r.text and "owner" not in r.text
        with pytest.raises(websocket.WebSocketBadStatusException):
            _ws(keyed, sid, BOB)  # its close code: the test below
        if live:
            assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    # its owner is told why
    r = alice.post(f"/v1/sessions/{sid}/reset", json={})
    assert r.status_code == 409 and "closed by its owner" in r.json()["detail"]


def test_a_foreign_session_refuses_the_websocket_with_4404_live_or_closed(tmp_path: Path) -> None:
    from starlette.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    app = create_app(Settings(workers=1, runs_dir=tmp_path, api_keys=[ALICE, BOB]))
    with TestClient(app) as tc:

        def refused(sid: str, key: str) -> int:
            with (
                pytest.raises(WebSocketDisconnect) as closed,
                tc.websocket_connect(f"/v1/sessions/{sid}/ws?api_key={key}"),
            ):
                pass
            return closed.value.code

        made = tc.post("/v1/sessions", json={"env": BENCH_ENV}, headers={"X-API-Key": ALICE})
        sid = made.json()["session_id"]
        assert refused(sid, BOB) == 4404
        assert tc.delete(f"/v1/sessions/{sid}", headers={"X-API-Key": ALICE}).status_code == 204
        assert refused(sid, BOB) == 4404
        assert refused(sid, ALICE) == 4409


def test_a_websocket_held_past_its_sessions_close_answers_409(
    keyed: str, alice: httpx.Client
) -> None:
    """A socket opened before its session was closed (by a DELETE, the idle reaper, a failed
    worker) is told the session is closed and why (409), not a 500 or a worker's 502."""
    sid = _session(alice)
    ws = _ws(keyed, sid, ALICE)
    try:
        ws.send(json.dumps({"op": "reset", "seed": 0}))
        assert "observation" in json.loads(ws.recv())
        assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
        for op in ({"op": "step", "action": "noop()"}, {"op": "reset"}):
            ws.send(json.dumps(op))
            error = json.loads(ws.recv())["error"]
            assert error["status"] == 409, error
            assert "closed by its owner" in error["detail"]
    finally:
        ws.close()


# ----- 4. health details and /metrics need a key ----------------------------------------------
def test_health_details_and_metrics_need_a_key(anon: httpx.Client, alice: httpx.Client) -> None:
    bare = anon.get("/v1/health")
    assert bare.status_code == 200 and set(bare.json()) == {"status", "version"}, bare.text
    assert anon.get("/metrics").status_code == 401
    assert "pid" not in anon.get("/").text.lower().split("<th>pid</th>", 1)[-1]
    full = alice.get("/v1/health").json()
    assert full["workers"] and all(w["pid"] for w in full["workers"])
    assert "palaestra_steps_total" in alice.get("/metrics").text


def test_the_operator_can_make_monitoring_public(tmp_path: Path) -> None:
    settings = Settings(workers=1, runs_dir=tmp_path, api_keys=[ALICE], public_monitoring=True)
    with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=30) as anon:
        assert anon.get("/v1/health").json()["workers"]
        assert anon.get("/metrics").status_code == 200
        assert anon.post("/v1/sessions", json={"env": BENCH_ENV}).status_code == 401


# ----- 5. API keys: from a file or the environment, hashed in memory, never handed on -------
def test_keys_are_held_as_digests(tmp_path: Path) -> None:
    key_file = tmp_path / "keys"
    key_file.write_text(f"# the gateway's keys\n{BOB}\n\n")
    settings = Settings(api_keys=[ALICE], api_keys_file=key_file)
    app = create_app(settings)  # not started: no workers
    held = repr(settings.model_dump()) + repr(app.state.gateway.keys)
    assert ALICE not in held and BOB not in held
    assert len(app.state.gateway.keys) == 2
    assert app.state.gateway.authenticate(BOB) == app.state.gateway.authenticate(BOB)
    assert app.state.gateway.authenticate(ALICE) != app.state.gateway.authenticate(BOB)
    with pytest.raises(ValueError, match="api_keys_file"):
        Settings(api_keys_file=tmp_path / "missing")


def _proc(pid: int, what: str) -> bytes:
    return Path(f"/proc/{pid}/{what}").read_bytes()


def test_keys_from_a_file_or_the_environment_reach_no_command_line_and_no_worker(
    tmp_path: Path,
) -> None:
    key_file = tmp_path / "keys"
    key_file.write_text(BOB + "\n")
    env = {"PALAESTRA_API_KEYS": ALICE, "PALAESTRA_API_KEYS_FILE": str(key_file)}
    args = ("--workers", "1", "--runs-dir", str(tmp_path / "runs"))
    with gateway_process(*args, env=env) as (url, proc):
        for key in (ALICE, BOB):
            with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=30) as http:
                assert http.post("/v1/sessions", json={"env": BENCH_ENV}).status_code == 201
        assert httpx.post(f"{url}/v1/sessions", json={"env": BENCH_ENV}).status_code == 401
        health = httpx.get(f"{url}/v1/health", headers={"X-API-Key": ALICE}).json()
        pids = [proc.pid, *(w["pid"] for w in health["workers"])]
        assert len(pids) == 2
        for pid in pids:
            cmdline = _proc(pid, "cmdline")
            assert ALICE.encode() not in cmdline and BOB.encode() not in cmdline
        worker_env = _proc(pids[1], "environ")
        assert ALICE.encode() not in worker_env and b"PALAESTRA_API_KEYS" not in worker_env


def test_api_key_on_the_command_line_still_works_but_warns(monkeypatch: Any) -> None:
    from typer.testing import CliRunner

    import palaestra.server.runner
    from palaestra.cli import app

    started: list[Settings] = []
    monkeypatch.setattr(palaestra.server.runner, "serve", lambda s, **_: started.append(s))
    result = CliRunner().invoke(app, ["serve", "--api-key", ALICE, "--workers", "1"])
    assert result.exit_code == 0, result.output
    said = result.output + (getattr(result, "stderr", "") or "")
    assert "/proc" in said and "--api-key-file" in said
    assert started and started[0].api_keys and ALICE not in repr(started[0].api_keys)


# ----- 6. workers drop root when the operator names a user ------------------------------------
def test_local_workers_start_as_the_configured_user(monkeypatch: Any) -> None:
    import asyncio

    from palaestra.workers import local

    if os.geteuid() != 0:
        with pytest.raises(ValueError, match="root"):
            local.RunAs.resolve("nobody")
        return
    with pytest.raises(ValueError, match="must not be root"):
        local.RunAs.resolve("root")
    backend = local.LocalBackend("nobody")
    assert backend.run_as is not None and backend.run_as.uid != 0
    assert os.stat(backend.socket_dir).st_uid == backend.run_as.uid
    assert os.stat(backend.socket_dir).st_mode & 0o077 == 0
    seen: dict[str, Any] = {}

    async def spawn(*cmd: str, **kwargs: Any) -> Any:
        seen.update(kwargs, cmd=cmd)
        raise OSError("not really started")

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spawn)
    worker = local.LocalWorker("w", f"{backend.socket_dir}/w.sock", 5.0, backend.run_as)
    with pytest.raises(OSError, match="not really"):
        asyncio.run(worker.start())
    uid, gid = backend.run_as.uid, backend.run_as.gid
    assert seen["cmd"][:5] == (
        shutil.which("setpriv"),
        f"--reuid={uid}",
        f"--regid={gid}",
        "--clear-groups",
        "--",
    )
    assert "PALAESTRA_API_KEYS" not in seen["env"]
    asyncio.run(backend.stop())


#: Debian's Python with palaestra installed (scripts/setup-worker-venv.sh, run by make setup):
#: the gateway's own interpreter may live where 'nobody' cannot read (a pyenv under /root)
WORKER_PYTHON = Path(__file__).parents[2] / ".venv-worker" / "bin" / "python"


def test_an_unprivileged_worker_serves_a_session(tmp_path: Path) -> None:
    """For real: a root gateway starts its worker as 'nobody', on an interpreter 'nobody' can
    read, and that worker hosts a session; fails if the worker still runs as root."""
    if os.geteuid() != 0:  # the drop itself needs root; a non-root gateway has none to drop
        pytest.skip("only a root gateway switches its workers' user")
    assert WORKER_PYTHON.exists(), "make setup builds .venv-worker (scripts/setup-worker-venv.sh)"
    nobody = pwd.getpwnam("nobody")
    settings = Settings(
        workers=1, runs_dir=tmp_path, worker_user="nobody", worker_python=str(WORKER_PYTHON)
    )
    with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        pid = http.get("/v1/health").json()["workers"][0]["pid"]
        status = _proc(pid, "status").decode()
        uids = [int(u) for u in status.split("\nUid:")[1].split("\n")[0].split()]
        gids = [int(g) for g in status.split("\nGid:")[1].split("\n")[0].split()]
        assert set(uids) == {nobody.pw_uid} and set(gids) == {nobody.pw_gid}, status
        assert status.split("\nGroups:")[1].split("\n")[0].strip() == ""  # no root's groups
        sid = _session(http)
        r = http.post(f"/v1/sessions/{sid}/step", json={"action": "noop()"})
        assert r.status_code == 200, r.text
        assert "observation" in r.json()


# ----- 7. a bounded schemathesis run: no 5xx, no leaked trace ---------------------------------
#: examples per operation; about 30 operations, so well under a minute in all
FUZZ_EXAMPLES = 6
#: start real synthesis or eval jobs (browsers, desktops, minutes of CPU): their bodies are
#: covered by the 422 tests here and in tests/server/test_evals_api.py
FUZZ_SKIP = {
    ("POST", "/v1/synth/jobs"),
    ("POST", "/v1/evals"),
    # an event stream answers until the client leaves: each case would wait out its timeout
    # (90 s of the run); tests/server/test_dashboard*.py read it
    ("GET", "/dashboard/events"),
}


def test_schemathesis_finds_no_5xx_and_no_leaked_trace(keyed: str) -> None:
    import requests
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis.checks import not_a_server_error
    from schemathesis.generation import GenerationMode

    def no_leak(ctx: Any, response: Any, case: Any) -> None:
        text = response.text if hasattr(response, "text") else ""
        # an id the fuzzer sent ("*.py") echoed in a 404's detail is the client's own input
        for value in (case.path_parameters or {}).values():
            for form in {str(value), json.dumps(str(value))[1:-1]}:
                text = text.replace(form, "")
        if LEAK.search(text) and response.headers.get("content-type", [""])[0] != "text/html":
            raise AssertionError(f"{case.method} {case.path} leaked internals: {text[:300]}")

    # the catalogues load every family once (seconds on a busy machine): not a fuzzing matter
    for path in ("/v1/envs", "/v1/suites"):
        assert httpx.get(keyed + path, headers={"X-API-Key": ALICE}, timeout=300).is_success
    schema = schemathesis.openapi.from_url(f"{keyed}/openapi.json")
    started = time.monotonic()
    cases = 0
    with requests.Session() as http:
        http.headers["X-API-Key"] = ALICE
        for result in schema.get_all_operations():
            op = result.ok()
            if (op.method.upper(), op.path) in FUZZ_SKIP:
                continue
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

                @given(case=op.as_strategy(generation_mode=mode))
                @settings(
                    max_examples=FUZZ_EXAMPLES,
                    deadline=None,
                    database=None,
                    phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                )
                def run(case: Any) -> None:
                    nonlocal cases
                    cases += 1
                    case.call_and_validate(
                        base_url=keyed,
                        session=http,
                        checks=[not_a_server_error, no_leak],
                        timeout=60,
                    )

                with contextlib.suppress(Unsatisfiable):  # nothing to make invalid here
                    run()
    elapsed = time.monotonic() - started
    print(f"schemathesis: {cases} cases in {elapsed:.1f} s")
    assert cases >= 100  # bounded by FUZZ_EXAMPLES, not by the clock (5-25 s here)
