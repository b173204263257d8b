"""The runner through a real gateway: scripted agents (oracle ~1, noop ~0), resume, refusal
of another run's folder, compare, an HTTP agent, a module:Class agent, infrastructure retries,
and the errors that list what exists. The test family's ``faulty`` suite keeps most of them fast;
MiniWoB shows the oracle and noop on a real browser."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request

from palaestra.errors import InvalidRequest, TaskNotFound, WorkerCrashed
from palaestra.evals import EvalConfig, read_results, run_eval, stats
from palaestra.evals.sessions import GatewaySessions
from palaestra.server.runner import free_port
from palaestra.tasks import get_suite
from tests.evals.fake_openai import wait_for_port

MINIWOB = ["click-button", "click-link", "enter-text"]


def config(gateway: str, out: Path, **kw: Any) -> EvalConfig:
    return EvalConfig(**{"suite": "faulty", "agent": "oracle", "url": gateway, "out": out, **kw})


@pytest.mark.browser
def test_miniwob_oracle_and_noop(gateway, tmp_path):
    oracle = run_eval(
        EvalConfig(
            suite="miniwob", tasks=MINIWOB, agent="oracle", parallel=3, url=gateway,
            out=tmp_path / "oracle", max_steps=10,
        )
    )  # fmt: skip
    assert oracle.scored == 3 and oracle.success_rate >= 0.95
    noop = run_eval(
        EvalConfig(
            suite="miniwob", tasks=MINIWOB, agent="noop", parallel=3, url=gateway,
            out=tmp_path / "noop", max_steps=10,
        )
    )  # fmt: skip
    assert noop.scored == 3 and noop.success_rate == 0.0
    result = stats.compare(read_results(tmp_path / "oracle"), read_results(tmp_path / "noop"))
    assert result["only_a"] == 3 and result["only_b"] == 0
    # every episode links to its recording, and the gateway serves it
    (first, *_) = read_results(tmp_path / "oracle")
    assert first.trajectory and first.trajectory.startswith("/v1/runs/")


def test_oracle_noop_pass_k_report_and_files(gateway, tmp_path):
    summary = run_eval(config(gateway, tmp_path, seeds=[0, 1], attempts=2, parallel=4))
    assert summary.episodes == 4 and summary.success_rate == 1.0
    # the oracle is deterministic: its attempts replay the first, pass@k would say nothing
    assert summary.pass_at_k == {} and "deterministic" in (summary.pass_note or "")
    assert "deterministic" in (tmp_path / "report.md").read_text()
    assert summary.tables["family"]["test"]["n"] == 4
    for name in ("results.jsonl", "summary.json", "report.md", "config.json", "success.png"):
        assert (tmp_path / name).exists(), name
    # the run is named, in the summary and on every episode
    assert summary.run and {r.run for r in read_results(tmp_path)} == {summary.run}
    assert json.loads((tmp_path / "summary.json").read_text())["run"] == summary.run
    # each row of the report links to the episode's viewer on the gateway
    (first, *_) = sorted(read_results(tmp_path), key=lambda r: r.key)
    link = f"[view]({gateway}/dashboard/runs/{summary.run}/sessions/{first.session_id})"
    assert link in (tmp_path / "report.md").read_text()
    assert json.loads((tmp_path / "summary.json").read_text())["scored"] == 4
    rows = read_results(tmp_path)
    assert {r.key for r in rows} == {("count-3", s, a) for s in (0, 1) for a in (0, 1)}
    assert all(r.steps == 4 and r.ended == "terminated" for r in rows)
    assert "api_key" not in (tmp_path / "config.json").read_text()


def test_random_attempts_differ_and_report_pass_k(gateway, tmp_path):
    """A stochastic built-in agent is seeded by (seed, attempt): its attempts play different
    episodes (seeded by the seed alone, all four were one episode replayed)."""
    summary = run_eval(
        config(gateway, tmp_path, agent="random", seeds=[1], attempts=4, max_steps=6, record=False)
    )  # fmt: skip
    played = read_results(tmp_path)
    assert len({(r.steps, r.reward, r.action_errors, r.success) for r in played}) > 1, played
    assert set(summary.pass_at_k) == {"1", "2", "3", "4"} and summary.pass_note is None


def test_resume_plays_only_what_is_missing_and_refuses_another_run(gateway, tmp_path):
    cfg = config(gateway, tmp_path, agent="noop", seeds=[0, 1, 2])
    run_eval(cfg)
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    # a crash mid-write: the last episode lost, a torn line left behind
    (tmp_path / "results.jsonl").write_text("\n".join(lines[:2]) + '\n{"v": 1, "sui')
    seen: list[Any] = []
    summary = run_eval(cfg, progress=lambda e: seen.append(e.last))
    assert [e.seed for e in seen if e is not None] == [int(json.loads(lines[2])["seed"])]
    assert summary.episodes == 3 and summary.success_rate == 0.0
    with pytest.raises(InvalidRequest, match=r"agent: 'noop' there, 'oracle' now"):
        run_eval(config(gateway, tmp_path, seeds=[0, 1, 2]))
    with pytest.raises(InvalidRequest, match="another evaluation"):
        run_eval(config(gateway, tmp_path, agent="noop", seeds=[0, 1, 2], max_steps=3))


def test_compare_cli(gateway, tmp_path):
    from typer.testing import CliRunner

    from palaestra.cli import app

    run_eval(config(gateway, tmp_path / "a", agent="noop", seeds=[0, 1, 2, 3]))
    run_eval(config(gateway, tmp_path / "b", seeds=[0, 1, 2, 3]))
    out = CliRunner().invoke(app, ["eval", "compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert out.exit_code == 0, out.output
    assert "exact McNemar p = 0.125" in out.output.replace("\n", " ")


def test_cli_eval_against_a_gateway(gateway, tmp_path):
    from typer.testing import CliRunner

    from palaestra.cli import app

    args = ["eval", "faulty/count-3", "--agent", "oracle", "--url", gateway]
    out = CliRunner().invoke(app, [*args, "--out", str(tmp_path), "--seeds", "0,1"])
    assert out.exit_code == 0, out.output
    assert "100.0%" in out.output and "95% CI" in out.output
    bad = CliRunner().invoke(app, ["eval", "faulty", "--agent", "bogus", "--url", gateway])
    assert bad.exit_code == 2 and "unknown agent 'bogus'" in bad.output
    assert "noop" in bad.output and "openai:MODEL" in bad.output


def test_unknown_suite_task_and_agent_list_what_exists(gateway, tmp_path):
    with pytest.raises(TaskNotFound, match=r"unknown suite 'nope'.*faulty"):
        run_eval(config(gateway, tmp_path, suite="nope"))
    with pytest.raises(TaskNotFound, match=r"no task\(s\) \['count-9'\]; did you mean 'count-3'"):
        run_eval(config(gateway, tmp_path, tasks=["count-9"]))
    with pytest.raises(TaskNotFound, match=r"unknown suite 'fauty'.*\(did you mean 'faulty'\?\)"):
        run_eval(config(gateway, tmp_path, suite="fauty"))
    with pytest.raises(InvalidRequest, match=r"unknown agent 'nobody'.*random.*module:Class"):
        run_eval(config(gateway, tmp_path, agent="nobody"))
    with pytest.raises(InvalidRequest, match=r"unknown agent 'orcle'; did you mean 'oracle'\?"):
        run_eval(config(gateway, tmp_path, agent="orcle"))
    with pytest.raises(InvalidRequest, match="cannot import"):
        run_eval(config(gateway, tmp_path, agent="tests.evals.nowhere:Agent"))


class CountingAgent:
    """A user's agent (``module:Class``): ok() ``times`` times, then finish()."""

    def __init__(self, times: int = 3) -> None:
        self.times = times
        self.seen: list[str] = []

    def reset(self, task_view: dict[str, Any]) -> None:
        assert "oracle" not in task_view and "verifier" not in task_view  # agents see the view
        self.left = self.times

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        self.left -= 1
        return "ok()" if self.left >= 0 else "finish()"


