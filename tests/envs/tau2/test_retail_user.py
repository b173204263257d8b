"""The symbolic user of tau2 retail and the gold assistant that measures it.

The gold assistant learns the customer's identity from what the user says, so its pass rate
through the env measures the user; the full 114-task figure is a benchmark (reported in the
closing note), a sample runs here.
"""

import json
import re

import pytest

from palaestra.envs.runtimes.simuser.acts import user_agrees
from palaestra.envs.tau2 import fidelity as F
from palaestra.envs.tau2 import fidelity_assistants as A
from palaestra.envs.tau2 import retail, schemas, store, suites, world
from palaestra.envs.tau2 import tasks as tt
from palaestra.envs.tau2.env import Tau2Env
from palaestra.envs.tau2.gold import GoldAssistant
from palaestra.envs.tau2.retail_gold import TRANSFER_MESSAGE, identity, proposal
from palaestra.envs.tau2.retail_terms import request_text
from palaestra.envs.tau2.retail_user import RetailUser
from palaestra.policies import run_episode

#: one task of each shape: two exchanges, a second email, a zip said wrong twice, a move, an
#: address kept secret, a gold write tau2 rejects, a transfer, no write at all, three cancels
SAMPLE = ["0", "5", "22", "35", "39", "50", "54", "57", "64", "67", "87", "105", "113"]


@pytest.fixture(scope="module")
def suite():
    return {t.setup["task_id"]: t for t in suites.tasks("retail")}


def play(suite, tid, seed=0):
    env = Tau2Env()
    run_episode(env, GoldAssistant(), suite[tid], seed=seed)
    return env


def writes(tid):
    return [a for a in tt.gold_actions(tt.get("retail", tid)) if a["name"] in retail.WRITE]


@pytest.mark.parametrize("tid", SAMPLE)
def test_gold_assistant_with_the_user_scores_one(suite, tid):
    env = play(suite, tid)
    verdict = env.last_verification
    assert verdict.score == 1.0, verdict.checks
    ep = env.episode
    assert not ep.violations
    assert not any(e.get("unread") for e in ep.user.log)
    # a user with gold writes closes once they are done; without, the assistant ends
    assert ep.ended_by == ("user" if writes(tid) else "assistant")


def test_same_seed_same_conversation_and_seeds_agree(suite):
    runs = [play(suite, "35", seed) for seed in (0, 0, 7)]
    said = [[m["content"] for m in r.episode.messages] for r in runs]
    assert said[0] == said[1]
    assert {r.last_verification.score for r in runs} == {1.0}


def test_a_user_that_withholds_its_identity_fails_the_gold(suite, monkeypatch):
    monkeypatch.setattr(RetailUser, "_give", lambda self, slot: None)
    env = play(suite, "0")
    assert env.last_verification.score < 1.0
    assert "don't" in env.episode.messages[2]["content"]


def _other_order(tid, args):
    """One of the user's orders that no gold write of the task touches."""
    conn = store.fresh()
    owner = store.get(conn, "orders", args["order_id"])["user_id"]
    touched = {a["arguments"].get("order_id") for a in writes(tid)}
    orders = store.get(conn, "users", owner)["orders"]
    return next((o for o in orders if o not in touched), "#W0000000")


