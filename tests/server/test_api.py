"""The HTTP API against a real gateway with real worker processes."""

import httpx
import numpy as np
import pytest

from palaestra.client import Client
from tests.conftest import BENCH_ENV, FAULTY_ENV

PROBLEM = "application/problem+json"


@pytest.fixture
def http(gateway):
    with httpx.Client(base_url=gateway, timeout=30) as client:
        yield client


def _session(http, **body):
    r = http.post("/v1/sessions", json=body or {"env": BENCH_ENV})
    assert r.status_code == 201, r.text
    return r.json()["session_id"]


def test_health_envs_suites(http):
    health = http.get("/v1/health").json()
    assert health["status"] == "ok" and len(health["workers"]) == 2
    assert all(w["alive"] and w["pid"] for w in health["workers"])
    envs = {e["id"]: e for e in http.get("/v1/envs").json()["envs"]}
    assert envs[BENCH_ENV]["fixture"] and "add(n)" in envs[BENCH_ENV]["actions"]
    detail = http.get(f"/v1/envs/{BENCH_ENV}").json()
    assert detail["tools"][0]["function"]["name"] == "add"
    suites = {s["name"]: s for s in http.get("/v1/suites").json()["suites"]}
    assert suites["palaestra-bench"]["tasks"] == 3
    listed = http.get("/v1/suites/palaestra-bench/tasks").json()["tasks"]
    assert listed and all("oracle" not in t and "verifier" not in t for t in listed)


def test_full_episode_over_rest(http):
    sid = _session(http, task="palaestra-bench/count-to-3")
    reset = http.post(f"/v1/sessions/{sid}/reset", json={"seed": 1}).json()
    assert reset["observation"]["count"] == 0 and "oracle" not in reset["info"]["task"]
    step = http.post(f"/v1/sessions/{sid}/step", json={"action": "add(3)"}).json()
    assert step["observation"]["count"] == 3 and step["reward"] == 0.0
    end = http.post(
        f"/v1/sessions/{sid}/step", json={"action": {"name": "done", "args": {}}}
    ).json()
    assert end["terminated"] and end["reward"] == 1.0
    assert end["info"]["verifier"] == {"score": 1.0, "success": True, "error": None}
    assert "privileged" not in end and "checks" not in end["info"]["verifier"]
    assert http.delete(f"/v1/sessions/{sid}").status_code == 204


def test_reset_with_an_empty_body_and_screenshot(http):
    sid = _session(http, env=FAULTY_ENV)
    assert http.post(f"/v1/sessions/{sid}/reset").status_code == 200
    r = http.get(f"/v1/sessions/{sid}/screenshot")
    assert r.headers["content-type"] == "image/png"
    img = Client(str(http.base_url)).screenshot(sid)
    assert img.shape == (8, 8, 3) and tuple(img[0, 0]) == (1, 2, 3)
    http.delete(f"/v1/sessions/{sid}")


def test_image_observations_travel_as_png_with_shape(http):
    sid = _session(http, env=FAULTY_ENV, options={"image_format": "png"})
    obs = http.post(f"/v1/sessions/{sid}/reset", json={}).json()["observation"]
    assert obs["screen"]["__image__"] == "png" and obs["screen"]["shape"] == [8, 8, 3]
    http.delete(f"/v1/sessions/{sid}")


def test_dashboard_and_metrics(http):
    page = http.get("/")
    assert page.status_code == 200 and BENCH_ENV in page.text
    metrics = http.get("/metrics").text
    assert "palaestra_steps_total" in metrics and "palaestra_sessions_active" in metrics


def test_recordings_are_listed_per_owner_without_verifier_internals(http):
    sid = _session(http, task="palaestra-bench/count-to-3")
    http.post(f"/v1/sessions/{sid}/reset", json={})
    http.post(f"/v1/sessions/{sid}/step", json={"action": "add(3)"})
    http.post(f"/v1/sessions/{sid}/step", json={"action": "done()"})
    runs = http.get("/v1/runs").json()["runs"]
    run_id = next(r["run_id"] for r in runs if sid in r["sessions"])
    events = http.get(f"/v1/runs/{run_id}/sessions/{sid}").json()["events"]
    assert [e["type"] for e in events] == ["reset", "step", "step"]
    assert events[-1]["verifier"] == {"score": 1.0, "success": True, "error": None}
    assert http.get(f"/v1/runs/{run_id}/sessions/..").status_code == 404


def test_observation_decodes_to_numpy(gateway):
    client = Client(gateway)
    sid = client.create_session(FAULTY_ENV)["session_id"]
    from palaestra import codec

    obs = codec.decode(client.reset(sid)["observation"])
    assert isinstance(obs["screen"], np.ndarray) and obs["screen"].dtype == np.uint8
    client.close_session(sid)
    client.close()


def test_env_detail_includes_default_spaces(http):
    detail = http.get(f"/v1/envs/{BENCH_ENV}").json()
    assert detail["spaces"]["observation"]["type"] == "Dict"
    assert detail["spaces"]["action"]["type"] == "ActionSpace"
    assert http.get("/v1/envs/nope/none-v0").status_code == 404
