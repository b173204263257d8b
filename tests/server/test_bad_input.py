"""Bad input gets a clear 4xx problem+json naming what is wrong, and breaks nothing."""

import concurrent.futures

import httpx
import pytest

from tests.conftest import BENCH_ENV

PROBLEM = "application/problem+json"


@pytest.fixture
def http(gateway):
    with httpx.Client(base_url=gateway, timeout=30) as client:
        yield client


def _problem(r, status):
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["status"] == status and body["detail"]
    return body


def _session(http):
    sid = http.post("/v1/sessions", json={"env": BENCH_ENV}).json()["session_id"]
    http.post(f"/v1/sessions/{sid}/reset", json={})
    return sid


def test_unknown_env_names_it_and_lists_close_matches(http):
    body = _problem(http.post("/v1/sessions", json={"env": "palaestra-bench/Overhed-v0"}), 404)
    assert "Overhed" in body["detail"] and BENCH_ENV in body["close_matches"]


def test_unknown_task(http):
    body = _problem(http.post("/v1/sessions", json={"task": "palaestra-bench/nope"}), 404)
    assert "nope" in body["detail"]


def test_malformed_json(http):
    r = http.post(
        "/v1/sessions", content=b"{not json", headers={"content-type": "application/json"}
    )
    _problem(r, 422)
    sid = _session(http)
    _problem(http.post(f"/v1/sessions/{sid}/reset", content=b"{oops"), 422)


def test_unknown_fields_are_named(http):
    body = _problem(http.post("/v1/sessions", json={"env": BENCH_ENV, "colour": "red"}), 422)
    assert body["field"] == "colour"
    body = _problem(http.post("/v1/sessions", json={}), 422)
    assert "env" in body["detail"]
    _problem(http.post("/v1/sessions"), 422)
    _problem(http.post("/v1/sessions", json=[1, 2]), 422)


def test_wrong_action_types(http):
    sid = _session(http)
    body = _problem(http.post(f"/v1/sessions/{sid}/step", json={"action": 5}), 422)
    assert body["field"].startswith("action")
    _problem(http.post(f"/v1/sessions/{sid}/step", json={}), 422)
    # a well-formed request with a bad action is an agent mistake: observed, world unchanged
    r = http.post(f"/v1/sessions/{sid}/step", json={"action": "add('many')"})
    assert r.status_code == 200
    assert "must be int" in r.json()["observation"]["last_action_error"]
    assert r.json()["observation"]["count"] == 0


def test_bad_env_options(http):
    body = _problem(
        http.post("/v1/sessions", json={"env": BENCH_ENV, "options": {"colour": 1}}), 422
    )
    assert body["field"] == "options.colour"  # the env's options model names the option


def test_oversized_body(http):
    sid = _session(http)
    body = _problem(http.post(f"/v1/sessions/{sid}/step", json={"action": "x" * 100_000}), 413)
    assert "exceeds" in body["detail"]
    assert http.post(f"/v1/sessions/{sid}/step", json={"action": "add(1)"}).status_code == 200


def test_step_before_reset(http):
    sid = http.post("/v1/sessions", json={"env": BENCH_ENV}).json()["session_id"]
    body = _problem(http.post(f"/v1/sessions/{sid}/step", json={"action": "add(1)"}), 409)
    assert "reset" in body["detail"]


def test_closed_and_unknown_sessions(http):
    sid = _session(http)
    http.delete(f"/v1/sessions/{sid}")
    body = _problem(http.post(f"/v1/sessions/{sid}/step", json={"action": "add(1)"}), 409)
    assert "closed" in body["detail"]
    _problem(http.post("/v1/sessions/nope/step", json={"action": "add(1)"}), 404)
    _problem(http.get("/v1/no/such/route"), 404)


def test_concurrent_steps_on_one_session_are_serialised(gateway):
    with httpx.Client(base_url=gateway, timeout=30) as http:
        sid = _session(http)

    def hammer(_):
        with httpx.Client(base_url=gateway, timeout=30) as c:
            return [
                c.post(f"/v1/sessions/{sid}/step", json={"action": "add(1)"}).json()
                for _ in range(25)
            ]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = [r for batch in pool.map(hammer, range(4)) for r in batch]
    steps = sorted(r["info"]["step"] for r in results)
    assert steps == list(range(1, 101))  # every step seen once: none interleaved or lost
    counts = sorted(r["observation"]["count"] for r in results)
    assert counts == list(range(1, 101))


def test_websocket_errors_are_messages_not_disconnects(gateway):
    import websocket

    with httpx.Client(base_url=gateway, timeout=30) as http:
        sid = _session(http)
    ws = websocket.create_connection(gateway.replace("http", "ws") + f"/v1/sessions/{sid}/ws")
    ws.send("{nope")
    assert "not JSON" in ws.recv()
    ws.send('{"op": "fly"}')
    assert "unknown op" in ws.recv()
    ws.send('{"op": "step", "action": 3}')
    assert "action" in ws.recv()
    ws.send('{"op": "step", "action": "add(2)", "colour": 1}')
    assert "colour" in ws.recv()
    ws.send('{"op": "step", "action": "add(2)"}')
    assert '"count":2' in ws.recv()
    ws.close()
    with pytest.raises(websocket.WebSocketBadStatusException):
        websocket.create_connection(gateway.replace("http", "ws") + "/v1/sessions/nope/ws")
