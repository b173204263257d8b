"""Fixtures of the OpenEnv tests: the side venv with the real ``openenv`` release, a keyed
gateway, and one run of OpenEnv's own clients (``driver.py``) shared by the module's tests."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
OPENENV_PYTHON = ROOT / ".venv-openenv" / "bin" / "python"
DRIVER = Path(__file__).with_name("driver.py")
KEY = "openenv-test-key"
#: the targets the driver plays, loaded once before it connects: a suite's first load can take
#: longer than OpenEnv's 20 s keepalive ping on two busy cores
TARGETS = ("miniwob/click-button", "computer-basic/make-project-dir", "faulty/count-3")
#: families whose first task (through the Task API, as a trainer finds it) is played
FIRST_TASK_OF = {
    "usersim": ("palaestra/usersim-v0", "usersim"),
    "cad": ("palaestra/cad-v0", "cad-parts"),
}


@pytest.fixture(scope="session")
def openenv_python() -> Path:
    if not OPENENV_PYTHON.exists():
        pytest.fail(".venv-openenv is missing: run `make setup` (scripts/setup-openenv.sh)")
    return OPENENV_PYTHON


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(
        workers=1, runs_dir=tmp_path_factory.mktemp("runs"), api_keys=[KEY], record=False
    )
    with gateway_thread(settings) as url:
        yield url


@pytest.fixture(scope="module")
def driven(gateway: str, keyed: str, openenv_python: Path) -> dict[str, Any]:
    """Every scenario of driver.py, run once by the side venv's python."""
    refs = {}
    for fam, (env, suite) in FIRST_TASK_OF.items():
        url = f"{gateway}/openenv/{env}/{suite}/task"
        got = httpx.post(url, json={"split": "test", "index": 0}, timeout=300)
        # the Task API is what a trainer uses to find a task: it must answer (a suite with no
        # validated task, e.g. a stale record, fails here rather than testing the bare env)
        assert got.status_code == 200, f"{url}: {got.status_code} {got.text[:500]}"
        refs[fam] = got.json()["task"]["ref"]
    for target in (*TARGETS, *refs.values()):
        httpx.get(f"{gateway}/openenv/{target}/health", timeout=300).raise_for_status()
    _warm_workers(
        gateway, [r for r in refs.values() if "/" in r and not r.startswith("palaestra/")]
    )
    done = subprocess.run(
        [str(openenv_python), str(DRIVER), gateway, keyed, KEY, json.dumps(refs)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results: dict[str, Any] = json.loads(done.stdout)
    return results


def _warm_workers(gateway: str, refs: list[str]) -> None:
    """Load each task's suite on every worker (a session per worker, then closed): a cold
    usersim or CAD suite can take minutes on two busy cores, past the gateway's create
    timeout; a timed-out load still finishes on its worker, so it is tried again."""
    with httpx.Client(base_url=gateway, timeout=300) as http:
        for ref in refs:
            for _ in range(3):
                made = http.post("/v1/pools", json={"task": ref, "size": 2})
                if made.status_code == 201:
                    http.delete(f"/v1/pools/{made.json()['pool_id']}")
                    break


def scenario(driven: dict[str, Any], name: str) -> dict[str, Any]:
    got = driven[name]
    assert "error" not in got, got.get("trace", got["error"])
    return got
