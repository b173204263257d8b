"""The adversary search: it finds a planted cheap win within its budget, is deterministic for a
seed, reports a crashing strategy as an error (never a win or a pass), and validation rejects
a task it beats. Per family, shipped tasks searched for real are in each family's tests
(``tests/envs/*/test_search*.py``)."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import nullcontext
from typing import Any

import pytest

from palaestra.policies import run_episode
from palaestra.tasks import Task
from palaestra.validation import validate
from palaestra.verifiers.base import VerifierResult
from palaestra.verifiers.search import (
    Memory,
    Primitive,
    Search,
    StrategySpace,
    claim,
    dump,
    hedge,
    search,
)
from palaestra.verifiers.validation import ADVERSARY_CEILING, Run

VALUES = ["17", "42", "99", "5", "63", "8", "21", "34"]
RIGHT = "42"


class ToyEnv:
    """Shows a table of values once looked at; an ``answer`` ends the episode. Its verifier
    is right (the one value) unless ``hedge_bug``: then any answer naming the right value
    with "or" passes too (a planted cheap win)."""

    def __init__(self, hedge_bug: bool) -> None:
        self.hedge_bug = hedge_bug
        self.answer = ""
        self.last_verification: VerifierResult | None = None

    def reset(self, seed: int | None = None, options: Any = None) -> tuple[dict, dict]:
        self.answer, self.last_verification = "", None
        return {"shown": []}, {}

    def step(self, action: dict[str, Any]) -> tuple[dict, float, bool, bool, dict]:
        if action["op"] == "look":
            return {"shown": VALUES}, 0.0, False, False, {}
        if action["op"] == "note":
            return {"shown": []}, 0.0, False, False, {}
        self.answer = action["text"]
        result = self.verify()
        self.last_verification = result
        return {"shown": []}, result.score, True, False, {}

    def verify(self) -> VerifierResult:
        ok = self.answer.strip() == RIGHT
        if self.hedge_bug and " or " in self.answer and RIGHT in self.answer.split(" or "):
            ok = True
        return VerifierResult(success=ok, score=float(ok), checks=[])


def _see(memory: Memory, observation: dict[str, Any], info: dict[str, Any]) -> None:
    memory.value(*observation.get("shown", []))
    if observation.get("shown"):
        memory.record({"values": observation["shown"]})
    memory.sentence("Rule: answers are final.")


def _look(memory: Memory, param: int) -> Generator[Any, dict[str, Any], None]:
    yield {"op": "look"}


def _answer(text: str) -> list[Any]:
    return [{"op": "note"}, {"op": "answer", "text": text}]  # two steps: both are played


def _space(*extra: Primitive) -> StrategySpace:
    return StrategySpace(
        [
            Primitive("look", _look),
            hedge(_answer, 2),
            hedge(_answer, 3),
            dump(_answer),
            claim(_answer, "claim_done", ["Done."]),
            *extra,
        ],
        _see,
    )


TASK = Task(id="toy", family="toy", env="toy", instruction="Which value?", max_steps=10)


def _player(env: ToyEnv):
    def play(policy: Any) -> Run:
        episode = run_episode(env, policy, TASK, seed=0)
        result = env.last_verification or env.verify()
        return Run(result, {}, episode.total_reward, episode.actions)

    return play


def test_the_search_finds_a_planted_hedge_win_within_its_budget():
    found = search(_space(), _player(ToyEnv(hedge_bug=True)), budget=40, seed=1)
    assert found["won"], found
    assert found["played"] <= 40
    best = found["best"]
    assert best["success"] and "hedge" in best["strategy"] and "look" in best["strategy"]
    assert any(RIGHT in a and " or " in a for a in best["actions"])


def test_a_sound_verifier_is_not_beaten_and_the_whole_budget_is_played():
    found = search(_space(), _player(ToyEnv(hedge_bug=False)), budget=25, seed=1)
    assert not found["won"]
    assert found["played"] == 25 and not found["errors"]
    assert found["best"]["reward"] == 0.0


def test_the_search_is_deterministic_for_a_seed():
    def trail(seed: int) -> list[str]:
        seen: list[str] = []
        env = ToyEnv(hedge_bug=False)
        play = _player(env)

        def recording(policy: Any) -> Run:
            seen.append(policy.strategy.describe())
            return play(policy)

        search(_space(), recording, budget=15, seed=seed)
        return seen

    assert trail(3) == trail(3)
    assert trail(3) != trail(4)


def _crash(memory: Memory, param: int) -> Generator[Any, dict[str, Any], None]:
    raise RuntimeError("boom")
    yield  # pragma: no cover


def test_a_crashing_strategy_is_an_error_never_a_win():
    space = StrategySpace([Primitive("crash", _crash, final=True)], _see, cuts=())
    found = search(space, _player(ToyEnv(hedge_bug=True)), budget=5, seed=0)
    assert not found["won"] and found["errors"]
    assert "boom" in found["errors"][0] and "best" not in found


def _runner(env: ToyEnv):
    def run(name: str) -> Run:
        actions = {
            "oracle": [{"op": "answer", "text": RIGHT}],
            "noop": [{"op": "answer", "text": ""}],
        }
        from palaestra.policies import ReplayPolicy

        episode = run_episode(env, ReplayPolicy(actions[name]), TASK, seed=0)
        return Run(env.last_verification or env.verify(), {}, episode.total_reward, episode.actions)

    return run


def _validate(env: ToyEnv, space: StrategySpace, budget: int = 40):
    found = Search(space, _player(env), budget=budget, seed=1)
    return validate({}, _runner(env), [], lambda s, m: nullcontext(s), repeats=1, search=found)


def test_validation_rejects_a_task_the_search_beats_and_records_the_best_strategy():
    report = _validate(ToyEnv(hedge_bug=True), _space())
    assert not report.validated and "adversary search found" in (report.reason or "")
    assert report.search["won"] and report.search["budget"] == 40
    assert report.to_json()["search"]["best"]["strategy"]


def test_validation_passes_a_sound_task_and_reports_the_search():
    report = _validate(ToyEnv(hedge_bug=False), _space(), budget=10)
    assert report.validated, report.reason
    assert report.search["played"] == 10 and not report.search["won"]


def test_a_search_that_only_crashed_is_no_pass():
    space = StrategySpace([Primitive("crash", _crash, final=True)], _see, cuts=())
    report = _validate(ToyEnv(hedge_bug=False), space, budget=3)
    assert not report.validated and "played no strategy" in (report.reason or "")


def test_without_a_search_validation_is_unchanged():
    env = ToyEnv(hedge_bug=True)
    report = validate({}, _runner(env), [], lambda s, m: nullcontext(s), repeats=1)
    assert report.validated and report.search == {}


def test_a_strategy_sees_the_task_view_not_the_task():
    private = TASK.model_copy(update={"metadata": {"kind": "secret"}, "setup": {"answer": RIGHT}})
    seen: list[dict[str, Any]] = []

    def spy(memory: Memory, param: int) -> Generator[Any, dict[str, Any], None]:
        seen.append(memory.view)
        yield {"op": "answer", "text": "x"}

    policy = StrategyPolicyFor(spy)
    run_episode(ToyEnv(False), policy, private, seed=0)
    assert seen and "setup" not in seen[0] and "secret" not in str(seen[0])
    assert seen[0]["instruction"] == TASK.instruction


def StrategyPolicyFor(phase: Any) -> Any:
    space = StrategySpace([Primitive("spy", phase, final=True)], _see, cuts=())
    return space.policy(space.sample(__import__("random").Random(0)))


# ----- per family: shipped tasks searched for real (small samples) ----------------------------


def _recording(play: Any) -> tuple[Any, list[list[Any]]]:
    """``play``, keeping every episode's actions (what the strategies really did)."""
    trails: list[list[Any]] = []

    def wrapped(policy: Any) -> Run:
        run = play(policy)
        trails.append([str(a) for a in run.actions])
        return run

    return wrapped, trails


