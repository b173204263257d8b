"""The simulated user on its own: symbolic answers, guards, personas, determinism."""

import pytest

from palaestra.envs.runtimes.simuser import lexicon
from palaestra.envs.runtimes.simuser.bridge import AskUser
from palaestra.envs.runtimes.simuser.user import Goal, SimulatedUser
from palaestra.envs.runtimes.simuser.wording import PERSONAS
from palaestra.envs.usersim.world import domain

GOAL = Goal(
    "cancel",
    "cancel my flight reservation",
    {"reservation_id": "ZFA04Y"},
    ("refund",),
)


def user(persona="terse", seed=0, goal=GOAL):
    return SimulatedUser(domain("airline"), goal, persona, seed)


def test_a_request_is_answered_with_the_goal_value_and_nothing_else():
    turn = user().reply("Could you tell me your reservation number?")
    assert "ZFA04Y" in turn.text and not turn.closed
    assert turn.acts[0][0] == "inform"


def test_a_question_about_an_unknown_fact_gets_no_invented_value():
    u = user()
    turn = u.reply("What is your user id?")
    assert turn.acts == [("dont_know", {"label": "user id"})]
    assert lexicon.of(domain("airline")).slot_values(turn.text) == {}


def test_a_proposal_with_the_wrong_value_is_refused_and_corrected():
    turn = user().reply("I will cancel reservation QQ12RT. Shall I proceed?")
    assert turn.acts[0][0] == "negate" and "ZFA04Y" in turn.text
    turn = user().reply("I will cancel reservation ZFA04Y. Shall I proceed?")
    assert turn.acts == [("affirm", {})]


def test_stop_guard_the_user_does_not_leave_before_its_goal_is_met():
    u = user()
    assert u.reply("Have a nice day, goodbye!").acts[0][0] == "wait"
    assert u.reply("Is there anything else I can help you with?").acts[0][0] == "wait"
    u.reply("Reservation ZFA04Y has been cancelled.")
    # done, but the refund it wanted to know was not told: it asks, does not close
    assert not u.goal_met
    turn = u.reply("Is there anything else?")
    assert turn.acts[0][0] == "request" and not turn.closed
    turn = u.reply("The refund of $120.00 has been issued.")
    assert turn.closed and u.goal_met


def test_a_grantable_request_refused_is_insisted_on_then_given_up():
    u = user()
    assert u.reply("Unfortunately I cannot do that.").acts[0][0] == "insist"
    assert u.reply("I'm afraid it is not possible.").acts[0][0] == "insist"
    assert u.reply("Sorry, but I cannot cancel it.").acts[0][0] == "accept_refusal"
    assert u.state.outcome == "refused"


def test_an_ungrantable_request_accepts_a_clear_refusal_at_once():
    goal = Goal("cancel", "cancel my flight reservation", {"reservation_id": "ZFA04Y"}, (), False)
    u = user(goal=goal)
    assert u.reply("I'm sorry, but I cannot cancel it: it is basic economy.").acts[0][0] == (
        "accept_refusal"
    )
    assert u.reply("Anything else?").closed


def test_same_seed_same_words_and_personas_change_wording_never_facts():
    said = {}
    for persona in PERSONAS:
        texts = []
        for _ in range(2):
            u = user(persona, seed=5)
            texts.append([u.opening(), u.reply("What is your reservation number?").text])
        assert texts[0] == texts[1]
        said[persona] = texts[0][1]
        assert "ZFA04Y" in texts[0][1]
        assert lexicon.of(domain("airline")).slot_values(texts[0][1]) == {
            "reservation_id": ["ZFA04Y"]
        }
    assert len(set(said.values())) > 1


def test_the_tracker_refuses_wording_that_invents_or_drops_a_value():
    u = user()
    parts = [("inform", {"label": "reservation number", "value": "ZFA04Y"})]
    assert u.tracker_ok("It's ZFA04Y.", parts)
    assert not u.tracker_ok("It's ZFA04Y, or maybe QQ12RT.", parts)  # invented
    assert not u.tracker_ok("I have it somewhere.", parts)  # dropped
    assert not u.tracker_ok("No.", [("affirm", {})])  # says the opposite


def test_unknown_persona_is_refused():
    with pytest.raises(ValueError, match="unknown persona"):
        user("grumpy")


def test_ask_user_answers_from_hidden_details_only():
    ask = AskUser({"card number": "4929123412341234", "seat class": "First"}, "book a train")
    assert "4929123412341234" in ask.answer("What card number should I use?")
    assert "First" in ask.answer("Which class do you want")
    answer = ask.answer("What is your date of birth?")
    assert "don't know" in answer and not any(ch.isdigit() for ch in answer)
