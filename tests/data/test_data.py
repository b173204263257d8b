"""Runs as data through a real gateway: named and tagged runs found in the catalog with filters
and paging, re-graded from end-state snapshots (a changed verifier flips a verdict), replayed
without divergence, exported to a Hugging Face dataset and chat JSONL; a corrupt line is
skipped and reported; another key sees none of it. The bench counter keeps it fast (no browser)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from palaestra.client import Client
from palaestra.data import episodes, export, regrade, replay
from palaestra.tasks import get_task

RUN = "data-test"
TASKS = ["palaestra-bench/count-to-3", "palaestra-bench/count-to-5"]


@pytest.fixture(scope="module")
def recorded(gateway: str, runs_dir: Path) -> Path:
    """Two oracle episodes and one failing one, in the named run ``data-test``."""
    http = httpx.Client(base_url=gateway, timeout=30)
    for task, wrong in ((TASKS[0], False), (TASKS[1], False), (TASKS[1], True)):
        body = {
            "task": task,
            "options": {"image_size": 16},
            "run": RUN,
            "tags": {"agent": "oracle"},
        }
        sid = http.post("/v1/sessions", json=body).json()["session_id"]
        http.post(f"/v1/sessions/{sid}/reset", json={"seed": 7})
        actions = ["add(1)", "done()"] if wrong else get_task(task).oracle.data
        for action in actions:
            http.post(f"/v1/sessions/{sid}/step", json={"action": action})
        http.delete(f"/v1/sessions/{sid}")
    return runs_dir / RUN


def test_catalog_filters_pages_and_owners(gateway, recorded):
    http = httpx.Client(base_url=gateway, timeout=30)
    runs = http.get("/v1/runs", params={"agent": "oracle"}).json()["runs"]
    run = next(r for r in runs if r["run_id"] == RUN)
    assert run["episodes"] == 3 and run["successes"] == 2 and run["tags"] == {"agent": "oracle"}
    page = http.get(f"/v1/runs/{RUN}/episodes", params={"limit": 2}).json()
    assert page["total"] == 3 and len(page["episodes"]) == 2 and page["next_offset"] == 2
    rest = http.get(f"/v1/runs/{RUN}/episodes", params={"offset": 2}).json()
    assert len(rest["episodes"]) == 1 and rest["next_offset"] is None
    wins = http.get(f"/v1/runs/{RUN}/episodes", params={"success": "true"}).json()
    assert {e["task"] for e in wins["episodes"]} == set(TASKS) and wins["total"] == 2
    ep = wins["episodes"][0]
    assert ep["seed"] == 7 and ep["agent"] == "oracle" and ep["steps"] >= 2 and ep["version"]
    assert http.get("/v1/runs/nope/episodes").status_code == 404
    assert http.get(f"/v1/runs/{RUN}/episodes", params={"limit": 0}).status_code == 422
    # images are served to their owner only
    sid = ep["session_id"]
    events = http.get(f"/v1/runs/{RUN}/sessions/{sid}").json()["events"]
    name = events[0]["observation"]["screenshot"]["__file__"].split("/")[-1]
    img = http.get(f"/v1/runs/{RUN}/sessions/{sid}/images/{name}")
    assert img.status_code == 200 and img.content[:4] == b"\x89PNG"
    assert "snapshot" not in events[-1]  # the end state is the verifier's, not the agent's
    assert http.get(f"/v1/runs/{RUN}/sessions/{sid}/images/..%2Fsession.json").status_code == 404


def test_another_key_sees_nothing(recorded, runs_dir, tmp_path):
    from palaestra.server.runner import gateway_thread
    from palaestra.server.settings import Settings

    settings = Settings(workers=1, runs_dir=runs_dir, api_keys=["alice", "bob"])
    with gateway_thread(settings) as url:
        alice = httpx.Client(base_url=url, headers={"Authorization": "Bearer alice"})
        bob = httpx.Client(base_url=url, headers={"Authorization": "Bearer bob"})
        body = {"task": TASKS[0], "options": {"image_size": 16}, "run": "alices"}
        sid = alice.post("/v1/sessions", json=body).json()["session_id"]
        alice.post(f"/v1/sessions/{sid}/reset", json={})
        alice.post(f"/v1/sessions/{sid}/step", json={"action": "done()"})
        assert [r["run_id"] for r in alice.get("/v1/runs").json()["runs"]] == ["alices"]
        assert bob.get("/v1/runs").json()["runs"] == []
        assert bob.get("/v1/runs/alices/episodes").status_code == 404
        img = f"/v1/runs/alices/sessions/{sid}/images/e0001_s0000_screenshot.png"
        assert alice.get(img).status_code == 200 and bob.get(img).status_code == 404
        taken = bob.post("/v1/sessions", json={**body, "run": "alices"})
        assert taken.status_code == 409 and "run" in taken.text


def test_regrade_lists_changed_verdicts(recorded):
    rows = regrade.regrade(recorded)
    assert len(rows) == 3 and all(r.error is None for r in rows)
    assert not any(r.changed for r in rows)  # today's verifiers agree with the recording

    def stricter(ref):  # a "fixed" verifier: count-to-3 now wants 4
        task = get_task(ref)
        if ref == TASKS[0]:
            return task.model_copy(update={"verifier": {**task.verifier, "value": 4}})
        return task

    changed = regrade.summary(regrade.regrade(recorded, stricter))["changed"]
    assert len(changed) == 1 and changed[0]["old_success"] and not changed[0]["success"]


def test_replay_does_not_diverge(gateway, recorded):
    ep = next(e for e in episodes.read_run(recorded) if e.verdict["success"])
    results = [replay.replay(ep, Client(gateway)) for _ in range(2)]
    report = replay.determinism(results)
    assert report["diverged"] == [], report
    assert report["deterministic"] == 2 and report["screenshots_differ"] == 0
    assert results[0].version_note is None


def test_export_hf_and_chat(recorded, tmp_path):
    import datasets

    result = export.export(recorded, "hf", tmp_path / "hf", export.Filters(success_only=True))
    ds = datasets.load_from_disk(str(tmp_path / "hf" / "data"))
    assert len(ds) == 2 and result.episodes == 2 and all(ds["success"])
    first = ds[0]
    assert first["images"][0].size == (16, 16) and len(first["actions"]) == first["steps"]
    assert "success rate: 100.0%" in (tmp_path / "hf" / "README.md").read_text()
    export.export(recorded, "chat-jsonl", tmp_path / "chat", export.Filters(min_score=0.0))
    lines = (tmp_path / "chat" / "episodes.jsonl").read_text().splitlines()
    chat = json.loads(lines[0])
    roles = [m["role"] for m in chat["messages"]]
    assert len(lines) == 3 and roles[:4] == ["system", "user", "assistant", "tool"]
    assert chat["messages"][1]["content"][1]["image_url"]["url"].startswith("data:image/png")
    assert chat["messages"][2]["tool_calls"][0]["function"]["name"] == "act"


def test_corrupt_line_is_skipped_and_reported(recorded, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(recorded, copy)
    session = sorted(p.parent for p in copy.glob("*/events.jsonl"))[0]
    lines = (session / "events.jsonl").read_bytes().splitlines(keepends=True)
    (session / "events.jsonl").write_bytes(b"".join([lines[0], b'{"type": "st\n', *lines[1:]]))
    with open(sorted(copy.glob("*/events.jsonl"))[1], "ab") as fh:  # a run still being written
        fh.write(b'{"type": "reset", "episode": 2, "seed": 1}\n{"type": "step", "ind')
    result = export.export(copy, "chat-jsonl", tmp_path / "out")
    notes = "\n".join(result.lines())
    assert result.episodes == 3 and "skipped corrupt line(s) [2]" in notes
    assert "not finished" in notes
    with pytest.raises(Exception, match="no recorded run"):
        episodes.run_dir(tmp_path, "missing")


def test_retention_keeps_runs_under_size_and_age_and_logs(recorded, tmp_path, caplog):
    import shutil
    import time

    from palaestra.server.retention import sweep

    runs = tmp_path / "runs"
    shutil.copytree(recorded, runs / RUN)
    sizes = [
        sum(f.stat().st_size for f in d.rglob("*") if f.is_file()) for d in (runs / RUN).iterdir()
    ]
    with caplog.at_level("WARNING", logger="palaestra.retention"):
        gone = sweep(runs, None, max_bytes=sum(sizes) - 1, max_age_s=0)
    assert len(gone) == 1 and "run over" in gone[0].why and "retention: deleted" in caplog.text
    live = {d.name for d in (runs / RUN).iterdir() if d.is_dir()}
    keep = live.pop()
    gone = sweep(runs, None, 0, max_age_s=60, live={keep}, now=time.time() + 3600)
    assert {g.session_id for g in gone} == live and (runs / RUN / keep).is_dir()


def test_an_eval_names_its_run_and_the_catalog_finds_it(gateway, runs_dir, tmp_path):
    from palaestra.evals import EvalConfig, read_results, run_eval

    config = EvalConfig(
        suite="palaestra-bench", tasks=["count-to-3", "count-to-5"], agent="oracle",
        url=gateway, out=tmp_path / "ev", run="eval-data-test",
    )  # fmt: skip
    assert run_eval(config).success_rate == 1.0
    assert all(
        r.trajectory.startswith("/v1/runs/eval-data-test/") for r in read_results(config.out)
    )
    http = httpx.Client(base_url=gateway, timeout=30)
    runs = http.get("/v1/runs", params={"agent": "oracle", "limit": 500}).json()["runs"]
    run = next(r for r in runs if r["run_id"] == "eval-data-test")
    assert run["episodes"] == 2 and run["tags"]["suite"] == "palaestra-bench"
    rows = regrade.regrade(runs_dir / "eval-data-test")
    assert len(rows) == 2 and not any(r.changed or r.error for r in rows)


def test_bad_run_names_and_paging_are_422_naming_the_field(gateway):
    http = httpx.Client(base_url=gateway, timeout=30)
    bad = http.post("/v1/sessions", json={"task": TASKS[0], "run": "../etc"})
    assert bad.status_code == 422 and "run" in bad.text
    tags = http.post("/v1/sessions", json={"task": TASKS[0], "run": "ok", "tags": {"a": 1}})
    assert tags.status_code == 422 and "tags" in tags.text
    for params, name in (
        ({"limit": 501}, "limit"),
        ({"offset": -1}, "offset"),
        ({"offset": 2**63}, "offset"),
    ):
        page = http.get("/v1/runs", params=params)
        assert page.status_code == 422 and name in page.text


def test_runs_recorded_before_the_catalog_are_indexed(recorded, tmp_path):
    import shutil

    from palaestra.server.episodes import EpisodeCatalog

    shutil.copytree(recorded, tmp_path / "runs" / "old")
    cat = EpisodeCatalog(tmp_path / "runs" / ".catalog.sqlite3")
    assert cat.index_missing(tmp_path / "runs") == ["old"]
    assert cat.index_missing(tmp_path / "runs") == []
    assert cat.episodes("anonymous", "old", success=True)["total"] == 2
    assert cat.runs("anonymous")["items"][0]["tags"] == {"agent": "oracle"}


def test_a_pool_records_into_its_named_run(gateway):
    http = httpx.Client(base_url=gateway, timeout=30)
    body = {"task": TASKS[0], "size": 2, "run": "pool-run", "tags": {"agent": "pool"}}
    pid = http.post("/v1/pools", json=body).json()["pool_id"]
    http.post(f"/v1/pools/{pid}/reset", json={"seed": 3})
    http.post(f"/v1/pools/{pid}/step", json={"actions": ["add(3)", "add(1)"]})
    http.post(f"/v1/pools/{pid}/step", json={"actions": ["done()", "done()"]})
    page = http.get("/v1/runs/pool-run/episodes").json()
    assert page["total"] == 2 and sorted(e["success"] for e in page["episodes"]) == [False, True]
    assert {e["agent"] for e in page["episodes"]} == {"pool"}
    http.delete(f"/v1/pools/{pid}")
