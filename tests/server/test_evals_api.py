"""``POST /v1/evals``: built-in agents over a suite, run by the real gateway (``server/evals.py``).

The shared session gateway (conftest) runs the jobs; the runner is the real one
(:mod:`palaestra.evals`), its sessions the gateway's own workers.
"""

from __future__ import annotations

import time

import httpx
import pytest

from palaestra.client import Client
from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings
from tests.llm_stub import Stub

PROBLEM = "application/problem+json"
MINIWOB = ["click-button", "click-test"]


@pytest.fixture
def http(gateway):
    with httpx.Client(base_url=gateway, timeout=180) as client:
        yield client


def _wait(http: httpx.Client, job_id: str, timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = http.get(f"/v1/evals/{job_id}").json()
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"eval job {job_id} did not finish: {job}")


@pytest.mark.browser
def test_oracle_on_two_miniwob_tasks_through_the_gateway(gateway):
    seen: list[dict] = []
    with Client(gateway) as client:
        job = client.evaluate(
            "miniwob", "oracle", tasks=MINIWOB, parallel=2, poll_s=0.1, on_progress=seen.append
        )
        assert job["status"] == "succeeded", job
        summary = job["summary"]
        assert summary["episodes"] == 2 and summary["success_rate"] == 1.0
        assert summary["errors"] == 0 and summary["suite"] == "miniwob"
        assert seen and seen[-1]["phase"] == "succeeded" and seen[-1]["done"] == 2
        results = client.eval_results(job["job_id"])
        assert results["total"] == 2 and results["summary"] == summary
        assert sorted(e["task"] for e in results["episodes"]) == MINIWOB
        assert all(e["success"] and e["status"] == "ok" for e in results["episodes"])
        # the oracle's episodes are the job's own: no session ids, no trajectories, nothing
        # of them in the caller's sessions or recordings
        assert all("session_id" not in e and "trajectory" not in e for e in results["episodes"])
        assert job["job_id"] in {j["job_id"] for j in client.eval_jobs()}
        assert client.eval_job(job["job_id"])["status"] == "succeeded"


def _recorded(http: httpx.Client) -> set[str]:
    return {sid for run in http.get("/v1/runs").json()["runs"] for sid in run.get("sessions", [])}


def test_the_oracles_sessions_are_private_to_the_job(http):
    """While an oracle job runs, the caller cannot list its sessions; none is recorded."""
    before = {s["session_id"] for s in http.get("/v1/sessions").json()["sessions"]}
    recorded = _recorded(http)
    body = {"suite": "faulty", "agent": "oracle", "seeds": list(range(30)), "parallel": 2}
    job_id = http.post("/v1/evals", json=body).json()["job_id"]
    deadline = time.monotonic() + 180
    while http.get(f"/v1/evals/{job_id}").json()["progress"].get("done", 0) < 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    during = {s["session_id"] for s in http.get("/v1/sessions").json()["sessions"]}
    assert during <= before
    done = _wait(http, job_id)
    assert done["status"] == "succeeded" and done["summary"]["success_rate"] == 1.0
    assert _recorded(http) == recorded


def test_cancel_keeps_what_finished_and_resume_continues(http):
    body = {"suite": "faulty", "agent": "oracle", "seeds": list(range(200)), "parallel": 1}
    job_id = http.post("/v1/evals", json=body).json()["job_id"]
    deadline = time.monotonic() + 180
    while http.get(f"/v1/evals/{job_id}").json()["progress"].get("done", 0) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    cancelled = http.post(f"/v1/evals/{job_id}/cancel")
    assert cancelled.status_code == 202, cancelled.text
    job = _wait(http, job_id)  # the answer waits for the job to stop (up to 30 s)
    assert job["status"] == "cancelled" and job["error"] == "cancelled by its owner"
    kept = http.get(f"/v1/evals/{job_id}/results").json()["total"]
    assert 2 <= kept < 200
    assert http.post(f"/v1/evals/{job_id}/cancel").json()["status"] == "cancelled"  # idempotent
    assert http.post(f"/v1/evals/{job_id}/resume").status_code == 202
    done = _wait(http, job_id)
    assert done["status"] == "succeeded" and done["summary"]["episodes"] == 200, done
    page = http.get(f"/v1/evals/{job_id}/results", params={"offset": 190, "limit": 50}).json()
    assert page["total"] == 200 and len(page["episodes"]) == 10


