"""Crashes, hangs and limits fail only the session concerned, with a clear message."""

import contextlib
import os
import signal
import threading
import time

import httpx
import pytest

from palaestra.recording import read_events
from palaestra.server.runner import gateway_process, gateway_thread
from palaestra.server.settings import Settings
from tests.conftest import BENCH_ENV, FAULTY_ENV


def _session(http, env=FAULTY_ENV):
    r = http.post("/v1/sessions", json={"env": env, "options": {"allow_faults": True}})
    assert r.status_code == 201, r.text
    sid = r.json()["session_id"]
    assert http.post(f"/v1/sessions/{sid}/reset", json={}).status_code == 200
    return sid, r.json()["worker"]


def _step(http, sid, action):
    return http.post(f"/v1/sessions/{sid}/step", json={"action": action})


def test_env_exception_fails_only_its_session(gateway):
    with httpx.Client(base_url=gateway, timeout=30) as http:
        bad, _ = _session(http)
        good, _ = _session(http)
        r = _step(http, bad, "crash()")
        assert r.status_code == 502 and "RuntimeError: boom" in r.json()["detail"]
        assert r.json()["session_id"] == bad and r.json()["worker"]
        again = _step(http, bad, "ok()")
        assert again.status_code == 502 and "crashed" in again.json()["detail"]
        assert _step(http, good, "ok()").json()["observation"]["oks"] == 1


def test_stuck_step_times_out_and_the_worker_keeps_serving(tmp_path):
    settings = Settings(workers=1, runs_dir=tmp_path, step_timeout_s=2.0)
    with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        stuck, worker = _session(http)
        # a neighbour on the same worker
        for _ in range(4):
            other, other_worker = _session(http)
            if other_worker == worker:
                break
        # the action outlasts any load: a 504 (not the 200 it ends with) is the timeout's doing
        r = _step(http, stuck, "sleep(60)")
        assert r.status_code == 504 and "longer than 2 s" in r.json()["detail"]
        assert _step(http, other, "ok()").status_code == 200
        assert _step(http, stuck, "ok()").status_code == 504  # the session stays failed
        assert http.delete(f"/v1/sessions/{stuck}").status_code == 204


def test_sigkilled_worker_fails_its_sessions_and_is_replaced(tmp_path):
    settings = Settings(workers=2, runs_dir=tmp_path, step_timeout_s=20)
    with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        victim, victim_worker = _session(http)
        for _ in range(20):  # sessions go to the least loaded worker: the second one soon
            survivor, survivor_worker = _session(http)
            if survivor_worker != victim_worker:
                break
        assert survivor_worker != victim_worker, "every session landed on one worker"
        pids = {w["name"]: w["pid"] for w in http.get("/v1/health").json()["workers"]}
        result = {}
        t = threading.Thread(target=lambda: result.update(r=_step(http, victim, "sleep(10)")))
        t.start()
        time.sleep(0.5)  # mid-step
        os.kill(pids[victim_worker], signal.SIGKILL)
        t.join(15)
        r = result["r"]
        assert r.status_code == 502, r.text
        body = r.json()
        assert body["worker"] == victim_worker and body["session_id"] == victim
        assert "SIGKILL" in body["detail"] or "died" in body["detail"]
        follow = _step(http, victim, "ok()")
        assert follow.status_code == 502 and "lost" in follow.json()["detail"]
        assert _step(http, survivor, "ok()").status_code == 200
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            workers = http.get("/v1/health").json()["workers"]
            if all(w["alive"] for w in workers) and len(workers) == 2:
                break
            time.sleep(0.1)
        new_pids = {w["name"]: w["pid"] for w in workers}
        assert new_pids[victim_worker] != pids[victim_worker]
        fresh, _ = _session(http)
        assert _step(http, fresh, "ok()").status_code == 200
        events = list(read_events(tmp_path / "live" / victim))
        assert events[-1]["type"] == "error"


def test_a_hung_worker_misses_its_heartbeat_and_is_replaced(tmp_path):
    settings = Settings(workers=2, runs_dir=tmp_path, step_timeout_s=20, heartbeat_s=1.5)
    with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        victim, victim_worker = _session(http)
        pids = {w["name"]: w["pid"] for w in http.get("/v1/health").json()["workers"]}
        os.kill(pids[victim_worker], signal.SIGSTOP)  # alive, but answers nothing
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                workers = {w["name"]: w for w in http.get("/v1/health").json()["workers"]}
                if workers[victim_worker]["pid"] != pids[victim_worker]:
                    break
                time.sleep(0.2)
            assert workers[victim_worker]["pid"] != pids[victim_worker]
            follow = _step(http, victim, "ok()")
            assert follow.status_code == 502 and "heartbeat" in follow.json()["detail"]
            fresh, _ = _session(http)
            assert _step(http, fresh, "ok()").status_code == 200
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pids[victim_worker], signal.SIGKILL)


