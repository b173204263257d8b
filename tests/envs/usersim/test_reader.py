"""The simulated user's reader understands what assistants actually say (issue 21's phrases),
and never agrees to a proposal with a missing or wrong value, in any format."""

import pytest

from palaestra.envs.runtimes.simuser import acts as A
from palaestra.envs.runtimes.simuser.user import Goal, SimulatedUser
from palaestra.envs.runtimes.simuser.values import canonical, same_value
from palaestra.envs.usersim import fidelity
from palaestra.envs.usersim.reworded import STYLES
from palaestra.envs.usersim.suites import generate
from palaestra.envs.usersim.world import domain


def kinds(dom, text):
    return [(a.kind, a.slot) for a in A.read(domain(dom), text)]


@pytest.mark.parametrize(
    ("dom", "text", "slot"),
    [
        ("airline", "What is your confirmation code?", "reservation_id"),
        ("train", "Booking ref?", "reference"),
        ("train", "Could you give me the passenger's full name?", "passenger"),
        ("train", "How many tickets?", "passengers"),
        ("hotel", "For how many?", "people"),
        ("hotel", "How long will you be staying?", "nights"),
        ("hotel", "When would you like to go?", "day"),
        ("train", "How would you like to pay?", "card"),
        ("retail", "Please provide the order ID.", "order_id"),
        ("retail", "I'll need your email address.", "email"),
        ("airline", "What's the number of the new flight?", "flight_number"),
        ("airline", "How many bags?", "bags"),
        ("train", "What's the name on the reservation?", "passenger"),
    ],
)
def test_requests_in_any_form(dom, text, slot):
    assert kinds(dom, text) == [(A.REQUEST, slot)]


def test_several_slots_in_one_request():
    got = kinds("airline", "Could you give me your user ID, the flight number and the cabin class?")
    assert got == [(A.REQUEST, s) for s in ("user_id", "flight_number", "cabin")]


def test_a_question_about_something_no_slot_holds_is_not_answered_with_another_slot():
    user = SimulatedUser(
        domain("airline"), Goal("x", "x", {"reservation_id": "ZFA04Y"}), "terse", 0
    )
    turn = user.reply("What's the name on the reservation?")
    assert "ZFA04Y" not in turn.text and [k for k, _ in turn.acts] == ["not_needed"]


# words outside the lexicon, read by generalisation (none of them is in the phrasing banks)
@pytest.mark.parametrize(
    ("dom", "text", "slot"),
    [
        ("hotel", "Need the guestcount.", "people"),  # a closed compound, by its head
        ("retail", "Kindly state the motive for the cancellation.", "reason"),  # shared stems
        ("airline", "Go ahead and send me the tripcount.", "passengers"),  # not a consent
        ("train", "Your ticket class, please.", "seat_class"),  # an elliptic instruction
    ],
)
def test_requests_in_words_outside_the_lexicon_are_guessed(dom, text, slot):
    assert kinds(dom, text) == [(A.REQUEST, slot)]


def test_a_guess_between_slots_is_answered_with_the_one_the_goal_holds():
    assert [a.alternatives for a in A.read(domain("hotel"), "What is the name of the venue?")] == [
        ("restaurant", "hotel")
    ]
    for venue, fact in (("restaurant", "El Toro"), ("hotel", "Gonville Hotel")):
        user = SimulatedUser(domain("hotel"), Goal("book", "book", {venue: fact}), "terse", 0)
        assert fact in user.reply("What is the name of the venue?").text


def test_a_guess_never_reads_a_verb_or_a_proposal_as_a_request():
    assert kinds("hotel", "What did you book?") == [(A.UNREAD, None)]
    assert kinds("airline", "Please give me the go-ahead.") == [(A.CONFIRM, None)]
    proposal = kinds("airline", "Cancel reservation ZFA04Y? Yes or no?")
    assert proposal[0][0] in (A.CONFIRM, A.OFFER) and A.REQUEST not in dict(proposal)