def _problem(r: httpx.Response, status: int) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    return r.json()


def test_bad_requests_name_the_field_and_what_exists(http):
    before = len(http.get("/v1/evals").json()["jobs"])
    good = {"suite": "faulty", "agent": "oracle"}
    cases = [
        ({**good, "suite": "nope"}, "suite", ["miniwob", "phone"]),
        ({**good, "agent": "gpt"}, "agent", ["oracle", "random", "noop", "openai:MODEL"]),
        ({**good, "agent": "competent"}, "agent", ["oracle"]),
        ({**good, "agent": "module:Class"}, "agent", ["oracle"]),
        ({**good, "agent": "http://127.0.0.1:1/agent"}, "agent", ["oracle"]),
        # no model endpoint configured by this gateway's operator
        ({**good, "agent": "openai:gpt-4o"}, "agent", ["PALAESTRA_LLM_URL"]),
        ({**good, "tasks": ["count-3", "nope"]}, "tasks", ["'nope'", "count-3"]),
        ({**good, "agent_options": {"temperature": 0}}, "agent_options", []),
        (
            {**good, "agent": "openai:m", "agent_options": {"base_url": "http://evil"}},
            "agent_options",
            ["base_url", "operator"],
        ),
        ({**good, "seeds": [1, 1]}, "seeds", ["unique"]),
        ({**good, "seeds": [-1]}, "seeds.0", []),
        ({**good, "parallel": 0}, "parallel", []),
        ({**good, "url": "http://elsewhere"}, "url", []),
        ({**good, "out": "/etc"}, "out", []),
        ({"agent": "oracle"}, "suite", []),
    ]
    for body, field, words in cases:
        problem = _problem(http.post("/v1/evals", json=body), 422)
        assert problem["field"] == field, (body, problem)
        for word in words:
            assert word in problem["detail"], (body, problem)
    assert len(http.get("/v1/evals").json()["jobs"]) == before


def test_unknown_jobs_are_404(http):
    for path in ("/v1/evals/0123456789ab", "/v1/evals/0123456789ab/results"):
        assert "0123456789ab" in _problem(http.get(path), 404)["detail"]
    for verb in ("cancel", "resume"):
        _problem(http.post(f"/v1/evals/0123456789ab/{verb}"), 404)


def test_a_model_agent_uses_the_operators_endpoint_and_key(tmp_path, runs_dir):
    """``openai:MODEL`` talks to the operator's ``llm_url`` with the operator's key; the client
    names only the model, and the key is written nowhere (job, results, the run's folder)."""
    secret = "sk-operator-0123456789"
    stub = Stub(lambda messages: "finish()")
    settings = Settings(
        workers=1,
        runs_dir=runs_dir,
        record=False,
        llm_url=stub.url,
        llm_key=secret,
        outbound_allow=[stub.url.rsplit("/v1", 1)[0]],
        jobs_db=tmp_path / "jobs.sqlite3",
        evals_dir=tmp_path / "evals",
    )
    try:
        with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=180) as http:
            body = {"suite": "faulty", "agent": "openai:tiny-model", "seeds": [0, 1]}
            body["agent_options"] = {"temperature": 0.5, "screenshots": False}
            made = http.post("/v1/evals", json=body)
            assert made.status_code == 202, made.text
            job = _wait(http, made.json()["job_id"])
            assert job["status"] == "succeeded", job
            summary = job["summary"]
            assert summary["episodes"] == 2 and summary["errors"] == 0
            assert summary["success_rate"] == 0.0  # it finished at once: scored, and failed
            results = http.get(f"/v1/evals/{job['job_id']}/results").text
            assert stub.requests, "the model endpoint was never called"
            for path, auth, request in stub.requests:
                assert path == "/v1/chat/completions" and auth == f"Bearer {secret}"
                assert request["model"] == "tiny-model" and request["temperature"] == 0.5
            shown = [made.text, http.get(f"/v1/evals/{job['job_id']}").text, results]
            files = (tmp_path / "evals").rglob("*")
            written = [p.read_bytes().decode("latin-1") for p in files if p.is_file()]
            assert written and not any(secret in text for text in shown + written)
    finally:
        stub.close()
