"""The Python clients against a real gateway."""

import asyncio

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import SyncVectorEnv

import palaestra
from palaestra.client import AsyncClient, Client, RemoteEnv, RemoteVectorEnv
from palaestra.errors import (
    EnvNotFound,
    InvalidRequest,
    ResetNeeded,
    SessionNotFound,
    TransportError,
)
from tests.conftest import BENCH_ENV, FAULTY_ENV


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_remote_env_is_a_real_gymnasium_env(gateway, transport):
    env = gym.make(
        "palaestra/Remote-v0",
        env_id=FAULTY_ENV,
        base_url=gateway,
        transport=transport,
        render_mode="rgb_array",
        disable_env_checker=True,
    )
    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    obs, *_ = env.step("ok()")
    assert obs["oks"] == 1 and isinstance(obs["screen"], np.ndarray)
    frame = env.render()
    assert frame.shape == (8, 8, 3)
    env.close()
    env.close()  # closing twice is harmless


def test_task_episode_and_errors_come_back_as_exceptions(gateway):
    env = RemoteEnv(task="palaestra-bench/count-to-5", base_url=gateway, transport="ws")
    assert "add(n)" in env.action_description
    with pytest.raises(ResetNeeded):
        env.step("add(1)")
    env.reset()
    env.step("add(5)")
    _, reward, term, _, info = env.step("done()")
    assert term and reward == 1.0 and info["verifier"]["success"]
    env.close()
    with pytest.raises(EnvNotFound) as err:
        RemoteEnv("palaestra-bench/Overhed-v0", base_url=gateway)
    assert BENCH_ENV in err.value.fields["close_matches"]
    with pytest.raises(SessionNotFound):
        Client(gateway).step("nope", "add(1)")
    with pytest.raises(TransportError):
        Client("http://127.0.0.1:9").health()


def test_remote_vector_env_matches_a_local_sync_vector_env(gateway):
    task = "palaestra-bench/count-to-3"
    remote = RemoteVectorEnv(num_envs=3, task=task, base_url=gateway)
    local = SyncVectorEnv([lambda: palaestra.make(BENCH_ENV, task=task) for _ in range(3)])
    actions = [
        ["add(1)", "add(3)", "done()"],
        ["done()", "add(1)", "add(2)"],
        ["add(1)", "done()", "done()"],
        ["add(1)", "add(1)", "add(1)"],
    ]
    with pytest.raises(InvalidRequest):  # pool reset options reach every member
        remote.reset(seed=0, options={"nonsense": 1})
    ro, _ = remote.reset(seed=0)
    lo, _ = local.reset(seed=0)
    assert np.array_equal(ro["count"], lo["count"])
    for batch in actions:
        ro, rr, rt, rtr, _ = remote.step(batch)
        lo, lr, lt, ltr, _ = local.step(batch)
        assert np.array_equal(ro["count"], lo["count"])
        assert np.array_equal(rr, lr) and np.array_equal(rt, lt) and np.array_equal(rtr, ltr)
    remote.close()
    local.close()


def test_async_client(gateway):
    async def main():
        async with AsyncClient(gateway) as client:
            made = await asyncio.gather(*(client.create_session(BENCH_ENV) for _ in range(3)))
            sids = [m["session_id"] for m in made]
            await asyncio.gather(*(client.reset(s) for s in sids))
            steps = await asyncio.gather(*(client.step(s, "add(2)") for s in sids))
            await asyncio.gather(*(client.close_session(s) for s in sids))
            return [s["observation"]["count"] for s in steps]

    assert asyncio.run(main()) == [2, 2, 2]
