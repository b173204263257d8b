"""Suite listings: loaded off the event loop, once, and a suite whose optional extra is missing
is listed as unavailable with the reason (as /v1/envs lists such a family), never a 500."""

import itertools
import threading

import httpx
import pytest

from palaestra import tasks
from palaestra.server.catalog import SuiteCatalog, SuiteUnavailable, unavailable
from palaestra.server.settings import Settings, key_digest

PROBLEM = "application/problem+json"
MISSING = "palaestra_test_no_such_extra"
_names = itertools.count()


@pytest.fixture
def http(gateway):
    with httpx.Client(base_url=gateway, timeout=30) as client:
        yield client


@pytest.fixture
def needs_extra(monkeypatch):
    """A registered suite whose loader imports a module that is not installed: its name and
    the threads its loader ran in."""
    name = f"needs-extra-{next(_names)}"  # a gateway remembers a failed name while it is listed
    calls: list[str] = []

    def load():
        calls.append(threading.current_thread().name)
        __import__(MISSING)

    monkeypatch.setattr(tasks, "_SUITES", dict(tasks._SUITES))  # unregistered afterwards
    tasks.register_suite(name, load, "A suite whose extra is not installed")
    return name, calls


def test_a_suite_missing_its_extra_is_listed_unavailable(http, needs_extra):
    name, calls = needs_extra
    r = http.get("/v1/suites")
    assert r.status_code == 200, r.text
    suites = {s["name"]: s for s in r.json()["suites"]}
    broken = suites[name]
    assert "ModuleNotFoundError" in broken["unavailable"] and MISSING in broken["unavailable"]
    assert "tasks" not in broken
    bench = suites["palaestra-bench"]
    assert bench["tasks"] == 3 and "unavailable" not in bench
    # loaded in a worker thread, not in the gateway's event loop, and only once
    assert calls and "palaestra-gateway" not in calls
    assert http.get("/v1/suites").status_code == 200
    assert http.get(f"/v1/suites/{name}/tasks").status_code == 503
    assert len(calls) == 1


def test_using_a_suite_missing_its_extra_is_a_clear_503(http, needs_extra):
    name, _ = needs_extra
    r = http.get(f"/v1/suites/{name}/tasks")
    assert r.status_code == 503, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["type"].endswith("SuiteUnavailable") and body["suite"] == name
    assert MISSING in body["detail"] and MISSING in body["reason"]
    r = http.post("/v1/sessions", json={"task": f"{name}/t1"})
    assert r.status_code == 503 and MISSING in r.json()["detail"], r.text
    # an unknown suite is still a 404
    assert http.get("/v1/suites/no-such-suite/tasks").status_code == 404


def test_the_failure_is_forgotten_when_the_suite_path_changes(needs_extra, monkeypatch, tmp_path):
    name, calls = needs_extra
    catalog = SuiteCatalog()
    for _ in range(2):
        with pytest.raises(SuiteUnavailable):
            catalog.load(name)
    assert len(calls) == 1
    monkeypatch.setenv(tasks.SUITE_PATH_VAR, str(tmp_path))
    with pytest.raises(SuiteUnavailable):
        catalog.load(name)
    assert len(calls) == 2


def test_a_missing_module_of_a_family_names_its_extra():
    reason = unavailable(ModuleNotFoundError("No module named 'build123d'", name="build123d"))
    assert reason.startswith("ModuleNotFoundError: No module named 'build123d'")
    assert "palaestra[cad]" in reason
    assert unavailable(ValueError("bad")) == "ValueError: bad"


def test_settings_come_from_palaestra_variables_below_the_arguments(monkeypatch):
    monkeypatch.setenv("PALAESTRA_API_KEYS", "k1, k2,")
    monkeypatch.setenv("PALAESTRA_WORKERS", "3")
    monkeypatch.setenv("PALAESTRA_PORT", "")  # empty means unset
    monkeypatch.setenv("PALAESTRA_RAY_WORKER_RESOURCES", '{"GPU": 1}')
    settings = Settings.from_env(workers=5, host=None)
    assert settings.api_keys == [key_digest("k1"), key_digest("k2")]  # held hashed
    assert settings.workers == 5
    assert settings.port == 8000 and settings.host == "127.0.0.1"
    assert settings.ray_worker_resources == {"GPU": 1.0}
    assert Settings().workers == 3
