"""The dashboard's key rules over HTTP, against a real gateway with API keys; reading a live
row from a recording's tail."""

import time

import httpx
import orjson
import pytest

from palaestra.server import live
from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings
from tests.conftest import BENCH_ENV

KEY_A, KEY_B = "dashboard-key-a", "dashboard-key-b"


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dash")
    settings = Settings(
        workers=1, runs_dir=tmp / "runs", jobs_db=tmp / "jobs.db", api_keys=[KEY_A, KEY_B]
    )
    with gateway_thread(settings) as url:
        yield url


def _signed_in(url, key):
    client = httpx.Client(base_url=url, timeout=30)
    r = client.post("/dashboard/login", data={"api_key": key})
    assert r.status_code == 303 and "httponly" in r.headers["set-cookie"].lower()
    return client


def test_a_key_sees_only_its_own_sessions_and_recordings(keyed):
    api = httpx.Client(base_url=keyed, headers={"X-API-Key": KEY_A}, timeout=30)
    sid = api.post(
        "/v1/sessions", json={"env": BENCH_ENV, "options": {"image_size": 8}, "run": "dash-a"}
    ).json()["session_id"]
    api.post(f"/v1/sessions/{sid}/reset", json={"seed": 1})
    api.post(f"/v1/sessions/{sid}/step", json={"action": "add(2)"})

    a, b = _signed_in(keyed, KEY_A), _signed_in(keyed, KEY_B)
    page_a, page_b = a.get("/").text, b.get("/").text
    assert f'id="s-{sid}"' in page_a and "add(2)" in page_a and "dash-a" in page_a
    assert sid not in page_b and "dash-a" not in page_b
    viewer = f"/dashboard/runs/dash-a/sessions/{sid}"
    assert a.get(viewer).status_code == 200 and b.get(viewer).status_code == 404
    image = f"{viewer}/images/e0001_s0001_screenshot.png"
    got = a.get(image)
    assert got.status_code == 200 and got.headers["content-type"] == "image/png"
    assert b.get(image).status_code == 404
    with a.stream("GET", "/dashboard/events?every=0.2") as events:
        lines = events.iter_lines()
        seen = next(line for line in lines if line.startswith("data:") and sid in line)
    assert "add(2)" in seen
    assert a.get("/dashboard/runs/no-such-run/sessions/x").status_code == 404
    api.delete(f"/v1/sessions/{sid}")


def test_pools_are_shown_to_their_key_only(keyed):
    api = httpx.Client(base_url=keyed, headers={"X-API-Key": KEY_A}, timeout=30)
    pool = api.post("/v1/pools", json={"env": BENCH_ENV, "size": 2}).json()["pool_id"]
    try:
        a, b = _signed_in(keyed, KEY_A), _signed_in(keyed, KEY_B)
        assert pool in a.get("/").text and pool not in b.get("/").text
    finally:
        api.delete(f"/v1/pools/{pool}")


def test_without_a_key_the_dashboard_asks_for_one(keyed):
    anon = httpx.Client(base_url=keyed, timeout=30)
    page = anon.get("/").text
    assert 'action="/dashboard/login"' in page and 'id="sessions"' not in page
    assert anon.get("/dashboard/events").status_code == 401
    assert anon.post("/dashboard/login", data={"api_key": "wrong"}).status_code == 401
    elsewhere = {"Origin": "http://evil.example"}
    login = anon.post("/dashboard/login", data={"api_key": KEY_A}, headers=elsewhere)
    assert login.status_code == 401 and "set-cookie" not in login.headers
    anon.cookies.set("palaestra_dashboard", "W10=.forged")
    assert anon.get("/dashboard/events").status_code == 401
    # a key header works as for the API, without the cookie
    assert 'id="sessions"' in anon.get("/", headers={"X-API-Key": KEY_B}).text


def test_a_rows_last_event_skips_a_torn_line_and_reads_past_a_large_observation(tmp_path):
    step = {
        "type": "step",
        "action": {"name": "click", "args": {"bid": "12"}},
        "observation": {"axtree": "x" * 20_000, "screen": {"__file__": "images/e1_s3.png"}},
        "info": {"verifier": {"error": "no answer"}},
    }
    path = tmp_path / "events.jsonl"
    reset = orjson.dumps({"type": "reset", "observation": {}})
    path.write_bytes(reset + b"\n" + orjson.dumps(step) + b'\n{"type":"step","act')
    event = live.last_event(str(path))
    assert event["action"]["args"] == {"bid": "12"}
    assert live.first_image(event["observation"]) == "e1_s3.png"
    assert live.step_error(event) == "no answer"
    assert live.last_event(str(tmp_path / "absent.jsonl")) is None


def test_an_episode_the_agent_broke_is_shown_unfinished(gateway, tmp_path):
    """A run whose agent raised has no ended episode: the front page links its sessions, the
    viewer says the episode did not end and where the evaluation's report is."""
    from palaestra.evals import EvalConfig, read_results, run_eval

    agent = "tests.evals.test_runner:CrashingAgent"
    cfg = EvalConfig(suite="faulty", agent=agent, url=gateway, out=tmp_path, run="dash-crash")
    run_eval(cfg)
    (r,) = read_results(tmp_path)
    http = httpx.Client(base_url=gateway, timeout=30)
    front = http.get("/").text
    assert (
        "stopped mid-episode" in front
        and f"/dashboard/runs/dash-crash/sessions/{r.session_id}" in front
    )
    viewer = http.get(f"/dashboard/runs/dash-crash/sessions/{r.session_id}").text
    assert 'id="unfinished"' in viewer and f"{tmp_path}/report.md" in viewer


def test_a_gateway_evals_error_and_traceback_reach_the_viewer(tmp_path):
    """An eval job's model endpoint that fails mid-episode: the viewer of the recorded
    session shows the error as the job recorded it (kind, message), not the agent's failure."""
    from tests.llm_stub import Stub

    calls = []

    def answer(messages):
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("the model server fell over")  # the connection drops
        return "ok()"

    stub = Stub(answer)
    settings = Settings(
        workers=1, runs_dir=tmp_path / "runs", jobs_db=tmp_path / "jobs.db",
        evals_dir=tmp_path / "evals", llm_url=stub.url,
        outbound_allow=[stub.url.rsplit("/v1", 1)[0]],
    )  # fmt: skip
    try:
        with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=60) as http:
            body = {"suite": "faulty", "agent": "openai:m", "agent_options": {"max_retries": 0}}
            job_id = http.post("/v1/evals", json=body).json()["job_id"]
            for _ in range(600):
                job = http.get(f"/v1/evals/{job_id}").json()
                if job["status"] not in ("queued", "running"):
                    break
                time.sleep(0.1)
            assert job["summary"]["errors"] == 1, job
            (ep,) = http.get(f"/v1/evals/{job_id}/results").json()["episodes"]
            viewer = http.get(f"/dashboard/runs/eval-{job_id}/sessions/{ep['session_id']}").text
            assert 'id="eval-error"' in viewer and "Error (model)" in viewer
            assert "failed after 1 tries" in viewer
    finally:
        stub.close()
