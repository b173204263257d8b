"""The gateway's persistent job store (``server/jobs.py``): real SQLite, real gateways.

A job outlives its gateway: one stopped with the gateway is ``interrupted``, is found by the
next gateway on the same home, and resumes to the end. Jobs belong to their API key.
"""

from __future__ import annotations

import os
import time

import httpx
import pytest

from palaestra.errors import JobNotFound
from palaestra.server.jobs import Job, JobStore
from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings

KEY_A, KEY_B = "jobs-key-a", "jobs-key-b"


# ----- the store ----------------------------------------------------------------------------
def test_store_round_trip_and_owners(tmp_path):
    store = JobStore(tmp_path / "jobs.sqlite3")
    job = store.add(Job("j1", "eval", "alice", {"suite": "s"}, progress={"done": 0}))
    job.status, job.progress, job.result = "running", {"done": 3}, {"success_rate": 1.0}
    store.save(job)
    again = store.get("eval", "alice", "j1")
    assert again.status == "running" and again.progress == {"done": 3}
    assert again.request == {"suite": "s"} and again.result == {"success_rate": 1.0}
    # another owner, or another kind, sees no such job: the same 404 either way
    for kind, owner in (("eval", "bob"), ("synth", "alice")):
        with pytest.raises(JobNotFound):
            store.get(kind, owner, "j1")
    assert [j.id for j in store.owned("eval", "alice")] == ["j1"]
    assert store.owned("eval", "bob") == [] and store.owned("synth", "alice") == []
    store.close()


def test_only_a_dead_stores_jobs_are_interrupted(tmp_path):
    """Two gateways may share a home: the second must not interrupt the first's live jobs, but
    must interrupt those of one that died (its lock released by the OS)."""
    path = tmp_path / "jobs.sqlite3"
    first, second = JobStore(path), JobStore(path)
    job = first.add(Job("j1", "synth", "alice", {}, status="running"))
    assert second.recover() == [] and second.get("synth", "alice", "j1").status == "running"
    first._db.close()  # a crash: the row stays 'running', the holder's lock goes with its fd
    os.close(first._held)
    found = second.recover()
    assert [j.id for j in found] == [job.id]
    after = second.get("synth", "alice", "j1")
    assert after.status == "interrupted" and "resume" in (after.error or "")
    assert list((path.parent / "jobs.sqlite3.holders").iterdir()) == [
        path.parent / "jobs.sqlite3.holders" / f"{second.holder}.lock"
    ]
    second.close()


def test_store_write_cost(tmp_path):
    """A progress update is one small SQLite write, cheap enough for the event loop."""
    store = JobStore(tmp_path / "jobs.sqlite3")
    job = store.add(Job("j1", "eval", "alice", {"suite": "s"}))
    n = 200
    t0 = time.perf_counter()
    for i in range(n):
        job.progress = {"done": i, "total": n}
        store.save(job)
    per_write_ms = (time.perf_counter() - t0) / n * 1000
    t0 = time.perf_counter()
    for _ in range(n):
        store.get("eval", "alice", "j1")
    per_read_ms = (time.perf_counter() - t0) / n * 1000
    print(f"job store: {per_write_ms:.3f} ms a write, {per_read_ms:.3f} ms a read")
    # every write is durable at once (what a restart reads back); its speed is a figure, not
    # an assertion: a busy 2-core machine decides it
    assert store.get("eval", "alice", "j1").progress == {"done": n - 1, "total": n}
    store.close()


# ----- a gateway restart ----------------------------------------------------------------------
def _settings(tmp_path, runs_dir) -> Settings:
    return Settings(
        workers=1,
        runs_dir=runs_dir,
        record=False,
        api_keys=[KEY_A, KEY_B],
        jobs_db=tmp_path / "home" / "jobs.sqlite3",
        evals_dir=tmp_path / "home" / "evals",
        suites_dir=tmp_path / "home" / "suites",
    )


def _client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=180)


def _wait(http: httpx.Client, job_id: str, until, timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = http.get(f"/v1/evals/{job_id}").json()
        if until(job):
            return job
        time.sleep(0.02)
    raise AssertionError(f"job {job_id} never got there: {job}")


def test_a_job_survives_a_restart_and_resumes(tmp_path, runs_dir):
    settings = _settings(tmp_path, runs_dir)
    seeds = list(range(60))  # enough that the job is still running when its gateway stops
    body = {"suite": "faulty", "agent": "oracle", "seeds": seeds, "parallel": 1}
    with gateway_thread(settings) as url, _client(url, KEY_A) as http:
        made = http.post("/v1/evals", json=body)
        assert made.status_code == 202, made.text
        job_id = made.json()["job_id"]
        _wait(http, job_id, lambda j: j["progress"].get("done", 0) >= 2)
    # the gateway stopped with the job running: a new gateway on the same home finds it
    with gateway_thread(settings) as url, _client(url, KEY_A) as http:
        job = http.get(f"/v1/evals/{job_id}").json()
        assert job["status"] == "interrupted", job
        assert "resume" in job["error"] and job["progress"]["done"] < len(seeds)
        finished_before = http.get(f"/v1/evals/{job_id}/results").json()["total"]
        assert finished_before >= 2
        with _client(url, KEY_B) as other:  # another key cannot see it nor resume it
            assert other.get(f"/v1/evals/{job_id}").status_code == 404
            assert other.post(f"/v1/evals/{job_id}/resume").status_code == 404
        resumed = http.post(f"/v1/evals/{job_id}/resume")
        assert resumed.status_code == 202, resumed.text
        done = _wait(http, job_id, lambda j: j["status"] not in ("queued", "running"))
        assert done["status"] == "succeeded" and done["runs"] == 2, done
        assert done["summary"]["episodes"] == len(seeds)
        assert done["summary"]["success_rate"] == 1.0
        results = http.get(f"/v1/evals/{job_id}/results").json()
        assert results["total"] == len(seeds)
        assert sorted(e["seed"] for e in results["episodes"]) == seeds  # none played twice
        again = http.post(f"/v1/evals/{job_id}/resume")  # a finished job does not resume
        assert again.status_code == 409 and "succeeded" in again.json()["detail"]