PROPOSAL = "I'll cancel reservation ZFA04Y with a full refund of $200.00"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"{PROPOSAL}. Does that sound good?", A.CONFIRM),
        (f"{PROPOSAL}. Please confirm that you'd like me to go ahead.", A.CONFIRM),
        (f"{PROPOSAL}. Please reply 'yes' to confirm.", A.CONFIRM),
        (f"{PROPOSAL}. Confirm?", A.CONFIRM),
        (f"{PROPOSAL}, OK?", A.CONFIRM),
        ("Would you like me to cancel reservation ZFA04Y?", A.CONFIRM),
        ("Cancel reservation ZFA04Y?", A.OFFER),  # a bare question naming the action
        (f"{PROPOSAL} as soon as you say so.", A.CONFIRM),  # conditional on the user
    ],
)
def test_confirmations_in_any_form_get_a_yes(text, kind):
    """Each form is read as exactly one request for the user's yes (every parameter checked:
    none passes on the reply alone), and the user, who wants that cancellation, says yes."""
    goal = Goal("cancel", "cancel my flight reservation", {"reservation_id": "ZFA04Y"})
    user = SimulatedUser(domain("airline"), goal, "terse", 0)
    assert kinds("airline", text) == [(kind, None)]
    assert A.user_agrees(user.reply(text).text) is True


@pytest.mark.parametrize(
    ("dom", "text", "kind"),
    [
        ("airline", "Reservation ZFA04Y is cancelled.", A.DONE),
        ("airline", "Reservation ZFA04Y was cancelled.", A.DONE),
        ("hotel", "Your room is booked.", A.DONE),
        (
            "airline",
            "Reservation ZFA04Y isn't eligible for cancellation: it is basic economy.",
            A.REFUSE,
        ),
        ("retail", "I have to decline that: the order was already delivered.", A.REFUSE),
        ("retail", "Our policy doesn't let me cancel a delivered order.", A.REFUSE),
        ("hotel", "Can I help with anything else?", A.ANYTHING_ELSE),
        ("hotel", "Will that be all?", A.ANYTHING_ELSE),
        ("hotel", "Is that everything?", A.ANYTHING_ELSE),  # a short question about no slot
        ("hotel", "Anything more?", A.ANYTHING_ELSE),
        ("hotel", "Is that it?", A.ANYTHING_ELSE),
        ("airline", "I can't cancel reservation ZFA04Y once you have flown.", A.REFUSE),
    ],
)
def test_reports_refusals_and_closings(dom, text, kind):
    assert [k for k, _ in kinds(dom, text)] == [kind]


def test_reports_answer_what_the_user_asked():
    goal = Goal("x", "x", {"reservation_id": "ZFA04Y"}, ("refund",))
    user = SimulatedUser(domain("airline"), goal, "terse", 0)
    user.reply("Reservation ZFA04Y is cancelled. You'll get $200 back.")
    assert user.state.answered == {"refund": "200.00"} and user.goal_met
    goal = Goal("x", "x", {"restaurant": "Golden Wok"}, ("phone",), action=False)
    user = SimulatedUser(domain("hotel"), goal, "terse", 0)
    user.reply("Their number is 01223 238596.")
    assert user.state.answered == {"phone": "01223 238596"}


def test_values_in_any_format():
    assert canonical("three people, a party of 4") == "3 people, 4 people"
    assert canonical("8:30 PM, 07:30 PM") == "20:30, 19:30"
    assert canonical("December 31 or 12/31/2026") == "--12-31 or 2026-12-31"
    assert canonical("968 dollars") == "$968.00" and canonical("$1,234.50") == "$1,234.50"
    assert same_value("--12-31", "2026-12-31") and not same_value("--12-30", "2026-12-31")
    assert same_value("…D7", "ZFA0D7") and not same_value("…D7", "ZFA04Y")


TABLE = {"restaurant": "El Toro", "people": "4", "day": "2026-12-31", "time": "19:30"}


@pytest.mark.parametrize(
    ("when", "agrees"),
    [
        ("a party of 4 on December 31 at 07:30 PM", True),  # a correct "07:30 PM" is kept
        ("four people on Dec 31st at 7:30pm", True),
        ("three people on December 31 at 7:30 PM", False),
        ("a party of 4 on December 30 at 7:30 PM", False),
        ("4 people on December 31 at 8:30 PM", False),
    ],
)
def test_wrong_values_in_any_format_are_refused(when, agrees):
    user = SimulatedUser(domain("hotel"), Goal("book", "book a table", TABLE), "terse", 0)
    turn = user.reply(f"Shall I book a table at El Toro for {when}?")
    assert A.user_agrees(turn.text) is agrees, turn.text


@pytest.mark.parametrize(
    "text",
    [
        "I can't cancel reservation ZFA04Y once you have flown.",  # a refusal, not a proposal
        "I'll cancel reservation ZFA0D7 as soon as you say so.",  # a wrong value
        "Go ahead and give me the reason, then I'll cancel reservation ZFA0D7.",
    ],
)
def test_a_refusal_or_a_wrong_value_is_never_agreed_to(text):
    goal = Goal("cancel", "cancel", {"reservation_id": "ZFA04Y"})
    user = SimulatedUser(domain("airline"), goal, "terse", 0)
    turn = user.reply(text)
    assert "affirm" not in [k for k, _ in turn.acts], turn


