"""The kernel's generic adversary pieces, on a counting env (no family needed)."""

from palaestra.policies import (
    CoroutinePolicy,
    GiveUpPolicy,
    RepeatLastPolicy,
    ReplayPolicy,
    ScriptPolicy,
    run_episode,
)


class Echo:
    """An env that shows the step count and refuses the action "bad"."""

    def reset(self, seed=None, options=None):
        self.n = 0
        return {"n": 0}, {}

    def step(self, action):
        self.n += 1
        obs = {"n": self.n, "last_action_error": "refused" if action == "bad" else ""}
        return obs, 0.0, action == "done", False, {}


def played(policy, max_steps=20):
    return run_episode(Echo(), policy, max_steps=max_steps).actions


def test_script_and_coroutine_policies():
    assert played(ScriptPolicy(lambda task: ["a", "b"])) == ["a", "b"]

    def look_then_act(task):
        obs = yield  # the first observation, before the first action
        while obs["n"] < 2:
            obs = yield f"step{obs['n']}"

    assert played(CoroutinePolicy(look_then_act)) == ["step0", "step1"]


def test_repeat_last_replays_the_last_accepted_action():
    inner = ReplayPolicy(["open", "submit", "bad", "done"])
    policy = RepeatLastPolicy(inner, lambda a: a == "done", before=["back"], times=2, end="done")
    assert played(policy) == ["open", "submit", "bad", "back", "submit", "back", "submit", "done"]


def test_give_up_ends_with_the_fallback():
    class Broken(ReplayPolicy):
        def act(self, observation, info):
            if observation["n"] == 1:
                raise LookupError("nothing to click")
            return super().act(observation, info)

    assert played(GiveUpPolicy(Broken(["a", "b"]), fallback="done")) == ["a", "done"]
    assert played(GiveUpPolicy(Broken(["a", "b"]))) == ["a"]
