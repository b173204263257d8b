"""``palaestra eval`` without ``--url`` plays on a gateway inside its own process, with no HTTP
server (and no HTTP round trip to itself), and writes what it wrote through a gateway: the same
results, a recorded run whose episodes link to their trajectories, and a resume that plays only
what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
import uvicorn
from typer.testing import CliRunner

from palaestra.cli import app
from palaestra.evals import EvalConfig, read_results, run_eval

#: what differs between two plays of one episode whatever the path (ids, clocks)
VOLATILE = {"session_id", "trajectory", "run", "wall_s", "started"}


def _no_http(*args: object, **kwargs: object) -> None:
    raise AssertionError("an HTTP server was started")


def test_eval_without_url_plays_in_process_as_through_a_gateway(
    gateway: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = EvalConfig(
        suite="faulty", tasks=["count-3"], agent="oracle", seeds=[0, 1], url=gateway,
        out=tmp_path / "gateway",
    )  # fmt: skip
    run_eval(remote)
    through = sorted(read_results(tmp_path / "gateway"), key=lambda r: r.key)
    runs = tmp_path / "runs"
    monkeypatch.setenv("PALAESTRA_RUNS_DIR", str(runs))
    monkeypatch.setattr(uvicorn.Server, "run", _no_http)
    monkeypatch.setattr(uvicorn.Server, "serve", _no_http)
    args = ["eval", "faulty/count-3", "--seeds", "0,1", "--workers", "1"]
    args += ["--out", str(tmp_path / "local")]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    assert "in this process" in out.output and "100.0%" in out.output
    local = sorted(read_results(tmp_path / "local"), key=lambda r: r.key)
    assert [r.model_dump(exclude=VOLATILE) for r in local] == [
        r.model_dump(exclude=VOLATILE) for r in through
    ]
    # recorded like a gateway's sessions: each episode's trajectory is in the run it names
    for r in local:
        assert r.run and r.trajectory == f"/v1/runs/{r.run}/sessions/{r.session_id}"
        assert (runs / r.run / str(r.session_id)).is_dir()
    # the same command again plays nothing: every episode is in results.jsonl already
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert len((tmp_path / "local" / "results.jsonl").read_text().splitlines()) == 2
