"""The one episode loop (palaestra.policies.episode_loop) under both of its drivers: what it
plays, how it ends, and that the eval runner and run_episode count an episode the same way."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from palaestra.policies import (
    STOP,
    Episode,
    ReplayPolicy,
    adrive,
    drive,
    episode_loop,
    next_action,
    run_episode,
)


class Counter:
    """An env that counts steps; ``x`` is refused, ``done()`` ends the episode."""

    def __init__(self) -> None:
        self.steps = 0

    def reset(self, seed: int | None = None, options: Any = None) -> tuple[dict, dict]:
        self.steps = 0
        return {"n": 0}, {"seed": seed}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        self.steps += 1
        error = "refused" if action == "x" else ""
        return {"n": self.steps, "last_action_error": error}, 0.5, action == "done()", False, {}


def test_a_policy_that_runs_out_stops_the_episode_and_errors_are_counted():
    e = run_episode(Counter(), ReplayPolicy(["a", "x", "b"]), max_steps=10)
    assert (e.steps, e.actions, e.action_errors, e.stopped) == (3, ["a", "x", "b"], 1, True)
    assert (e.reward, e.total_reward, e.terminated) == (0.5, 1.5, False)


def test_finish_is_played_when_the_policy_stops():
    e = run_episode(Counter(), ReplayPolicy(["a"]), max_steps=10, finish="done()")
    assert (e.actions, e.terminated, e.stopped) == (["a", "done()"], True, False)


def test_the_limit_and_strict():
    e = run_episode(Counter(), ReplayPolicy(["a"] * 9), max_steps=4)
    assert (e.steps, e.stopped, e.terminated) == (4, False, False)
    with pytest.raises(RuntimeError, match="step 2 \\(x\\): refused"):
        run_episode(Counter(), ReplayPolicy(["a", "x"]), max_steps=5, strict=True)


def test_a_policy_that_raises_leaves_what_was_played_in_the_episode():
    class Crashing:
        def reset(self, task: Any) -> None:
            self.n = 0

        def act(self, obs: dict, info: dict) -> Any:
            self.n += 1
            if self.n == 3:
                raise ValueError("agent bug")
            return "x"

    env, policy = Counter(), Crashing()
    episode = Episode.start(*env.reset())
    policy.reset(None)
    with pytest.raises(ValueError):
        drive(episode_loop(episode, 10), lambda o, i: next_action(policy, o, i), env.step)
    assert (episode.steps, episode.action_errors, episode.observation["n"]) == (2, 2, 2)


def test_the_async_driver_plays_the_same_episode():
    env = Counter()
    policy = ReplayPolicy(["a", "x"])

    async def act(obs: dict, info: dict) -> Any:
        await asyncio.sleep(0)
        return next_action(policy, obs, info)

    async def step(action: Any) -> Any:
        await asyncio.sleep(0)
        return env.step(action)

    policy.reset(None)
    loop = episode_loop(Episode.start(*env.reset()), 10, finish="done()")
    got = asyncio.run(adrive(loop, act, step))
    same = run_episode(Counter(), ReplayPolicy(["a", "x"]), max_steps=10, finish="done()")
    assert (got.actions, got.steps, got.action_errors, got.terminated) == (
        same.actions, same.steps, same.action_errors, same.terminated,
    )  # fmt: skip
    assert STOP not in got.actions