def _holds(found: dict[str, Any], budget: int) -> None:
    assert not found["won"], found["best"]
    assert not found["errors"], found["errors"]
    assert found["played"] == budget and found["best"]["reward"] <= 0.1


@pytest.fixture(scope="module")
def usersim_env():
    from palaestra.envs.usersim.env import UserSimEnv

    env = UserSimEnv()
    yield env
    env.close()


def test_usersim_shipped_tasks_hold_against_the_search(usersim_env):
    from palaestra.envs.runtimes.dialogue import search as strategies
    from palaestra.envs.usersim.suites import suite

    tasks = suite().tasks
    refusals = [t for t in tasks if not t.metadata["grantable"]][:2]
    grants = [t for t in tasks if t.metadata["grantable"]][:2]
    looked = []
    for task in [*refusals, *grants]:
        play, trails = _recording(lambda p, t=task: play_on(usersim_env, t, p))
        _holds(strategies.search_for(task, play).run(ADVERSARY_CEILING), strategies.BUDGET)
        looked.append(any("call_tool" in a for trail in trails for a in trail))
    assert sum(looked) >= 3, looked  # the strategies really look things up


def test_the_usersim_search_finds_a_blind_write_a_weakened_verifier_pays_for(usersim_env):
    """Control: with only the database compared (no rules, nothing told), asking for every
    parameter and then making every write on what was heard wins: the space can win."""
    from palaestra.envs.runtimes.dialogue import search as strategies
    from palaestra.envs.usersim.suites import all_tasks

    task = next(t for t in all_tasks() if t.id == "hotel-15f87d")  # cancel one booking
    db = next(c for c in task.verifier["checks"] if c["kind"] == "usersim_db")
    weak = task.model_copy(update={"verifier": db})
    found = strategies.search_for(weak, lambda p: play_on(usersim_env, weak, p), 30).run(0.1)
    assert found["won"] and "do_all" in found["best"]["strategy"], found.get("best")


