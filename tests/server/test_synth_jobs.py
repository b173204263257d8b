"""Synthesis jobs (``POST /v1/synth/jobs``) and the ``palaestra synth`` command: both drive the
pipeline's Python API (:func:`palaestra.synthesis.pipeline.synthesize`); a job runs it in a
process of its own.

The real pipeline drives browsers for minutes, so these tests put ``tests.fake_synth`` in its
place, in this process (the CLI tests) and in the job's child process (a ``sitecustomize`` on
the import path the gateway hands to its children). The real pipeline runs in
``test_synth_pipeline.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from palaestra import tasks
from palaestra.cli import app as cli_app
from palaestra.client import AsyncClient, Client
from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings
from palaestra.synth_apps.spec import domain_names
from tests import fake_synth

PROBLEM = "application/problem+json"
KEY_A, KEY_B = "synth-key-a", "synth-key-b"


# ----- the command line -------------------------------------------------------------------
@pytest.fixture
def fake_pipeline(monkeypatch):
    monkeypatch.setitem(sys.modules, "palaestra.synthesis.pipeline", fake_synth)
    # once the real module was imported, ``from palaestra.synthesis import pipeline`` reads
    # the package's attribute, not sys.modules
    import palaestra.synthesis

    monkeypatch.setattr(palaestra.synthesis, "pipeline", fake_synth, raising=False)
    fake_synth.CALLS.clear()
    return fake_synth


def _synth(*args):
    return CliRunner().invoke(cli_app, ["synth", *args])


def test_cli_json_progress_ends_with_the_report(fake_pipeline, tmp_path):
    out = tmp_path / "s"
    r = _synth(
        "-d", "train", "--variants", "1", "--tasks", "6", "--out", str(out), "--json-progress"
    )
    assert r.exit_code == 0, r.output
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert [x["event"] for x in lines[:-1]] == ["progress"] * 6
    assert lines[-2] == {
        "event": "progress",
        "phase": "validate",
        "done": 6,
        "total": 6,
        "validated": 4,
        "dropped": 2,
    }
    report = lines[-1]
    assert report["event"] == "report" and report["validated"] == 4
    assert report["dropped"] == {"oracle_failed": 2} and report["out"] == str(out)
    assert (out / "suite.json").exists() and len(list((out / "tasks").glob("*.json"))) == 4


def test_cli_summary_table(fake_pipeline, tmp_path):
    args = ["-d", "train", "--variants", "2", "--tasks", "3", "--out", str(tmp_path / "s")]
    r = _synth(*args, "--name", "mine", "--layout", "mobile", "--layout", "desktop")
    assert r.exit_code == 0, r.output
    for text in ("generated", "validated", "oracle_failed", "tasks per minute", "time per task"):
        assert text in r.stdout
    call = fake_pipeline.CALLS[-1]
    assert call["variants"] == 2 and call["layouts"] == ("mobile", "desktop")
    assert json.loads((tmp_path / "s" / "suite.json").read_text())["name"] == "mine"


def test_cli_family_mobile_and_a_bad_family(fake_pipeline, tmp_path):
    args = ["-d", "train", "--variants", "1", "--tasks", "1", "--out", str(tmp_path / "s")]
    assert _synth(*args, "--family", "mobile").exit_code == 0
    assert fake_pipeline.CALLS[-1]["family"] == "mobile"
    bad = _synth(*args, "--family", "tablet")
    assert bad.exit_code == 2 and "--family must be web or mobile" in bad.output


def test_cli_all_domains(fake_pipeline, tmp_path):
    r = _synth(
        "-d", "all", "-d", "train", "--variants", "1", "--tasks", "1", "--out", str(tmp_path)
    )
    assert r.exit_code == 0, r.output
    assert fake_pipeline.CALLS[-1]["domains"] == domain_names()


@pytest.mark.parametrize("json_progress", [False, True])
def test_cli_unknown_domain_is_a_clean_error(fake_pipeline, tmp_path, json_progress):
    extra = ["--json-progress"] if json_progress else []
    r = _synth("-d", "nope", "--variants", "1", "--tasks", "1", "--out", str(tmp_path), *extra)
    assert r.exit_code == 2
    assert "unknown domain 'nope'" in r.output and "Traceback" not in r.output
    assert not fake_pipeline.CALLS
    if json_progress:
        assert json.loads(r.stdout.splitlines()[-1])["event"] == "error"


def test_cli_spec_error_and_crash(fake_pipeline, tmp_path, monkeypatch):
    real = fake_synth.synthesize

    def bad_spec(*args, **kwargs):
        raise fake_synth.SpecError("entities.trip: unknown field 'x'")

    monkeypatch.setattr(fake_synth, "synthesize", bad_spec)
    args = ["-d", "train", "--variants", "1", "--tasks", "1", "--out", str(tmp_path)]
    r = _synth(*args)
    assert r.exit_code == 2 and "unknown field 'x'" in r.output and "Traceback" not in r.output
    monkeypatch.setattr(fake_synth, "synthesize", real)
    monkeypatch.setenv("FAKE_SYNTH_FAIL", "1")
    r = _synth(*args, "--json-progress")
    assert r.exit_code == 1
    assert json.loads(r.stdout.splitlines()[-1]) == {
        "event": "error",
        "error": "RuntimeError: the fake pipeline exploded",
    }


def test_cli_bad_numbers(fake_pipeline, tmp_path):
    r = _synth("-d", "train", "--variants", "0", "--tasks", "1", "--out", str(tmp_path))
    assert r.exit_code == 2 and "--variants" in r.output
    r = _synth(
        "-d", "train", "--variants", "1", "--tasks", "1", "--out", str(tmp_path), "--layout", "tv"
    )
    assert r.exit_code == 2 and "--layout" in r.output


# ----- the gateway ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def synth_gateway(tmp_path_factory, runs_dir):
    """A gateway whose synthesis jobs run the fake pipeline.

    The variable the gateway extends is restored afterwards, so later tests (and the shared
    gateway's workers) do not see this module's suites.
    """
    site = tmp_path_factory.mktemp("fake-site")
    (site / "sitecustomize.py").write_text("import tests.fake_synth\ntests.fake_synth.install()\n")
    suites = tmp_path_factory.mktemp("suites")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(tasks.SUITE_PATH_VAR, os.environ.get(tasks.SUITE_PATH_VAR, ""))
        mp.syspath_prepend(str(site))
        settings = Settings(
            workers=1,
            runs_dir=runs_dir,
            record=False,
            suites_dir=suites,
            api_keys=[KEY_A, KEY_B],
            synth_jobs=1,
        )
        with gateway_thread(settings) as url:
            yield url, suites


@pytest.fixture
def client_a(synth_gateway):
    with Client(synth_gateway[0], api_key=KEY_A) as client:
        yield client


@pytest.fixture
def http(synth_gateway):
    headers = {"Authorization": f"Bearer {KEY_A}"}
    with httpx.Client(base_url=synth_gateway[0], headers=headers, timeout=30) as client:
        yield client


def _problem(r, status):
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    return r.json()


def _wait(http, job_id, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = http.get(f"/v1/synth/jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish: {job}")


def test_job_makes_a_suite_that_sessions_use_at_once(client_a, synth_gateway):
    _, suites = synth_gateway
    seen = []
    job = client_a.synth(
        ["train"], variants=1, tasks=6, name="fake-a", poll_s=0.05, on_progress=seen.append
    )
    assert job["status"] == "succeeded", job
    assert job["suite"] == "fake-a" and job["error"] is None
    assert job["report"]["validated"] == 4 and job["report"]["dropped"] == {"oracle_failed": 2}
    assert job["progress"]["phase"] == "succeeded" and job["progress"]["done"] == 6
    assert seen and seen[-1] == job["progress"]
    assert sorted(p.name for p in suites.iterdir()) == ["fake-a"]  # no staging folder left
    assert (suites / "fake-a" / "report.json").exists()

    listed = {s["name"]: s for s in client_a.suites()}
    assert listed["fake-a"]["tasks"] == 4
    task_ids = [t["id"] for t in client_a.tasks("fake-a")]
    assert "count-0" in task_ids
    # the worker started before the suite existed, and finds it too
    sid = client_a.create_session(task="fake-a/count-0")["session_id"]
    assert client_a.reset(sid, seed=0)["observation"]["count"] == 0
    client_a.step(sid, "add(1)")
    end = client_a.step(sid, "done()")
    assert end["terminated"] and end["reward"] == 1.0
    client_a.close_session(sid)


def test_default_name_all_domains_and_listing(client_a, http):
    job = client_a.synth("all", variants=1, tasks=1, poll_s=0.05)
    assert job["status"] == "succeeded", job
    assert job["suite"] == f"synth-{job['job_id']}"
    assert job["request"]["domains"] == domain_names()
    assert job["job_id"] in {j["job_id"] for j in client_a.synth_jobs()}


def test_bad_requests_name_the_field(http):
    jobs_before = len(http.get("/v1/synth/jobs").json()["jobs"])
    good = {"domains": ["train"], "variants": 1, "tasks": 1}
    cases = [
        ({**good, "domains": ["nope"]}, "domains", "unknown domain 'nope'"),
        ({**good, "domains": []}, "domains", ""),
        ({**good, "name": "Bad Name"}, "name", ""),
        ({**good, "name": "-x"}, "name", ""),
        ({**good, "tasks": 5001}, "tasks", ""),
        ({**good, "tasks": 0}, "tasks", ""),
        ({**good, "variants": 51}, "variants", ""),
        ({**good, "layouts": ["tv"]}, "layouts.0", ""),
        ({**good, "colour": "red"}, "colour", ""),
        ({"domains": ["train"], "tasks": 1}, "variants", ""),
    ]
    for body, field, text in cases:
        problem = _problem(http.post("/v1/synth/jobs", json=body), 422)
        assert problem["field"] == field, (body, problem)
        assert text in problem["detail"]
    assert len(http.get("/v1/synth/jobs").json()["jobs"]) == jobs_before


def test_jobs_belong_to_their_key(client_a, synth_gateway):
    job = client_a.synth(["train"], variants=1, tasks=1, poll_s=0.05)
    with Client(synth_gateway[0], api_key=KEY_B) as b:
        with pytest.raises(Exception) as err:
            b.synth_job(job["job_id"])
        assert type(err.value).__name__ == "JobNotFound" and err.value.status == 404
        assert job["job_id"] not in {j["job_id"] for j in b.synth_jobs()}
    r = httpx.get(f"{synth_gateway[0]}/v1/synth/jobs/{job['job_id']}")
    assert r.status_code == 401


def test_unknown_job(http):
    problem = _problem(http.get("/v1/synth/jobs/0123456789ab"), 404)
    assert "0123456789ab" in problem["detail"]


def test_taken_names_conflict(client_a, http):
    client_a.synth(["train"], variants=1, tasks=1, name="fake-taken", poll_s=0.05)
    body = {"domains": ["train"], "variants": 1, "tasks": 1}
    for name in ("fake-taken", "palaestra-bench"):
        problem = _problem(http.post("/v1/synth/jobs", json={**body, "name": name}), 409)
        assert problem["field"] == "name" and name in problem["detail"]


def test_one_job_at_a_time_then_429(http, monkeypatch):
    monkeypatch.setenv("FAKE_SYNTH_DELAY", "0.15")
    body = {"domains": ["train"], "variants": 1, "tasks": 12}
    r = http.post("/v1/synth/jobs", json=body)
    assert r.status_code == 202, r.text
    job = r.json()
    assert r.headers["location"] == f"/v1/synth/jobs/{job['job_id']}"
    assert job["status"] in ("queued", "running") and job["suite"] is None
    busy = _problem(http.post("/v1/synth/jobs", json=body), 429)
    assert int(http.post("/v1/synth/jobs", json=body).headers["retry-after"]) > 0
    assert "at most 1" in busy["detail"]
    deadline = time.monotonic() + 10
    progress = None
    while time.monotonic() < deadline and not progress:
        running = http.get(f"/v1/synth/jobs/{job['job_id']}").json()
        if running["status"] == "running" and running["progress"]["phase"] == "validate":
            progress = running["progress"]
        time.sleep(0.05)
    assert progress and 0 < progress["done"] <= progress["total"] == 12
    assert _wait(http, job["job_id"])["status"] == "succeeded"
    r = http.post("/v1/synth/jobs", json={**body, "tasks": 1})
    assert r.status_code == 202, r.text
    assert _wait(http, r.json()["job_id"])["status"] == "succeeded"


def test_async_client_waits_for_a_job_and_gives_up_at_its_timeout(synth_gateway, http, monkeypatch):
    async def go() -> None:
        async with AsyncClient(synth_gateway[0], api_key=KEY_A) as client:
            seen: list = []
            job = await client.synth(
                ["train"],
                variants=1,
                tasks=3,
                name="fake-async",
                poll_s=0.05,
                on_progress=seen.append,
            )
            assert job["status"] == "succeeded" and job["report"]["validated"] == 2
            assert seen and seen[-1] == job["progress"]
            monkeypatch.setenv("FAKE_SYNTH_DELAY", "0.2")
            with pytest.raises(TimeoutError, match=r"is still (queued|running) after 0.3 s"):
                await client.synth(["train"], variants=1, tasks=12, poll_s=0.05, timeout=0.3)

    asyncio.run(go())
    jobs = http.get("/v1/synth/jobs").json()["jobs"]
    running = [j for j in jobs if j["status"] in ("queued", "running")]
    assert len(running) == 1  # a client's timeout leaves the job running on the gateway
    assert _wait(http, running[0]["job_id"])["status"] == "succeeded"


def test_a_failing_job_reports_why_and_leaves_nothing(http, monkeypatch, synth_gateway):
    _, suites = synth_gateway
    before = sorted(p.name for p in suites.iterdir())
    monkeypatch.setenv("FAKE_SYNTH_FAIL", "1")
    body = {"domains": ["train"], "variants": 1, "tasks": 2, "name": "fake-fails"}
    job = _wait(http, http.post("/v1/synth/jobs", json=body).json()["job_id"])
    assert job["status"] == "failed" and job["suite"] is None
    assert job["error"] == "RuntimeError: the fake pipeline exploded"
    assert sorted(p.name for p in suites.iterdir()) == before
    assert "fake-fails" not in {s["name"] for s in http.get("/v1/suites").json()["suites"]}


def test_cancel_then_resume_runs_the_job_again(http, monkeypatch, synth_gateway):
    """Jobs live in the gateway's job store: a cancelled (or interrupted) job resumes under
    its id and makes its suite; nothing is left of the cancelled run."""
    _, suites = synth_gateway
    monkeypatch.setenv("FAKE_SYNTH_DELAY", "0.2")
    body = {"domains": ["train"], "variants": 1, "tasks": 30, "name": "fake-resumed"}
    job_id = http.post("/v1/synth/jobs", json=body).json()["job_id"]
    deadline = time.monotonic() + 30
    while http.get(f"/v1/synth/jobs/{job_id}").json()["progress"].get("done", 0) < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    job = http.post(f"/v1/synth/jobs/{job_id}/cancel").json()
    assert job["status"] == "cancelled" and job["suite"] is None, job
    assert not any(p.name.startswith(".fake-resumed") for p in suites.iterdir())
    monkeypatch.setenv("FAKE_SYNTH_DELAY", "0")
    resumed = http.post(f"/v1/synth/jobs/{job_id}/resume")
    assert resumed.status_code == 202 and resumed.json()["job_id"] == job_id
    done = _wait(http, job_id)
    assert done["status"] == "succeeded" and done["suite"] == "fake-resumed" and done["runs"] == 2
    assert _problem(http.post(f"/v1/synth/jobs/{job_id}/resume"), 409)["status"] == 409


def _gone(pid: int, timeout: float = 10) -> bool:
    """The process has ended (and is not a zombie left unreaped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_a_job_runs_the_pipeline_in_a_session_of_its_own_without_the_keys(
    http, monkeypatch, tmp_path
):
    """The pipeline runs in a child process (not the gateway's), which leads its own process
    group and does not see the gateway's API keys; cancelling the job stops the browsers it
    started, not only the child."""
    probe = tmp_path / "probe.json"
    monkeypatch.setenv("FAKE_SYNTH_PROBE", str(probe))
    monkeypatch.setenv("FAKE_SYNTH_DELAY", "0.2")
    monkeypatch.setenv("PALAESTRA_API_KEYS", "a-key-the-child-must-not-see")
    body = {"domains": ["train"], "variants": 1, "tasks": 100, "name": "fake-probed"}
    job_id = http.post("/v1/synth/jobs", json=body).json()["job_id"]
    deadline = time.monotonic() + 30
    while not probe.exists() or not probe.read_text():
        assert time.monotonic() < deadline, "the job's process never started"
        time.sleep(0.05)
    seen = json.loads(probe.read_text())
    assert seen["pid"] != os.getpid() and seen["session_leader"]
    assert not seen["api_keys_seen"]
    assert not _gone(seen["browser"], timeout=0.2)
    job = http.post(f"/v1/synth/jobs/{job_id}/cancel").json()
    assert job["status"] == "cancelled", job
    assert _gone(seen["pid"]) and _gone(seen["browser"])


def test_a_crashing_job_process_fails_its_job_not_the_gateway(http, monkeypatch):
    """The interpreter dying under the pipeline (here: SIGKILL) fails that job with a message
    that points to the gateway's log; the gateway goes on serving and running jobs."""
    monkeypatch.setenv("FAKE_SYNTH_FAIL", "crash")
    body = {"domains": ["train"], "variants": 1, "tasks": 3, "name": "fake-crashed"}
    job = _wait(http, http.post("/v1/synth/jobs", json=body).json()["job_id"])
    assert job["status"] == "failed" and job["suite"] is None
    assert job["error"].startswith("the synthesis process exited with status -9")
    assert "correlation_id" in job["error"] and "Traceback" not in job["error"]
    monkeypatch.delenv("FAKE_SYNTH_FAIL")
    assert http.get("/v1/suites").status_code == 200
    r = http.post("/v1/synth/jobs", json={**body, "name": "fake-after"})
    assert _wait(http, r.json()["job_id"])["status"] == "succeeded"


def test_the_gateway_leaves_the_pipeline_to_its_job_processes():
    """The gateway imports the job runner and the events, never the pipeline (browsers, the
    app server, the families): those load in a job's own process."""
    code = (
        "import sys, palaestra.server.app\n"
        "heavy = ('palaestra.synthesis.pipeline', 'palaestra.synth_apps', 'playwright')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
