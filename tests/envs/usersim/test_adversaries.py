"""The usersim verifier against cheap strategies (issue 16) and without the user's reader
(issue 21, item 3): a fixed refusal, a dump of every restaurant, a done claim earn nothing; a
correct refusal in other words, with its evidence, still scores."""

from typing import Any

import pytest

from palaestra.envs.usersim import FAMILY, suites
from palaestra.envs.usersim import validation as plan
from palaestra.envs.usersim.env import UserSimEnv
from palaestra.envs.usersim.policies import ScriptedAssistant
from palaestra.policies import ReplayPolicy, run_episode
from palaestra.tasks import get_suite
from palaestra.validation import validate_task
from palaestra.verifiers.validation import ADVERSARY_CEILING


@pytest.fixture(scope="module")
def env():
    made = UserSimEnv(persona="terse")
    yield made
    made.close()


@pytest.fixture(scope="module")
def generated():
    """Every generated task, those validation drops included: 160, 33 of them refusals."""
    return suites.all_tasks()


def _refused(tasks: list[Any]) -> list[Any]:
    return [t for t in tasks if not t.metadata["grantable"]]


def test_a_fixed_refusal_scores_nothing_on_any_task(env, generated):
    assert len(generated) == 160 and len(_refused(generated)) == 33
    won = []
    for task in generated:
        run_episode(env, FAMILY.policy("refuse_fixed"), task, seed=0)
        result = env.last_verification
        if result.success or result.score > 0:
            won.append(task.id)
    assert won == []  # was 33 of 160 with the user's reader judging the refusal


def test_dumping_every_restaurant_scores_nothing(env, generated):
    hotel = [t for t in generated if t.setup["domain"] == "hotel"]
    assert any(t.metadata["intent"] == "restaurant_info" for t in hotel)
    env.reset(seed=0, options={"task": hotel[0]})
    env.step({"name": "call_tool", "args": {"name": "find_restaurants", "arguments": {}}})
    everything = env.episode.tool_result
    assert everything.count("01223 ") == 24  # every restaurant's phone number and address
    dump = [
        {"name": "send_message", "args": {"text": f"Here you go: {everything}"}},
        {"name": "end_conversation", "args": {}},
    ]
    for task in hotel:
        played = run_episode(env, ReplayPolicy(dump), task, seed=0)
        assert played.total_reward == 0 and not env.last_verification.success, task.id


def test_the_shipped_suite_is_validated_against_every_adversary():
    suite = get_suite("usersim")
    names = FAMILY.adversary_names()
    assert len(names) == 9 and {"refuse_fixed", "hand_off", "dump_facts"} <= set(names)
    for task in suite.tasks:
        report = task.validation
        assert report["oracle_scores"] == [1.0, 1.0, 1.0], task.id  # the competent assistant
        assert set(report["adversaries"]) == set(names), task.id
        for name, played in report["adversaries"].items():
            assert not played["success"] and played["reward"] <= ADVERSARY_CEILING, (task.id, name)


class _Reworded(ScriptedAssistant):
    """The competent assistant whose refusal is said in other words: none of "cannot",
    "unable", "unfortunately" or "I'm afraid", and not the reference's sentence."""

    def _tell(self, step: dict[str, Any]) -> str:
        if self.setup["goal"].get("grantable", True):
            return super()._tell(step)
        check = next(c for c in self.task_checks if c["kind"] == "usersim_refused")
        return reworded(check["rule"], check["reason"], self.setup["goal"]["facts"])

    def reset(self, task: Any) -> None:
        super().reset(task)
        self.task_checks = task.verifier["checks"]


def reworded(rule: str, reason: list[list[str]], facts: dict[str, str]) -> str:
    number = next((p[1:] for p in reason[0] if p.startswith("#")), "")
    people = facts.get("people") or facts.get("passengers") or "you"
    colour = reason[-1][0]  # out of stock: the variant's colour
    return {
        "cancel_window": "That reservation was made over a day ago and has no travel insurance, "
        "so a refund is not possible.",
        "certificate_eligibility": "Certificates are reserved for Gold members and business "
        "travellers, and this reservation doesn't qualify.",
        "basic_economy": "Basic economy fares are not changeable, so the flight stays as it is.",
        "departed": "That flight departed already, so there is nothing left to cancel.",
        "seats_left": f"Just {number} seats remain there, which won't fit a party of {people}."
        if number != "0"
        else "That flight is fully booked: there are no seats remaining.",
        "party_limit": f"The largest party we take is {number}, so {people} won't fit.",
        "cancel_before_day": "That booking is for today, and a booking may only be called off "
        "before its day.",
        "already_cancelled": "That one was cancelled earlier, so there is nothing to cancel now.",
        "out_of_stock": f"The {colour} one is sold out right now, so the swap won't work.",
        "return_pending": "A return was already requested for this order, so no other change is "
        "possible.",
        "delivered": "It was delivered already, so it's too late to call it off.",
        "train_full": "That train doesn't have enough free seats for your party.",
    }[rule]