class CrashingAgent(CountingAgent):
    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        raise ValueError("my bug")


def test_module_class_agents(gateway, tmp_path):
    good = run_eval(
        config(gateway, tmp_path / "good", agent="tests.evals.test_runner:CountingAgent")
    )
    assert good.success_rate == 1.0
    weak = run_eval(
        config(
            gateway,
            tmp_path / "weak",
            agent="tests.evals.test_runner:CountingAgent",
            agent_options={"times": 1},
        )
    )
    assert weak.success_rate == 0.0 and weak.errors == 0
    crash = run_eval(config(gateway, tmp_path / "c", agent="tests.evals.test_runner:CrashingAgent"))
    (r,) = read_results(tmp_path / "c")
    # the agent's own bug is an error of the episode (not a 0% agent), with its traceback
    assert crash.errors == 1 and crash.scored == 0 and crash.error_kinds == {"agent": 1}
    assert r.status == "error" and r.error_kind == "agent" and "ValueError: my bug" in r.error
    assert "test_runner.py" in r.traceback and 'raise ValueError("my bug")' in r.traceback
    assert "palaestra/evals" not in r.traceback  # the runner's frames are left out
    (example,) = crash.error_examples
    assert example["traceback"] == r.traceback
    report = (tmp_path / "c" / "report.md").read_text()
    assert 'raise ValueError("my bug")' in report and "error (agent)" in report