@pytest.mark.parametrize("tid", ["0", "5", "35", "54", "74", "87"])
def test_wrong_proposals_get_a_no_and_the_right_one_a_yes(tid):
    task = tt.get("retail", tid)
    w = world.open_world("retail", task)
    conn = store.fresh()
    for action in writes(tid):
        name, args = action["name"], action["arguments"]
        wrong = [dict(args, order_id=_other_order(tid, args))] if "order_id" in args else []
        if args.get("item_ids"):
            order = store.get(conn, "orders", args["order_id"])
            others = [i["item_id"] for i in order["items"] if i["item_id"] not in args["item_ids"]]
            if others:
                wrong.append(dict(args, item_ids=[others[0], *args["item_ids"][1:]]))
        if args.get("address1"):
            wrong.append(dict(args, address1="999 Nowhere Lane"))
        for bad in wrong:
            turn = RetailUser(task).reply(proposal(name, bad), w)
            assert not turn.agreed and user_agrees(turn.text) is False, (bad, turn.text)
        turn = RetailUser(task).reply(proposal(name, args), w)
        assert turn.agreed and user_agrees(turn.text) is True, turn.text
    # a write of another kind than any it wants
    if not any(a["name"] == "cancel_pending_order" for a in writes(tid)):
        order_id = writes(tid)[0]["arguments"].get("order_id", "#W0000000")
        msg = proposal("cancel_pending_order", {"order_id": order_id, "reason": "no longer needed"})
        turn = RetailUser(task).reply(msg, w)
        assert not turn.agreed and user_agrees(turn.text) is False


def test_a_done_write_is_not_agreed_to_again():
    task = tt.get("retail", "0")
    w = world.open_world("retail", task)
    user = RetailUser(task)
    msg = proposal(writes("0")[0]["name"], writes("0")[0]["arguments"])
    assert user.reply(msg, w).agreed
    assert user.reply("The exchange has been completed successfully.", w).closed
    again = RetailUser(task)
    again.reply(msg, w)
    again.reply("Done, it has been processed.", w)
    assert not again.reply(msg, w).agreed


