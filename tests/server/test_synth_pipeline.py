"""The real synthesis pipeline behind the gateway: a job makes a suite a session can use.

Kept apart from ``test_synth_jobs.py``, whose module puts a fake pipeline on its children's
import path.
"""

from __future__ import annotations

import os

import pytest

from palaestra import tasks
from palaestra.client import Client
from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900)]


def test_synthesized_suite_serves_a_session(tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv(tasks.SUITE_PATH_VAR, os.environ.get(tasks.SUITE_PATH_VAR, ""))
    settings = Settings(workers=1, runs_dir=runs_dir, record=False, suites_dir=tmp_path)
    with gateway_thread(settings) as url, Client(url) as client:
        job = client.synth(["train"], variants=1, tasks=6, name="real-train", timeout=840)
        assert job["status"] == "succeeded", job["error"]
        report = job["report"]
        assert report["suite"] == "real-train" and report["generated"] >= report["validated"] > 0
        assert (tmp_path / "real-train" / "report.json").exists()
        listed = {s["name"]: s for s in client.suites()}
        assert listed["real-train"]["tasks"] == report["validated"]
        task = client.tasks("real-train")[0]
        assert task["env"] and "oracle" not in task
        sid = client.create_session(task=f"real-train/{task['id']}")["session_id"]
        try:
            reset = client.reset(sid, seed=0)
            # the agent's goal is the task's own instruction, on the synthesized app's page
            assert reset["observation"]["goal"] == task["instruction"] != ""
            assert reset["observation"]["url"].startswith("http://127.0.0.1:")
        finally:
            client.close_session(sid)
