"""Every MiniWoB task the miniwob package ships resets and steps through the gateway."""

import pytest

from palaestra.client import RemoteEnv
from palaestra.envs.web.suites import task_names

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_suite_lists_every_packaged_task(gateway):
    from palaestra.client import Client

    listed = {t["id"] for t in Client(gateway).tasks("miniwob")}
    assert listed == set(task_names()) and len(listed) >= 100


@pytest.mark.timeout(900)
def test_every_task_resets_and_steps(gateway):
    names = list(task_names())
    envs = {}
    failures = []
    for name in names:
        kind = "flight" if name.startswith("flight.") else "page"
        if kind not in envs:
            envs[kind] = RemoteEnv(
                task=f"miniwob/{name}",
                base_url=gateway,
                transport="ws",
                options={"observe": ["axtree", "goal", "url"]},
            )
        env = envs[kind]
        try:
            obs, info = env.reset(seed=1, options={"task": f"miniwob/{name}"})
            assert info["task"]["id"] == name and obs["goal"], "no goal"
            obs, *_ = env.step("noop(0)")
            assert env.observation_space.contains(obs) and obs["axtree"], "empty tree"
            assert obs["last_action_error"] == "", obs["last_action_error"]
        except Exception as exc:  # collect all, report together
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    for env in envs.values():
        env.close()
    assert not failures, "\n".join(failures)