def test_capacity_limits_answer_429_with_retry_after(tmp_path):
    settings = Settings(workers=1, runs_dir=tmp_path, max_sessions=3, max_sessions_per_key=2)
    with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        for _ in range(2):
            assert http.post("/v1/sessions", json={"env": BENCH_ENV}).status_code == 201
        r = http.post("/v1/sessions", json={"env": BENCH_ENV})
        assert r.status_code == 429 and r.headers["retry-after"]
        assert "at most 2" in r.json()["detail"]


def test_api_keys_own_sessions(tmp_path):
    settings = Settings(workers=1, runs_dir=tmp_path, api_keys=["alice-key", "bob-key"])
    with gateway_thread(settings) as url:
        alice = httpx.Client(base_url=url, headers={"Authorization": "Bearer alice-key"})
        bob = httpx.Client(base_url=url, headers={"X-API-Key": "bob-key"})
        anon = httpx.Client(base_url=url)
        assert anon.post("/v1/sessions", json={"env": BENCH_ENV}).status_code == 401
        assert anon.get("/v1/health").status_code == 200
        sid = alice.post("/v1/sessions", json={"env": BENCH_ENV}).json()["session_id"]
        assert bob.post(f"/v1/sessions/{sid}/reset", json={}).status_code == 404
        assert bob.delete(f"/v1/sessions/{sid}").status_code == 404
        assert bob.get("/v1/sessions").json()["sessions"] == []
        assert alice.post(f"/v1/sessions/{sid}/reset", json={}).status_code == 200
        assert bob.get("/v1/runs").json()["runs"] == []
        for c in (alice, bob, anon):
            c.close()


def test_no_keys_refuses_a_public_bind():
    with pytest.raises(SystemExit):
        Settings(host="0.0.0.0").check_bind()
    Settings(host="127.0.0.1").check_bind()
    Settings(host="0.0.0.0", api_keys=["k"]).check_bind()


def test_idle_sessions_are_reaped(tmp_path):
    settings = Settings(workers=1, runs_dir=tmp_path, idle_timeout_s=0.3)
    with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        sid = http.post("/v1/sessions", json={"env": BENCH_ENV}).json()["session_id"]
        time.sleep(1.0)
        r = http.post(f"/v1/sessions/{sid}/reset", json={})
        assert r.status_code == 409 and "idle" in r.json()["detail"]


@pytest.mark.slow
def test_recording_survives_a_killed_gateway_and_workers_do_not_outlive_it(tmp_path):
    with gateway_process("--workers", "1", "--runs-dir", str(tmp_path)) as (url, proc):
        http = httpx.Client(base_url=url, timeout=30)
        sid = http.post("/v1/sessions", json={"env": BENCH_ENV}).json()["session_id"]
        http.post(f"/v1/sessions/{sid}/reset", json={})
        for _ in range(7):
            assert _step(http, sid, "add(1)").status_code == 200
        worker_pid = http.get("/v1/health").json()["workers"][0]["pid"]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    events = list(read_events(tmp_path / "live" / sid))
    assert [e["type"] for e in events] == ["reset"] + ["step"] * 7
    assert events[-1]["observation"]["count"] == 7
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker_pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the worker outlived its gateway")


def test_too_many_calls_waiting_on_one_session_are_refused(tmp_path):
    settings = Settings(workers=1, runs_dir=tmp_path, max_waiting_per_session=1)
    with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        sid, _ = _session(http)
        statuses = []

        def call():
            with httpx.Client(base_url=url, timeout=30) as c:
                statuses.append(_step(c, sid, "sleep(0.5)").status_code)

        threads = [threading.Thread(target=call) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(statuses) == [200, 200, 429, 429]


def test_config_file_and_websocket_query_key(tmp_path):
    import websocket

    config = tmp_path / "gw.yaml"
    config.write_text(f"api_keys: [cfg-key]\nworkers: 1\nruns_dir: {tmp_path}\n")
    with gateway_process("--config", str(config)) as (url, _):
        http = httpx.Client(base_url=url, headers={"X-API-Key": "cfg-key"}, timeout=30)
        assert len(http.get("/v1/health").json()["workers"]) == 1
        sid = http.post("/v1/sessions", json={"env": BENCH_ENV}).json()["session_id"]
        ws_url = url.replace("http", "ws") + f"/v1/sessions/{sid}/ws"
        with pytest.raises(websocket.WebSocketBadStatusException):
            websocket.create_connection(ws_url)
        ws = websocket.create_connection(ws_url + "?api_key=cfg-key")
        ws.send('{"op": "reset"}')
        assert '"count":0' in ws.recv()
        ws.close()
        http.close()
