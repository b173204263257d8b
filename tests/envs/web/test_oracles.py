"""Every scripted oracle solves its MiniWoB task on real Chromium, in process, seed after seed.

An oracle reads only the goal and the accessibility tree, so a pass shows at once that the task
page, the observation, the action set and the MiniWoB verifier fit together.
"""

from collections.abc import Iterator

import pytest

from palaestra import registry
from palaestra.envs.web.policies import ORACLES
from palaestra.family import family
from palaestra.policies import run_episode
from palaestra.tasks import get_task

pytestmark = pytest.mark.browser

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def env() -> Iterator:
    """One env for every oracle: each reset switches the task through ``options={"task": ...}``.

    It is built on a non-flight MiniWoB task, so its viewport is MiniWoB's 500x320 (the
    viewport comes from the first task's setup, and every task with an oracle uses that size).
    """
    env = registry.make("palaestra/web-v0", task="miniwob/click-test", observe=("axtree", "goal"))
    yield env
    env.close()


def run_oracle(env, name: str, seed: int) -> tuple[float, int]:
    """The task's oracle (its ``task.oracle`` names the ``miniwob`` policy) from reset(seed); the
    env switches to the task through the reset options."""
    task = get_task(f"miniwob/{name}")
    policy = family("web").policy("oracle")
    episode = run_episode(env, policy, task, seed=seed, reset_options={"task": f"miniwob/{name}"})
    return episode.reward, episode.steps


@pytest.mark.parametrize("task", sorted(ORACLES))
def test_oracle_solves_its_task(env, task: str) -> None:
    for seed in SEEDS:
        reward, steps = run_oracle(env, task, seed)
        # the privileged report names MiniWoB's own verdict (done, raw reward, reason)
        report = env.last_verification
        details = "; ".join(c.detail for c in report.checks) if report else "no verification"
        assert reward == 1.0, f"{task} seed={seed}: reward {reward} after {steps} steps ({details})"