def test_unknown_agent_options_are_refused_before_any_episode(gateway, tmp_path):
    with pytest.raises(InvalidRequest, match=r"agent 'oracle' has no option 'temprature'") as e:
        run_eval(config(gateway, tmp_path / "o", agent_options={"temprature": 0.2}))
    assert e.value.fields["field"] == "agent_options"
    agent = "tests.evals.test_runner:CountingAgent"
    with pytest.raises(InvalidRequest, match=r"no option 'tims'; did you mean 'times'\?"):
        run_eval(config(gateway, tmp_path / "c", agent=agent, agent_options={"tims": 2}))
    with pytest.raises(InvalidRequest, match=r"'random' has no option 'sed'.*did you mean 'seed'"):
        run_eval(config(gateway, tmp_path / "r", agent="random", agent_options={"sed": 2}))
    assert not (tmp_path / "o" / "results.jsonl").exists()


@pytest.fixture(scope="module")
def http_agent():
    """An agent in 'another language': an HTTP endpoint that plays ok() x3 then finish(), or
    answers garbage for the first step when the task view asks for it."""
    app = FastAPI()
    state: dict[str, Any] = {"n": 0, "log": []}

    @app.post("/agent")
    async def agent(request: Request) -> Any:
        body = await request.json()
        state["log"].append(body["type"])
        state["episode"] = body["episode"]
        if body["type"] == "reset":
            state["n"] = 0
            return {}
        state["n"] += 1
        if state.get("garbage") and state["n"] == 1:
            return {"nothing": "here"}
        return {"action": "ok()" if state["n"] <= 3 else {"name": "finish", "args": {}}}

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for_port(port)
    yield f"http://127.0.0.1:{port}/agent", state
    server.should_exit = True
    thread.join(10)


def test_http_agent(gateway, tmp_path, http_agent):
    url, state = http_agent
    summary = run_eval(config(gateway, tmp_path / "ok", agent=url, parallel=1))
    assert summary.success_rate == 1.0 and state["log"][:2] == ["reset", "act"]
    assert state["episode"] == "count-3/0/0"
    state["garbage"] = True
    run_eval(config(gateway, tmp_path / "garbage", agent=url, parallel=1))
    (r,) = read_results(tmp_path / "garbage")
    assert r.action_errors == 1 and r.status == "ok"  # the env said why it was no action
    dead = run_eval(config(gateway, tmp_path / "dead", agent=f"http://127.0.0.1:{free_port()}/"))
    assert dead.errors == 1 and dead.error_kinds == {"model": 1}


class FlakySessions(GatewaySessions):
    """The gateway, whose first ``fail`` session openings die as a crashed worker would."""

    def __init__(self, url: str, fail: int) -> None:
        super().__init__(url)
        self.fail = fail

    async def open(self, task: str, *, options: dict[str, Any], record: bool) -> Any:
        if self.fail > 0:
            self.fail -= 1
            raise WorkerCrashed("worker w0 died")
        return await super().open(task, options=options, record=record)


def test_infrastructure_errors_are_retried_then_reported_apart(gateway, tmp_path):
    summary = run_eval(config(gateway, tmp_path / "a"), sessions=FlakySessions(gateway, 1))
    (r,) = read_results(tmp_path / "a")
    assert r.status == "ok" and r.success and r.retries == 1
    cfg = config(gateway, tmp_path / "b", infra_retries=1)
    summary = run_eval(cfg, sessions=FlakySessions(gateway, 5))
    (r,) = read_results(tmp_path / "b")
    assert r.status == "error" and r.error_kind == "infra" and "worker w0 died" in (r.error or "")
    assert summary.errors == 1 and summary.scored == 0 and not summary.complete
    # a rerun plays the errored episode again
    summary = run_eval(cfg)
    assert summary.errors == 0 and summary.success_rate == 1.0


def test_cancel_keeps_what_finished(gateway, tmp_path):
    stop = threading.Event()
    done: list[Any] = []

    def progress(event: Any) -> None:
        if event.last is not None:
            done.append(event.last)
            stop.set()

    summary = run_eval(
        config(gateway, tmp_path, seeds=list(range(6)), parallel=1), progress=progress, cancel=stop
    )
    assert summary.cancelled and 1 <= summary.episodes < 6
    assert len(read_results(tmp_path)) == summary.episodes


