import pytest

from palaestra import registry
from palaestra.errors import InvalidRequest, ResetNeeded

ENV = "palaestra-bench/Overhead-v0"


def test_lifecycle_error_truncation_and_verifier():
    env = registry.make(ENV, task="palaestra-bench/count-to-3")
    with pytest.raises(ResetNeeded):
        env.step("add(1)")
    obs, info = env.reset(seed=0)
    assert info["task"]["id"] == "count-to-3" and "oracle" not in info["task"]
    obs, reward, term, trunc, info = env.step("add('x')")
    assert "must be int" in obs["last_action_error"] and obs["count"] == 0
    obs, reward, term, trunc, info = env.step("add(3)")
    assert obs["last_action_error"] == "" and obs["count"] == 3
    obs, reward, term, trunc, info = env.step("done()")
    assert term and not trunc and reward == 1.0
    assert info["verifier"] == {"score": 1.0, "success": True, "error": None}
    assert env.last_verification.checks[0].detail == "count = 3"  # privileged, not in info
    with pytest.raises(ResetNeeded):
        env.step("add(1)")


def test_truncation_at_max_steps_scores_the_state():
    env = registry.make(ENV, task="palaestra-bench/count-to-3", max_steps=2)
    env.reset()
    env.step("add(1)")
    _, reward, term, trunc, info = env.step("add(1)")
    assert trunc and not term and reward == 0.0 and info["verifier"]["success"] is False


def test_dense_reward_sums_to_the_final_score():
    env = registry.make(
        ENV,
        task={
            "id": "d",
            "family": "bench",
            "env": ENV,
            "instruction": "two of three",
            "verifier": {
                "kind": "all",
                "checks": [
                    {"kind": "in_range", "path": "count", "min": 1},
                    {"kind": "in_range", "path": "count", "min": 2},
                ],
            },
        },
        dense_reward=True,
    )
    env.reset()
    rewards = [env.step("add(1)")[1], env.step("add(1)")[1], env.step("done()")[1]]
    assert rewards == [0.5, 0.5, 0.0] and sum(rewards) == 1.0


def test_no_task_means_no_verifier_and_bad_task_is_invalid():
    env = registry.make(ENV)
    env.reset()
    _, reward, term, _, info = env.step("done()")
    assert term and reward == 0.0 and "no task" in info["verifier"]["error"]
    with pytest.raises(InvalidRequest):
        registry.make(ENV, task={"id": "x"})


def test_unknown_reset_options_are_refused():
    env = registry.make(ENV)
    with pytest.raises(InvalidRequest) as err:
        env.reset(options={"taks": "palaestra-bench/count-to-3"})
    assert "taks" in err.value.detail
