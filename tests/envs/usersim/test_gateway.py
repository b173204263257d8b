"""Every usersim domain through the real gateway with RemoteEnv (REST and WebSocket)."""

import httpx
import pytest

from palaestra.client import RemoteEnv
from palaestra.envs.usersim.world import domain_names
from palaestra.errors import InvalidRequest
from palaestra.family import family
from palaestra.tasks import get_suite


def tasks_of(name):
    return [t for t in get_suite("usersim").tasks if t.setup["domain"] == name]


@pytest.mark.parametrize("name", domain_names())
def test_the_competent_assistant_solves_a_domain_through_the_gateway(gateway, name):
    chosen = tasks_of(name)
    grantable = next(t for t in chosen if t.metadata["grantable"])
    refused = next(t for t in chosen if not t.metadata["grantable"])
    for task, transport in ((grantable, "ws"), (refused, "http")):
        env = RemoteEnv(task=f"usersim/{task.id}", base_url=gateway, transport=transport)
        try:
            policy = family("usersim").policy("competent", seed=0)
            obs, info = env.reset(seed=0)
            policy.reset(task)
            assert env.observation_space.contains(obs)
            assert "oracle" not in info["task"] and "goal" not in str(info["task"])
            for _ in range(task.max_steps):
                obs, reward, terminated, truncated, info = env.step(policy.act(obs, info))
                if terminated or truncated:
                    break
            assert terminated and reward == 1.0, obs["conversation"]
            assert info["verifier"]["success"] and "checks" not in info["verifier"]
        finally:
            env.close()


def test_an_early_goodbye_fails_through_the_gateway(gateway):
    task = tasks_of("retail")[0]
    env = RemoteEnv(task=f"usersim/{task.id}", base_url=gateway)
    try:
        env.reset(seed=0)
        obs, *_ = env.step('send_message("Have a nice day, goodbye!")')
        assert "not done" in obs["user_message"].lower() or "still need" in obs["user_message"]
        _, reward, terminated, *_ = env.step("end_conversation()")
        assert terminated and reward == 0.0
    finally:
        env.close()


def test_bad_session_options_are_problem_json(gateway):
    with pytest.raises(InvalidRequest, match="persona"):
        RemoteEnv("palaestra/usersim-v0", base_url=gateway, options={"persona": "grumpy"})
    reply = httpx.post(
        f"{gateway}/v1/sessions",
        json={"env": "palaestra/usersim-v0", "options": {"llm_fallback": "sometimes"}},
    )
    assert reply.status_code == 422
    assert reply.headers["content-type"].startswith("application/problem+json")
    assert "llm_fallback" in reply.text