class StoppingAgent(CountingAgent):
    """ok() three times, then no more actions (as a replayed oracle list runs out)."""

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        self.left -= 1
        if self.left < 0:
            raise StopIteration
        return "ok()"


def test_an_agent_out_of_actions_is_finished_and_scored(gateway, tmp_path):
    summary = run_eval(config(gateway, tmp_path, agent="tests.evals.test_runner:StoppingAgent"))
    (r,) = read_results(tmp_path)
    assert summary.success_rate == 1.0 and r.steps == 4 and r.ended == "terminated"


def test_a_split_keeps_only_its_tasks_and_an_empty_one_is_named(gateway, tmp_path):
    summary = run_eval(
        EvalConfig(
            suite="tau2-retail",
            agent="oracle",
            split="test",
            limit=2,
            url=gateway,
            out=tmp_path / "test-split",
        )
    )
    played = read_results(tmp_path / "test-split")
    assert summary.scored == 2 and summary.success_rate == 1.0
    test_ids = {t.id for t in get_suite("tau2-retail").tasks if t.metadata["split"] == "test"}
    assert {r.task for r in played} <= test_ids
    with pytest.raises(InvalidRequest, match=r"no tasks in split 'dev'") as err:
        run_eval(config(gateway, tmp_path / "dev", suite="tau2-retail", split="dev"))
    assert err.value.fields["field"] == "split"


def test_cli_errors_exit_1_with_the_traceback_unless_allowed(gateway, tmp_path):
    from typer.testing import CliRunner

    from palaestra.cli import app

    args = ["eval", "faulty", "--url", gateway, "--agent", "tests.evals.test_runner:CrashingAgent"]
    out = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert out.exit_code == 1, out.output
    text = out.output
    assert "1 episode(s) errored" in text and 'raise ValueError("my bug")' in text
    assert "errors (not failures)" in text and "agent: 1" in text
    allowed = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b"), "--allow-errors"])
    assert allowed.exit_code == 0, allowed.output
    typo = CliRunner().invoke(
        app, ["eval", "faulty", "--url", gateway, "-o", "temprature=0.2", "--out", str(tmp_path)]
    )
    assert typo.exit_code == 2 and "has no option 'temprature'" in typo.output
    assert CliRunner().invoke(app, ["eval", "compare", str(tmp_path / "a")]).exit_code == 2


def test_cli_compare_refuses_unpaired_runs(gateway, tmp_path):
    from typer.testing import CliRunner

    from palaestra.cli import app

    run_eval(config(gateway, tmp_path / "a", seeds=[0]))
    run_eval(config(gateway, tmp_path / "b", seeds=[1]))
    out = CliRunner().invoke(app, ["eval", "compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert out.exit_code == 2 and "share no seed" in out.output.replace("\n", " ")


class SlowAgent:
    """Says something every 0.2 s: an evaluation long enough to interrupt."""

    def reset(self, task_view: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        import time

        time.sleep(0.2)
        return 'send_message("hello")'


@pytest.mark.slow
def test_ctrl_c_stops_with_one_line_the_summary_and_130(tmp_path):
    """Ctrl-C as a terminal sends it (to the whole process group, local gateway included):
    one line, the summary of what finished, exit 130, no traceback."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "out"
    cmd = [
        sys.executable, "-c", "from palaestra.cli import app; app()", "eval", "usersim",
        "--agent", "tests.evals.test_runner:SlowAgent", "--seeds", ",".join(map(str, range(40))),
        "--max-steps", "10", "--parallel", "2", "--workers", "1", "--out", str(out),
    ]  # fmt: skip
    env = {**os.environ, "PALAESTRA_HOME": str(tmp_path / "home"), "COLUMNS": "120"}
    proc = subprocess.Popen(
        cmd, cwd=Path(__file__).parents[2], env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            results = out / "results.jsonl"
            if results.exists() and results.read_text().count("\n") >= 2:
                break
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    both = stdout + stderr
    assert proc.returncode == 130, both
    assert stderr.count("stopping:") == 1 and "Traceback" not in both, both
    assert "cancelled: run it again to finish" in stdout
    assert len(read_results(out)) >= 2
    # the local gateway is gone: the report links to `palaestra serve`'s dashboard instead
    assert "(http://127.0.0.1:8000/dashboard/runs/eval-usersim-" in (out / "report.md").read_text()
