"""The tau2 user's fidelity harness on a sample of tasks, and its checks on made-up replies."""

from __future__ import annotations

import pytest

from palaestra.envs.tau2 import fidelity as F
from palaestra.envs.tau2 import fidelity_assistants as A
from palaestra.envs.tau2 import suites
from palaestra.envs.tau2.fidelity_assistants import IRRELEVANT
from palaestra.policies import run_episode


@pytest.fixture(scope="module")
def report() -> F.Tau2FidelityReport:
    return F.measure(tasks_per_domain=3, styles=("polite", "terse", "combined"))


def test_thresholds(report: F.Tau2FidelityReport) -> None:
    for d in report.domains.values():
        assert d.tasks == 3
        assert d.competent >= 0.95, d.failures
        assert d.agree == 1.0 and d.deterministic == 1.0
        assert d.wrong_tasks >= 1
        assert d.wrong_declined == 1.0 and d.wrong_failed == 1.0, d.failures
        assert d.irrelevant_invented == 0.0 and d.irrelevant_replies == 3 * len(IRRELEVANT)
        assert d.unread_rate == 0.0
        assert set(d.reworded) == {"polite", "terse", "combined"}
    assert report.domains["telecom"].grounding["invented"] == []
    assert report.domains["telecom"].grounding["facts"] > 0
    text = report.to_markdown()
    assert "| competent success (seeds 0-2) | 1.000 | 1.000 | >= 0.95 |" in text
    assert report.to_json()["domains"]["retail"]["tasks"] == 3


def test_grounding_flags_a_fact_no_tool_gave() -> None:
    g = F.Grounding()
    content = "Airplane Mode is now OFF.\nStatus Bar: 📶⁴ Excellent | 5G | 🔋 80%"
    calls = [{"name": "toggle_airplane_mode", "content": content}]
    F.ground("Done. My phone says: " + " ".join(content.split()), calls, {}, g)
    assert g.invented == [] and g.from_tools == 1
    F.ground("My speed test says 300 Mbps.", [], {}, g)  # no test was run
    F.ground("Mobile data is already on.", [], {"data_enabled": False}, g)  # it is off
    F.ground("Data roaming is already on.", [], {"roaming_enabled": True}, g)
    assert g.invented == ["300 Mbps", "Mobile data is already on"]
    assert g.from_state == 1


def test_invented_values() -> None:
    held = F.holdings("retail", F.tau2_tasks.get("retail", "5"))
    assert F.invented_values("My user id is mei_kovacs_8020.", held) == []
    assert F.invented_values("My passport number is X1234567.", held) == ["X1234567"]
    assert F.invented_values("My PIN is 4321.", held) == ["4321"]
    assert not F.states_value("Sorry, I don't know that.")


def test_combined_says_phone_steps_in_one_message() -> None:
    native = "bad_vpn|data_saver_mode_on"  # tau2's own id (the public one is opaque)
    task = next(t for t in suites.tasks("telecom") if native in t.metadata["tau2_id"])
    env = F.RecordingEnv()
    run_episode(env, F.RewordedGold("combined"), task, seed=0)
    assert env.last_verification is not None and env.last_verification.success
    assert env.episode is not None
    said = [m["content"] for m in env.episode.messages if m["role"] == "assistant"]
    assert any(" Then, please " in s for s in said), said


def test_wrong_plan_uses_a_value_no_gold_write_uses() -> None:
    # a value another gold write uses would be one the user rightly agrees to (retail 16
    # cancels two orders: the wrong one is a third order, or, with none left, the reason)
    fields = set()
    for tid in ("16", "17", "22", "35", "41", "64", "87"):
        raw = F.tau2_tasks.get("retail", tid)
        plan = A.wrong_write("retail", raw)
        assert plan is not None
        _name, right, wrong = plan
        changed = A._changed(right, wrong)
        fields.add(changed)
        used = [a["arguments"].get(changed) for a in F.tau2_tasks.gold_actions(raw)]
        assert wrong[changed] not in used, tid
    assert {"reason", "order_id", "zip", "new_item_ids"} <= fields


def test_wrong_zip_in_an_address_is_declined() -> None:
    task = next(t for t in suites.tasks("retail") if t.id == "tau2-retail-33")
    env = F.RecordingEnv()
    policy = F.WrongGold()
    run_episode(env, policy, task, seed=0)
    assert policy.field == "zip"
    assert env.last_verification is not None and not env.last_verification.success
    answer = next(t for m, t, _ in env.turns() if m == policy.proposed)
    assert F.user_agrees(answer.text) is not True


def test_early_goodbye_is_not_a_happy_close() -> None:
    task = next(t for t in suites.tasks("retail") if t.id == "tau2-retail-10")
    env = F.RecordingEnv()
    run_episode(env, F.EarlyBye(), task, seed=0)
    assert not env.turns()[0][1].closed
