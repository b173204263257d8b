"""An office task end to end through the gateway: the Python client (RemoteEnv over the
WebSocket) plays its GUI oracle and scores 1, doing nothing scores 0, the agent sees the app's
window and tree, never the solutions; and ``palaestra eval --url`` over the suite with the
oracle agent passes."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from palaestra.cli import app
from palaestra.client import RemoteEnv
from palaestra.tasks import get_suite

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def shipped():
    """The shortest GUI oracle among the shipped (validated) Impress tasks."""
    tasks = get_suite("office-impress").tasks
    assert tasks, "no validated office task: palaestra validate office-impress --record"
    return min(tasks, key=lambda t: len(t.oracle.data if t.oracle else []))


def test_an_office_task_through_the_gateway_scores_its_oracle_1_and_nothing_0(gateway, shipped):
    ref = f"office/{shipped.id}"
    remote = RemoteEnv(
        task=ref,
        base_url=gateway,
        transport="ws",
        options={"observe": ["screenshot", "windows", "last_output", "a11y_tree"]},
    )
    try:
        obs, info = remote.reset(seed=0)
        view = json.dumps(info["task"])
        assert "oracle" not in info["task"] and "code_oracle" not in view and "skills" not in view
        assert info["task"]["metadata"] == {"app": "impress"}
        titles = [w["title"] for w in json.loads(obs["windows"])]
        assert any(t.endswith("LibreOffice Impress") for t in titles), titles
        assert "<application" in obs["a11y_tree"] and "soffice" in obs["a11y_tree"].lower()
        for action in shipped.oracle.data:
            obs, *_ = remote.step(action)
            assert not obs["last_action_error"], (action, obs["last_action_error"])
        obs, reward, terminated, _, info = remote.step("done()")
        assert terminated and info["verifier"]["success"] and reward == 1.0
        obs, _ = remote.reset(options={"task": ref})
        _, reward, terminated, _, info = remote.step("done()")
        assert terminated and not info["verifier"]["success"] and reward == 0.0
    finally:
        remote.close()


def test_palaestra_eval_plays_the_office_suite_with_the_oracle(gateway, shipped, tmp_path):
    args = ["eval", f"office-impress/{shipped.id}", "--agent", "oracle", "--url", gateway]
    out = CliRunner().invoke(app, [*args, "--out", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert "100.0%" in out.output
