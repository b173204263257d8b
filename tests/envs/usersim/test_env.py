"""palaestra/usersim-v0 in-process: actions, bad input, rules, verifier, limits."""

import json

import pytest

from palaestra.envs.usersim.env import MAX_MESSAGE, UserSimEnv
from palaestra.envs.usersim.suites import generate
from palaestra.errors import InvalidRequest
from palaestra.family import family
from palaestra.policies import run_episode


def first(domain, intent, grantable=True):
    return next(
        t
        for t in generate(domain)
        if t.metadata["intent"] == intent and t.metadata["grantable"] == grantable
    )


@pytest.fixture
def env():
    e = UserSimEnv(persona="terse")
    yield e
    e.close()


def test_observation_holds_policy_tools_and_the_users_opening(env):
    task = first("airline", "cancel")
    obs, info = env.reset(seed=0, options={"task": task})
    assert env.observation_space.contains(obs)
    assert "24 h" in obs["policy"] and obs["user_message"].startswith("I need to cancel")
    tools = {t["name"]: t for t in json.loads(obs["tools"])}
    assert tools["cancel_reservation"]["writes"] and "reservation_id" in json.dumps(tools)
    assert "oracle" not in info["task"] and "setup" not in info["task"]


def test_bad_tool_calls_are_agent_mistakes_and_change_nothing(env):
    env.reset(seed=0, options={"task": first("airline", "cancel")})
    obs, *_ = env.step({"name": "call_tool", "args": {"name": "drop_tables", "arguments": {}}})
    assert "unknown tool 'drop_tables'" in obs["last_action_error"]
    obs, *_ = env.step('call_tool("get_reservation_details", {"reservation": "X"})')
    assert "reservation_id" in obs["last_action_error"]  # the schema names the missing field
    obs, *_ = env.step(
        {"name": "call_tool", "args": {"name": "get_reservation_details", "arguments": "{bad"}}
    )
    assert "not valid JSON" in obs["last_action_error"]
    obs, *_ = env.step('call_tool("get_reservation_details", \'{"reservation_id": "NOPE99"}\')')
    assert obs["last_action_error"] == ""
    assert json.loads(obs["last_tool_result"]) == {"error": "reservation not found"}
    assert env.episode.violations == []


def test_empty_and_huge_messages_are_refused(env):
    env.reset(seed=0, options={"task": first("airline", "cancel")})
    obs, *_ = env.step({"name": "send_message", "args": {"text": "   "}})
    assert "empty" in obs["last_action_error"]
    obs, *_ = env.step({"name": "send_message", "args": {"text": "x" * 100_000}})
    assert f"longer than {MAX_MESSAGE}" in obs["last_action_error"]
    assert sum(m["role"] == "assistant" for m in env.episode.messages) == 0


def test_a_rule_breaking_call_is_refused_the_episode_goes_on_and_the_task_fails(env):
    task = first("airline", "cancel", grantable=False)
    env.reset(seed=0, options={"task": task})
    rid = task.setup["goal"]["facts"]["reservation_id"]
    env.step(f'send_message("I will cancel reservation {rid}. Shall I proceed?")')
    obs, reward, terminated, truncated, _ = env.step(
        {
            "name": "call_tool",
            "args": {"name": "cancel_reservation", "arguments": {"reservation_id": rid}},
        }
    )
    assert "cannot be cancelled" in json.loads(obs["last_tool_result"])["error"]
    assert not terminated and not truncated
    obs, reward, terminated, *_ = env.step("end_conversation()")
    assert terminated and reward == 0.0
    assert any(c.kind == "usersim_rules" and not c.passed for c in env.last_verification.checks)


def test_a_write_without_the_users_yes_is_a_violation(env):
    task = first("airline", "cancel")
    env.reset(seed=0, options={"task": task})
    rid = task.setup["goal"]["facts"]["reservation_id"]
    call = {"name": "cancel_reservation", "arguments": {"reservation_id": rid}}
    env.step({"name": "call_tool", "args": call})
    assert env.episode.violations == [
        "cancel_reservation called without the user's explicit confirmation"
    ]


def test_the_competent_assistant_solves_and_partial_credit_is_reported(env):
    task = first("airline", "change")
    competent = family("usersim").policy("competent", seed=1)
    assert run_episode(env, competent, task, seed=1).reward == 1.0
    # the same work, but the fare difference is never told: the database check passes, the
    # facts one fails
    policy = family("usersim").policy("competent", seed=1)
    obs, info = env.reset(seed=1, options={"task": task})
    policy.reset(task)
    for _ in range(20):
        action = policy.act(obs, info)
        if "fare difference" in action["args"].get("text", ""):
            action = {"name": "send_message", "args": {"text": "Done, you have been moved."}}
        obs, _reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    kinds = {c.kind: c for c in env.last_verification.checks}
    assert kinds["usersim_db"].passed and not kinds["usersim_told"].passed
    assert 0 < env.last_verification.score < 1 and not info["verifier"]["success"]
    assert "checks" not in info["verifier"]  # the checks would reveal the answer


def test_a_conversation_past_the_turn_limit_is_truncated(env):
    task = first("train", "departs")
    env.reset(seed=0, options={"task": task})
    truncated = False
    for _ in range(task.max_steps):
        _, _, terminated, truncated, _ = env.step('send_message("Let me see.")')
        assert not terminated
    assert truncated


def test_unknown_persona_and_fallback_are_request_errors():
    with pytest.raises(InvalidRequest, match="persona"):
        UserSimEnv(persona="grumpy")
    with pytest.raises(InvalidRequest, match="llm_fallback"):
        UserSimEnv(llm_fallback="maybe")


def test_train_tools_are_the_synthesized_apps_operations(env):
    """Same world, same rules: a booking over the seats left is refused with the app's message."""
    task = next(
        t
        for t in generate("train")
        if t.metadata["intent"] == "book"
        and not t.metadata["grantable"]
        and "seats on train" in t.oracle.data[-1]["tell"]
        and "Not enough seats" in t.oracle.data[-1]["tell"]
    )
    env.reset(seed=0, options={"task": task})
    facts = task.setup["goal"]["facts"]
    args = {
        "code": facts["train"],
        "passenger": facts["passenger"],
        "passengers": int(facts["passengers"]),
        "seat_class": facts["seat_class"],
        "card": facts["card"],
    }
    obs, *_ = env.step({"name": "call_tool", "args": {"name": "book_train", "arguments": args}})
    assert json.loads(obs["last_tool_result"])["error"] == "Not enough seats left on this train."