def test_tau2_shipped_tasks_hold_against_the_search():
    from palaestra.envs.runtimes.dialogue import search as strategies
    from palaestra.envs.tau2 import suites
    from palaestra.envs.tau2.adversaries import FIX_ALL
    from palaestra.envs.tau2.env import Tau2Env
    from palaestra.envs.tau2.validation import SEARCH_BUDGET

    env = Tau2Env()
    try:
        for task, fixes in [(suites.retail().tasks[3], ()), (suites.telecom().tasks[0], FIX_ALL)]:
            play, trails = _recording(lambda p, t=task: play_on(env, t, p))
            budget = SEARCH_BUDGET
            found = strategies.search_for(task, play, budget, fixes)
            _holds(found.run(ADVERSARY_CEILING), budget)
            assert any("call_tool" in a for trail in trails for a in trail)
    finally:
        env.close()


def play_on(env: Any, task: Task, policy: Any) -> Run:
    from palaestra.verifiers.validation import play

    return play(env, task, policy, strict=False)


@pytest.mark.timeout(600)
def test_a_shipped_phone_task_holds_against_the_search():
    """A booking cancellation validated with the search on (hedges, dumps, crawl-then-claim)."""
    from palaestra.envs.mobile import suites
    from palaestra.synth_apps import strategies
    from palaestra.validation import validate_suite

    task = next(t for t in suites.suite().tasks if t.id == "phone-train-v1-0001")
    report = validate_suite([task], parallel=1)["tasks"][task.id]
    assert report["validated"], report["reason"]
    found = report["search"]
    _holds(found, strategies.BUDGET)


@pytest.mark.timeout(600)
def test_shipped_computer_tasks_hold_against_the_search():
    from palaestra.envs.computer import strategies
    from palaestra.envs.computer.env import ComputerEnv
    from palaestra.envs.computer.suites import all_tasks

    env = ComputerEnv()
    try:
        for task in [t for t in all_tasks() if t.id in ("move-todo", "spreadsheet-convert")]:
            play, trails = _recording(lambda p, t=task: play_on(env, t, p))
            _holds(strategies.search_for(task, play).run(ADVERSARY_CEILING), strategies.BUDGET)
            assert any("run_shell" in a for trail in trails for a in trail)
    finally:
        env.close()


@pytest.mark.timeout(600)
def test_a_shipped_cad_task_holds_against_the_search():
    from palaestra.envs.cad import strategies
    from palaestra.envs.cad.suites import make_task
    from palaestra.envs.cad.validation import run_policy

    task = make_task("plate", 0)
    play, trails = _recording(lambda p: run_policy(task, p, strict=False))
    _holds(strategies.search_for(task, play).run(ADVERSARY_CEILING), strategies.BUDGET)
    assert any("extrude(" in a for trail in trails for a in trail)


def test_every_shipped_usersim_task_was_searched_and_held():
    from palaestra.envs.runtimes.dialogue import search as strategies
    from palaestra.envs.usersim.suites import suite

    for task in suite().tasks:
        found = task.validation["search"]
        assert found["budget"] == strategies.BUDGET and found["played"] >= 1, task.id
        assert not found["won"] and found["best"]["reward"] <= ADVERSARY_CEILING, task.id
