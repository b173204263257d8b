"""The symbolic user of tau2 retail and the gold assistant that measures it.

The gold assistant learns the customer's identity from what the user says, so its pass rate
through the env measures the user; the full 114-task figure is a benchmark (reported in the
closing note), a sample runs here.
"""

import re

import pytest

from palaestra.envs.runtimes.simuser.acts import user_agrees
from palaestra.envs.usersim.tau2 import retail, store, suites, world
from palaestra.envs.usersim.tau2 import tasks as tt
from palaestra.envs.usersim.tau2.env import Tau2Env
from palaestra.envs.usersim.tau2.gold import GoldAssistant
from palaestra.envs.usersim.tau2.retail_gold import identity, proposal
from palaestra.envs.usersim.tau2.retail_user import RetailUser, request_text
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
