"""The gateway shows tasks only as their views: listings, ``?split=`` and reset's ``info``."""

import json

import httpx
import pytest

from palaestra import tasks
from palaestra.client import Client
from palaestra.tasks import PublicMetadata, Task
from tests.conftest import BENCH_ENV


@pytest.fixture
def http(gateway):
    with httpx.Client(base_url=gateway, timeout=60) as client:
        yield client


@pytest.fixture
def split_suite(monkeypatch):
    """An in-process suite whose private metadata holds a kind and a split."""
    made = [
        Task(
            id=f"t{i}",
            family="bench",
            env=BENCH_ENV,
            instruction="Make the counter show 2",
            public=PublicMetadata(difficulty="easy"),
            metadata={"kind": "infeasible" if i % 2 else "operation", "split": split},
        )
        for i, split in enumerate(["train", "test", "test"])
    ]
    monkeypatch.setattr(tasks, "_SUITES", dict(tasks._SUITES))
    tasks.register_suite("views-split", lambda: made, "private kinds and splits")
    return made


def test_a_listing_holds_views_and_the_split_is_filtered_by_the_gateway(http, gateway, split_suite):
    r = http.get("/v1/suites/views-split/tasks")
    assert r.status_code == 200, r.text
    assert [t["id"] for t in r.json()["tasks"]] == ["t0", "t1", "t2"]
    for view in r.json()["tasks"]:
        assert view["metadata"] == {"difficulty": "easy"}
    assert not any(word in r.text for word in ("infeasible", "operation", "train", "split"))
    with Client(gateway) as client:
        assert [t["id"] for t in client.tasks("views-split", split="test")] == ["t1", "t2"]
        assert client.tasks("views-split", split="dev") == []


def test_reset_info_carries_the_view_only(gateway):
    with Client(gateway) as client:
        made = client.create_session(task="palaestra-bench/count-to-3")
        try:
            reply = client.reset(made["session_id"], 0)
        finally:
            client.close_session(made["session_id"])
    view = reply["info"]["task"]
    assert view["id"] == "count-to-3" and view["metadata"] == {"difficulty": "trivial"}
    assert set(view) == set(tasks.AGENT_FIELDS)
    assert "palaestra-bench" not in json.dumps(view).replace("palaestra-bench/Overhead-v0", "")
