"""The ``openai:MODEL`` agent, with the real ``openai`` client, against an OpenAI-compatible
server on loopback (tests/evals/fake_openai.py) that answers with scripted tool calls, plain text,
malformed JSON, a 429 with Retry-After and a 500, through a real gateway."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from palaestra.evals import EvalConfig, read_results, run_eval
from tests.evals.fake_openai import FakeOpenAI, by_turn, click_the_button, status, text, tool


def said(messages: list[dict]) -> str:
    """Every text the model was sent, as one string (repr would escape the quotes)."""
    return json.dumps(messages, ensure_ascii=False).replace('\\"', '"')


def _run(gateway: str, out: Path, fake: FakeOpenAI, suite: str, task: str | None, **options):
    """One episode: ``task`` of ``suite``, or its first task (usersim's ids are generated)."""
    config = EvalConfig(
        suite=suite,
        tasks=[task] if task else [],
        limit=1,
        agent="openai:fake-model",
        agent_options={"base_url": fake.url, "backoff_s": 0.01, **options},
        parallel=1,
        max_steps=6,
        url=gateway,
        out=out,
    )
    summary = run_eval(config)
    (result,) = read_results(out)
    return summary, result


@pytest.mark.browser
def test_web_tool_calls_text_malformed_json_429_and_500(gateway, tmp_path, fake_openai):
    """MiniWoB click-test: two malformed answers become last_action_errors the model is shown,
    a 429 (Retry-After honoured) and a 500 are retried, then a tool call wins the episode."""
    fake_openai.reset(
        [
            tool("click", '{"bid": '),  # malformed JSON arguments
            text("I would click the button."),  # plain text, no tool call
            status(429, **{"Retry-After": "0.3"}),
            status(500),
        ],
        fallback=click_the_button,
    )
    summary, r = _run(gateway, tmp_path, fake_openai, "miniwob", "click-test")
    assert r.status == "ok" and r.success, r
    assert r.steps == 3 and r.action_errors == 2
    assert r.model_calls == 3 and r.tokens == {"prompt": 300, "completion": 30, "total": 330}
    times = [t for t, _ in fake_openai.requests]
    assert len(times) == 5 and times[3] - times[2] >= 0.3  # Retry-After: 0.3 was waited
    bodies = [b for _, b in fake_openai.requests]
    assert {t["function"]["name"] for t in bodies[0]["tools"]} >= {"click", "fill", "noop"}
    # the malformed call came back as the env's error, and the model was shown it
    second = said(bodies[1]["messages"])
    assert "not valid JSON" in second
    third = said(bodies[2]["messages"])
    assert "cannot parse action" in third or "an action is one call" in third
    # the screenshot travels as an image part of the newest observation
    last_user = [m for m in bodies[-1]["messages"] if m["role"] == "user"][-1]
    assert any(p["type"] == "image_url" for p in last_user["content"])
    assert summary.success_rate == 1.0 and summary.tokens["total"] == 330


def test_usersim_conversation_with_tools(gateway, tmp_path, fake_openai):
    """usersim: messages and tool calls, one unknown tool (the env's error), then the end."""
    fake_openai.reset(
        [],
        fallback=by_turn(
            tool("send_message", {"text": "Hello, how can I help you today?"}),
            tool("teleport", {}),  # not an action of the env
            tool("end_conversation", {}),
        ),
    )
    summary, r = _run(gateway, tmp_path, fake_openai, "usersim", None, screenshots=False)
    assert r.status == "ok" and r.terminated and r.steps == 3
    assert r.action_errors == 1 and not r.success
    bodies = [b for _, b in fake_openai.requests]
    names = {t["function"]["name"] for t in bodies[0]["tools"]}
    assert names == {"send_message", "call_tool", "end_conversation"}
    first = bodies[0]["messages"]
    assert first[0]["role"] == "system" and "customer-service" in first[0]["content"]
    assert "policy" in first[1]["content"]  # the domain policy and tool list come once
    assert "unknown action 'teleport'" in said(bodies[-1]["messages"])
    assert summary.errors == 0 and summary.scored == 1


def test_unreachable_model_is_an_error_not_a_failure(gateway, tmp_path):
    """A model endpoint nobody listens on: the episode is an error (model), reported apart."""
    from palaestra.server.runner import free_port

    config = EvalConfig(
        suite="usersim",
        limit=1,
        agent="openai:m",
        agent_options={
            "base_url": f"http://127.0.0.1:{free_port()}/v1",
            "max_retries": 1,
            "backoff_s": 0.01,
        },
        url=gateway,
        out=tmp_path,
    )
    summary = run_eval(config.model_copy(update={"limit": 3}))
    results = read_results(tmp_path)
    # one check before the first episode, then every episode is that error (none played)
    assert len(results) == 3 and all(r.steps == 0 and r.session_id is None for r in results)
    r = results[0]
    assert r.status == "error" and r.error_kind == "model" and "failed after 2 tries" in r.error
    assert "checked before the first episode" in r.error
    assert summary.errors == 3 and summary.scored == 0 and summary.error_kinds == {"model": 3}
    assert summary.error_examples[0]["count"] == 3
    assert "errors (not failures)" in (tmp_path / "report.md").read_text()


def test_a_missing_key_is_named_before_any_episode(gateway, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = EvalConfig(suite="usersim", limit=1, agent="openai:m", url=gateway, out=tmp_path)
    summary = run_eval(config)
    (r,) = read_results(tmp_path)
    assert r.error_kind == "model" and "no API key" in r.error and "$OPENAI_API_KEY" in r.error
    assert summary.errors == 1 and r.session_id is None


def test_server_errors_past_the_retry_bound(gateway, tmp_path, fake_openai):
    fake_openai.reset([status(500), status(503), status(500)])
    _, r = _run(gateway, tmp_path, fake_openai, "usersim", None, max_retries=2)
    assert r.status == "error" and r.error_kind == "model" and "InternalServerError" in r.error


def test_bad_agent_options_name_the_known_ones(gateway, tmp_path):
    from palaestra.errors import InvalidRequest

    config = EvalConfig(
        suite="usersim", agent="openai:m", agent_options={"temperatur": 0}, url=gateway,
        out=tmp_path,
    )  # fmt: skip
    with pytest.raises(InvalidRequest, match=r"temperatur'\]; did you mean 'temperature'\?"):
        run_eval(config)


@pytest.mark.parametrize(
    ("suite", "final"),
    [
        pytest.param("cad-parts", tool("submit", {}), id="cad"),
        pytest.param(
            "phone",
            tool("status", {"goal_status": "complete"}),
            id="mobile",
            marks=pytest.mark.browser,
        ),
        pytest.param("computer-basic", tool("done", {}), id="computer", marks=pytest.mark.slow),
    ],
)
def test_other_families(gateway, tmp_path, fake_openai, suite, final):
    """Each family's tools reach the model; an unknown tool is the env's error; the family's
    ending action ends a scored episode."""
    fake_openai.reset([], fallback=by_turn(tool("fly", '{"to": '), final))
    summary, r = _run(gateway, tmp_path, fake_openai, suite, None, screenshots=False)
    assert r.status == "ok" and r.terminated and r.steps == 2 and r.action_errors == 1, r
    bodies = [b for _, b in fake_openai.requests]
    assert final["tool"] in {t["function"]["name"] for t in bodies[0]["tools"]}
    (told,) = [m for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert told["content"].startswith("error: tool call 'fly'")  # the env's last_action_error
    assert summary.scored == 1 and r.family in suite.replace("phone", "mobile")