def test_a_code_by_its_ending():
    goal = Goal("cancel", "cancel", {"reservation_id": "ZFA04Y"})
    user = SimulatedUser(domain("airline"), goal, "terse", 0)
    turn = user.reply("Shall I cancel the reservation ending in D7?")
    assert A.user_agrees(turn.text) is False and "ZFA04Y" in turn.text


def test_a_proposal_lacking_a_fact_is_not_agreed_to():
    facts = {"train": "IC 041", "passenger": "Chloe Varga", "passengers": "2"}
    user = SimulatedUser(domain("train"), Goal("book", "book a train", facts), "terse", 0)
    user.reply("Which train?")
    user.reply("How many tickets?")
    turn = user.reply("I will book 2 seats on train IC 041, total $50.00. Shall I proceed?")
    assert A.user_agrees(turn.text) is False and "Chloe Varga" in turn.text


def test_an_unreadable_message_gets_a_clarification_and_is_logged_unread():
    user = SimulatedUser(domain("airline"), Goal("x", "x", {}), "terse", 0)
    turn = user.reply("Zorp the fizzwidget?")
    assert turn.acts == [("clarify", {})] and "okay" not in turn.text.lower()
    assert user.log[-1]["unread"] is True


@pytest.fixture(scope="module")
def sample():
    return [t for d in ("airline", "hotel", "retail", "train") for t in generate(d)[::13]]


def test_every_style_with_the_competent_decisions(sample):
    report = fidelity.measure_styles(sample, STYLES, ("seen", "heldout"), wrong=True)
    for bank in ("seen", "heldout"):
        for style in STYLES:
            assert report.success[bank][style] >= 0.9, (bank, style, report.failures)
            assert report.wrong[bank][style] == 0.0, (bank, style)
            assert 0.0 < report.first_try[bank][style] <= 1.0


def test_held_out_words_are_read_without_rephrasing():
    """The reader's own generalisation, with no second chance: the assistant never rephrases,
    and the held-out bank still succeeds (the first-try read rate is reported apart)."""
    tasks = [t for d in ("airline", "hotel", "retail", "train") for t in generate(d)[::20]]
    styles = ("polite", "terse", "instructions", "combined")
    report = fidelity.measure_styles(tasks, styles, ("heldout",), wrong=False, rephrase=False)
    assert all(report.rephrased["heldout"][s] == 0 for s in styles)
    assert min(report.success["heldout"].values()) >= 0.85, report.failures


def test_an_unread_message_is_rephrased_once_in_other_words():
    from palaestra.envs.runtimes.simuser import wording
    from palaestra.envs.usersim.reworded import RewordedAssistant

    policy = RewordedAssistant("terse", bank="heldout")
    policy.reset(generate("airline")[0])
    first = policy.act({"user_message": "Hi"}, {})
    assert first["name"] == "send_message" and policy.first_tries == 1
    clarify = f"Look, {wording.CORE['clarify'][1].lower()} Quickly, please."
    again = policy.act({"user_message": clarify}, {})
    assert again["name"] == "send_message" and again["args"]["text"] != first["args"]["text"]
    assert (policy.rephrased, policy.first_unread, policy.first_tries) == (1, 1, 1)


def test_the_hand_written_lexicon_holds_no_held_out_phrasing():
    """The held-out and fresh phrasing banks measure words nobody tuned the reader for: none
    of their slot names or questions is in the reader's hand-written synonym tables, unless the
    seen bank or a domain's own slot words have it too."""
    from palaestra.envs.runtimes.simuser import lexicon
    from palaestra.envs.usersim import reworded
    from palaestra.envs.usersim.world import domain_names

    def phrases(bank):
        names = {n.lower() for v in reworded.NAMES[bank].values() for n in v}
        return names | {q.lower().rstrip("?") for v in reworded.QUESTIONS[bank].values() for q in v}

    tables = [*lexicon.SYNONYMS.values(), *lexicon.KIND_WORDS.values()]
    hand = {p for table in tables for p in table}
    own = phrases("seen")
    for name in domain_names():
        for slot in domain(name).slots.values():
            own |= {w.lower() for w in slot.words} | {slot.label.lower()}
    for bank in ("heldout", "fresh"):
        assert (phrases(bank) & hand) - own == set(), bank