def test_answers_what_it_knows_and_says_so_when_it_does_not():
    task = tt.get("retail", "0")  # Yusuf Rossi, 19122, does not remember the email
    w = world.open_world("retail", task)
    user = RetailUser(task)
    assert "don't remember" in user.reply("What is your email address?", w).text
    said = user.reply("Could you tell me your first name, last name, and zip code?", w).text
    assert identity(said) == {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"}
    assert "#W2378156" in user.reply("What is the order number?", w).text
    assert "2478" in user.reply("Which payment method would you like to use?", w).text
    assert "don't know" in user.reply("What's your user id?", w).text
    # knows an email it was given, and the second when the first is not found
    user = RetailUser(tt.get("retail", "35"))
    first = user.reply("What is your email address?", w).text
    second = user.reply("No account matches that. What is your email address?", w).text
    assert "aarav.santos8321@example.com" in first and "aarav.santos8320@example.com" in second
    # asked again without being told it failed, it repeats itself (task 67 scripts its zips)
    user = RetailUser(tt.get("retail", "67"))
    zips = [
        identity(user.reply(q, w).text)["zip"]
        for q in (
            "What is your name and zip code?",
            "And your zip code again?",
            "I could not find an account. Could you double-check your zip code?",
            "No account matches. Your zip code, please?",
        )
    ]
    assert zips == ["98178", "98178", "98186", "98187"]


def test_anything_else_before_and_after_its_writes():
    task = tt.get("retail", "0")
    w = world.open_world("retail", task)
    user = RetailUser(task)
    early = user.reply("Is there anything else I can help you with?", w)
    assert not early.closed and "still need to exchange" in early.text
    user.reply(proposal(writes("0")[0]["name"], writes("0")[0]["arguments"]), w)
    user.reply("It has been done.", w)
    assert user.closed
    log = user.log[-1]
    assert log["said"] == ["close"] and log["heard"] == [{"kind": "done"}]


def test_without_a_gold_write_a_refusal_closes():
    task = tt.get("retail", "57")
    w = world.open_world("retail", task)
    user = RetailUser(task)
    turn = user.reply("Unfortunately, I cannot cancel that item.", w)
    assert turn.closed and not turn.agreed


def test_opening_drops_the_instructions_meant_for_the_user():
    assert "If the agent" not in request_text(
        tt.get("retail", "5")["user_scenario"]["instructions"]["reason_for_call"]
    )
    # "(do not share this with the agent)": the sentence it is on is never said
    opening = RetailUser(tt.get("retail", "29")).opening()
    assert "5206946487" not in opening and opening.startswith(("Hi", "Hello"))
    assert re.search(r"\bI want to exchange my skateboard\b", opening)


def test_every_value_the_user_says_is_one_of_its_facts(suite):
    for tid in ("0", "35", "39", "87"):
        env = play(suite, tid)
        user = env.episode.user
        task = tt.get("retail", tid)
        allowed = {v for values in user.facts.values() for v in values}
        for want in user.wants:
            allowed |= {str(v) for v in want.args.values() if not isinstance(v, list)}
        allowed |= set(re.findall(r"[\w.]+@[\w.]+|\d{5}|#W\d{7}", str(task["user_scenario"])))
        for m in env.episode.messages:
            if m["role"] != "user":
                continue
            for value in re.findall(r"[\w.+-]+@[\w-]+\.\w+|\b\d{5}\b|#W\d{7}", m["content"]):
                assert value in allowed, (tid, value, m["content"])


def test_an_agent_s_own_wording_of_the_proposal_is_read():
    task = tt.get("retail", "0")
    w = world.open_world("retail", task)
    body = (
        "I can exchange the Mechanical Keyboard (1151293680) for 7706410293 and the Smart "
        "Thermostat (4983901480) for 7747408585 in order #W2378156. The price difference is "
        "{}, which will be refunded to your mastercard ending in 2478. Shall I proceed?"
    )
    turn = RetailUser(task).reply(body.format("$16.63"), w)
    assert turn.agreed and turn.text.startswith("Yes")
    turn = RetailUser(task).reply(body.format("$99.00"), w)  # an amount that is not the diff
    assert not turn.agreed and user_agrees(turn.text) is False
    turn = RetailUser(task).reply(body.format("$16.63").replace("mastercard", "gift card"), w)
    assert not turn.agreed
    # "New address for ...": a proposal without a verb of change
    task = tt.get("retail", "22")
    msg = (
        "New address for your default address: 101 Highway, New York, NY 10001, USA. "
        "Would you like me to proceed?"
    )
    assert RetailUser(task).reply(msg, w).agreed


#: tasks whose address proposals end the zip with a comma ("WA 98196, USA")
WRONG_ZIP = ["17", "22", "33", "34", "39", "41", "42", "43", "110"]


def test_a_zip_followed_by_a_comma_is_read_and_a_wrong_one_declined():
    task = tt.get("retail", "33")
    w = world.open_world("retail", task)
    msg = (
        "Here are the details of the action: update the default address of user "
        "noah_patel_6952 to 517 Lakeview Drive, Suite 183, Seattle, WA 98196, USA. Do you "
        "confirm that I should proceed (yes/no)?"
    )
    turn = RetailUser(task, 0).reply(msg, w)
    assert not turn.agreed and "zip code" in turn.text
    for tid in WRONG_ZIP:
        task = tt.get("retail", tid)
        plan = A.wrong_write("retail", task)
        assert plan is not None
        name, right, wrong = plan
        assert A._changed(right, wrong) == "zip", tid
        turn = RetailUser(task).reply(proposal(name, wrong), w)
        assert not turn.agreed and user_agrees(turn.text) is False, (tid, turn.text)
        turn = RetailUser(task).reply(proposal(name, right), w)
        assert turn.agreed, (tid, turn.text)


NO_WRITE = ["10", "12", "24", "25", "50", "57", "62", "65", "67", "68"]


def test_a_user_with_nothing_to_write_does_not_close_on_an_early_goodbye():
    w = world.open_world("retail", tt.get("retail", "10"))
    for tid in NO_WRITE:
        user = RetailUser(tt.get("retail", tid))
        turn = user.reply(A.BYE, w)
        assert not turn.closed and user_agrees(turn.text) is not True, (tid, turn.text)
        assert turn.text.startswith("Not yet") and user.log[-1]["said"] == ["wait"]
        assert not user.reply("Is there anything else I can help you with?", w).closed


def test_it_closes_once_it_got_what_it_came_for():
    w = world.open_world("retail", tt.get("retail", "10"))
    # a transfer to a human (a refusal that only names transfers is not one)
    user = RetailUser(tt.get("retail", "10"))
    user.reply("I cannot do that, but you could ask for a transfer to a human agent.", w)
    assert not user.transferred
    assert "hold" in user.reply(TRANSFER_MESSAGE, w).text
    assert user.reply(A.BYE, w).closed
    # the information it asked for: every communicate_info value, not only some
    user = RetailUser(tt.get("retail", "62"))
    user.reply("The Bluetooth speaker costs $302.67.", w)
    assert not user.reply(A.BYE, w).closed
    user.reply("Its battery life is 20 hours.", w)
    assert user.reply(A.BYE, w).closed
    # a question without listed information: a statement that answers it
    user = RetailUser(tt.get("retail", "25"))
    user.reply("I found your account. What can I do for you?", w)
    assert not user.reply(A.BYE, w).closed
    user.reply("The tracking number of that order is 286422338955.", w)
    assert user.reply(A.BYE, w).closed
    # a request that cannot be done: the refusal
    user = RetailUser(tt.get("retail", "65"))
    assert user.reply("Unfortunately, I cannot exchange the bookshelf for a camera.", w).closed


def test_the_gold_of_a_task_without_writes_still_wins(suite):
    for tid in ("24", "25", "62"):
        env = play(suite, tid)
        assert env.last_verification.score == 1.0, tid
        assert env.episode.ended_by == "assistant"


@pytest.mark.parametrize("tid", ["0", "5", "57"])
def test_unknowable_questions_are_not_answered_with_another_fact(tid):
    task = tt.get("retail", tid)
    w = world.open_world("retail", task)
    held = F.holdings("retail", task)
    questions = (
        *A.IRRELEVANT,
        "What is your phone number?",
        "What is the security code on your card?",
        "What is your date of birth?",
    )
    for q in questions:
        turn = RetailUser(task).reply(q, w)
        assert turn.text.startswith("Sorry, I don't know my"), (q, turn.text)
        assert not F.states_value(turn.text) and not F.invented_values(turn.text, held), turn.text
    # a fact asked beside the unknowable one is still given
    turn = RetailUser(tt.get("retail", "5")).reply("What are your user id and your PIN?", w)
    assert "mei_kovacs_8020" in turn.text and "don't know my PIN" in turn.text


def test_a_dump_is_neither_agreed_to_nor_acted_on():
    task = tt.get("retail", "0")
    w = world.open_world("retail", task)
    right = proposal(writes("0")[0]["name"], writes("0")[0]["arguments"])
    user = RetailUser(task)
    policy = schemas.policy("retail")
    for dump in (
        f"As the policy says: {policy} {right}",
        f"{right} Also, here is our policy: {policy}",
        f"The exchange has been completed. {policy} Is there anything else?",
    ):
        turn = user.reply(dump, w)
        assert not turn.agreed and not turn.closed and user_agrees(turn.text) is not True
        assert user.log[-1]["dump"] and user.log[-1]["said"] == ["clarify"]
    assert [want.state for want in user.wants] == ["pending"]
    assert user.reply(right, w).agreed  # the same proposal alone is read as before
    # many tool results: a refusal or the facts it asked for in them change nothing
    conn = store.fresh()
    orders = store.get(conn, "users", "noah_ito_3850")["orders"]
    results = " ".join(json.dumps(store.get(conn, "orders", o)) for o in orders)
    assert "829.43" in results and len(results) > 2000
    user = RetailUser(tt.get("retail", "67"))
    user.reply(f"Unfortunately, I cannot help. Here is everything I found: {results} " * 3, w)
    assert not user.refused and not user.heard
    assert not user.reply(A.BYE, w).closed
