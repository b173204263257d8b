"""Synthesized tasks end to end: served by the gateway, solved by their oracle over the client,
not solved by a random agent."""

import uuid

import numpy as np
import pytest

from palaestra.client import RemoteEnv
from palaestra.family import family
from palaestra.policies import run_episode
from palaestra.server.settings import Settings
from palaestra.synthesis.pipeline import synthesize
from palaestra.tasks import get_suite

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def suite(gateway):
    """A small validated suite written where the gateway's workers look for suites."""
    name = f"test-synth-{uuid.uuid4().hex[:6]}"
    report = synthesize(
        ["train"],
        variants=2,
        tasks=6,
        layouts=("desktop", "mobile"),
        out=Settings.from_env().suites_dir / name,
        name=name,
        seed=11,
    )
    assert report.validated == 6, report.drops
    return get_suite(name)


def test_oracle_solves_every_task_through_the_gateway(gateway, suite):
    layouts = set()
    for task in suite.tasks:
        assert task.validation["validated"] and task.validation["noop_score"] == 0.0
        env = RemoteEnv(task=f"{suite.name}/{task.id}", base_url=gateway, transport="ws")
        try:
            obs, info = env.reset(seed=0)
            assert obs["goal"] == task.instruction and "oracle" not in info["task"]
            w, h = task.setup["viewport"]
            assert obs["screenshot"].shape == (h, w, 3)
            oracle = family(task.family).policy("oracle")  # no action may fail (strict)
            done = run_episode(env, oracle, task, seed=0, reset_options={}, strict=True)
            reward, terminated, info = done.reward, done.terminated, done.info
            assert terminated and reward == 1.0, info
            assert set(info["verifier"]) == {"score", "success", "error"}  # no checks leak
        finally:
            env.close()
        layouts.add(task.setup["layout"])
    assert layouts == {"desktop", "mobile"}


def test_random_agent_scores_near_zero(gateway, suite):
    rewards = []
    for i, task in enumerate(suite.tasks):
        env = RemoteEnv(task=f"{suite.name}/{task.id}", base_url=gateway, transport="ws")
        env.action_space.seed(i)
        try:
            env.reset(seed=i)
            reward = 0.0
            for _ in range(task.max_steps):
                _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
                if terminated or truncated:
                    break
            rewards.append(reward)
        finally:
            env.close()
    assert np.mean(rewards) <= 0.2, rewards
