"""Conformance checks run by ``palaestra check`` and by the tests over the whole registry."""

from __future__ import annotations

from typing import Any

from gymnasium.utils.env_checker import check_env

from palaestra import registry, tasks


def _task_for(env_id: str) -> str | None:
    """A task of a suite that runs on this env, so the check covers the verifier path too."""
    for name in tasks.suite_names():
        for task in tasks.get_suite(name).tasks:
            if task.env == env_id:
                return f"{name}/{task.id}"
    return None


def check_env_local(env_id: str) -> None:
    task = _task_for(env_id)
    env = registry.make(env_id, **({"task": task} if task else {}))
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def check_env_remote(env_id: str, base_url: str | None = None) -> None:
    """Create a session on a gateway (a temporary one if no URL), reset, step, verify spaces."""
    from palaestra.client import RemoteEnv
    from palaestra.server.runner import gateway_thread

    def round_trip(url: str) -> None:
        task = _task_for(env_id)
        env = RemoteEnv(None if task else env_id, task=task, base_url=url, record=False)
        try:
            obs, _ = env.reset(seed=0)
            _assert_in(env.observation_space, obs, "reset")
            env.action_space.seed(0)
            for _ in range(5):
                obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
                _assert_in(env.observation_space, obs, "step")
                if not isinstance(reward, float) or not isinstance(terminated, bool):
                    raise AssertionError("reward must be float and terminated bool")
                if terminated or truncated:
                    env.reset()
            obs, *_ = env.step("this is not an action(")
            if not obs.get("last_action_error"):
                raise AssertionError("a malformed action must come back as last_action_error")
        finally:
            env.close()

    if base_url:
        round_trip(base_url)
    else:
        with gateway_thread(workers=1, record=False) as url:
            round_trip(url)


def _assert_in(space: Any, obs: Any, where: str) -> None:
    if not space.contains(obs):
        raise AssertionError(f"the observation after {where} is not in the published space")