def test_a_correct_refusal_in_other_words_scores_with_its_evidence(env, generated):
    refusals = _refused(generated)
    rules = set()
    for task in refusals:
        played = run_episode(env, _Reworded("competent", seed=0), task, seed=0)
        said = env.state_probe().read()["said"]
        assert not any(
            w in s.lower()
            for s in said
            for w in ("cannot", "unable", "unfortunately", "i'm afraid")
        )
        assert env.last_verification.success and played.reward == 1.0, (task.id, said[-2:])
        rules.add(next(c["rule"] for c in task.verifier["checks"] if "rule" in c))
    assert len(rules) == 12  # every rule a refusal is judged by


def test_the_same_refusal_without_looking_scores_nothing(env, generated):
    task = next(t for t in _refused(generated) if t.setup["domain"] == "hotel")
    check = next(c for c in task.verifier["checks"] if c["kind"] == "usersim_refused")
    text = reworded(check["rule"], check["reason"], task.setup["goal"]["facts"])
    say = [{"name": "send_message", "args": {"text": text}}, {"name": "end_conversation"}]
    run_episode(env, ReplayPolicy(say), task, seed=0)
    refused = next(c for c in env.last_verification.checks if c.kind == "usersim_refused")
    assert not refused.passed and refused.detail == "refused without looking it up"


def test_a_task_an_adversary_beats_is_dropped_with_its_name_and_trajectory(generated, monkeypatch):
    # a refusal check that wants no lookup: its own mutant would reject it before any
    # adversary plays, so that mutant is left out here
    monkeypatch.setattr(plan, "LOOKED_NOWHERE", plan.MUTATIONS[0])
    task = _refused(generated)[0]
    weak = [
        {"kind": "usersim_refused", "looked": [], "reason": [["sorry"]]}
        if c["kind"] == "usersim_refused"
        else c
        for c in task.verifier["checks"]
    ]
    weakened = task.model_copy(update={"verifier": {"kind": "all", "checks": weak}})
    report = validate_task(weakened)
    assert not report.validated and "adversary 'refuse_fixed'" in report.reason
    beaten = report.adversaries["refuse_fixed"]
    assert beaten["success"] and any("cannot help" in a for a in beaten["actions"])


@pytest.mark.parametrize(
    "text, passed",
    [
        ("Regrettably I must turn this down: that booking is for 12/01/2026.", True),
        ("That one's on the 1st of December, which is too late to call it off.", True),
        ("No can do, it is today's booking.", True),
        ("Your booking HB-20083 is on 2026-12-01.", False),  # a read-back says no "no"
        ("I'm sorry, but I cannot cancel booking HB-20083.", False),  # no reason named
        ('{"status": "booked", "day": "2026-12-01", "refund": "no"}', False),  # a paste
    ],
)
def test_a_refusal_is_judged_by_the_verifiers_own_matcher(text, passed):
    from palaestra.verifiers.base import DeclarativeVerifier
    from palaestra.verifiers.validation import StaticProbe

    state = {
        "said": ["Could you tell me the booking reference?", text],
        "calls": [{"name": "get_booking", "args": {"reference": "hb-20083"}, "after": 1}],
    }
    check = {
        "kind": "usersim_refused",
        "looked": [{"name": "get_booking", "args": {"reference": "HB-20083"}}],
        "reason": [["@2026-12-01", "today"]],
    }
    assert DeclarativeVerifier(check).verify(StaticProbe(state)).success is passed


def test_told_facts_are_read_in_any_format_and_counted_for_precision():
    from palaestra.verifiers.usersim import _said, precision

    assert _said(["It leaves at 6:20am."], "06:20") and _said(["It's $230."], "230.00")
    assert precision(["It leaves at 6:20 am, not 7 PM."], [], ["06:20"])[0] == 0.5
    told = "HB-12345 is yours; HB-22222 and HB-33333 are someone else's."
    assert precision([told], [], ["HB-12345"])[0] < 0.5


def test_a_refusal_check_that_cannot_see_the_tool_log_is_an_error_not_a_pass():
    from palaestra.verifiers.base import DeclarativeVerifier
    from palaestra.verifiers.validation import StaticProbe

    check = {"kind": "usersim_refused", "looked": [], "reason": [["basic economy"]]}
    state = {"said": ["No: basic economy fares are not changeable."]}  # no "calls" in it
    result = DeclarativeVerifier(check).verify(StaticProbe(state))
    assert result.error and "calls" in result.error and not result.success
