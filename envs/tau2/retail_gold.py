"""The gold assistant of tau2's retail tasks: the gold actions and the messages they need.

The oracle of every ``tau2-retail`` task (``POLICIES["tau2_gold"]`` through :mod:`.gold`). It
learns who the customer is the way an agent must: for each gold ``find_user_id_by_*`` call it
asks for the email, or the name and zip, and fills the call from what the user said (a user who
does not give the fact, or gives a wrong one, makes the lookup answer differently than the gold
one did and the gold assistant gives up: its pass rate measures the user). The other reads are
called as listed, including the ones tau2 itself answers with an error. Each gold write is
proposed first with all its details, as the retail policy requires, and called only after the
user's yes; its outcome (done, or tau2's error) is reported. The task's ``communicate_info`` is
told verbatim before the last write is proposed (or at the end when there is none), so it is
said before a satisfied user closes. A transfer is called and announced with tau2's words.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import Any

from palaestra.envs.runtimes.dialogue.env import call, say
from palaestra.envs.runtimes.simuser.acts import user_agrees
from palaestra.envs.tau2 import retail, store
from palaestra.envs.tau2 import tasks as tau2_tasks

TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
CONFIRM = "Do you confirm that I should proceed (yes/no)?"
EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
FIRST = re.compile(r"\bfirst name is ([A-Za-z][\w'-]*)", re.IGNORECASE)
LAST = re.compile(r"\blast name is ([A-Za-z][\w'-]*)", re.IGNORECASE)
FULL = re.compile(r"\b(?:my name is|i am|i'm|this is) ([A-Z][\w'-]*) ([A-Z][\w'-]*)")
ZIP = re.compile(r"\b(\d{5})\b")

END = {"name": "end_conversation", "args": {}}
Plan = Generator[dict[str, Any], dict[str, Any], None]


def identity(text: str) -> dict[str, str]:
    """The identity facts a user's reply states: email, first and last name, zip."""
    out: dict[str, str] = {}
    if m := EMAIL.search(text):
        out["email"] = m.group(0).rstrip(".")
    first, last = FIRST.search(text), LAST.search(text)
    if first and last:
        out["first_name"], out["last_name"] = first.group(1), last.group(1)
    elif m := FULL.search(text):
        out["first_name"], out["last_name"] = m.group(1), m.group(2)
    zips = [z for z in ZIP.findall(text)]
    if zips:
        out["zip"] = zips[-1]
    return out


def _ids(ids: list[str]) -> str:
    if len(ids) <= 1:
        return "".join(ids)
    return ", ".join(ids[:-1]) + " and " + ids[-1]


def _address(args: dict[str, Any]) -> str:
    head = ", ".join(str(args[k]) for k in ("address1", "address2", "city") if args.get(k))
    return f"{head}, {args.get('state')} {args.get('zip')}, {args.get('country')}"


def proposal(name: str, args: dict[str, Any]) -> str:
    """The message that lists a write's details and asks for the user's explicit yes."""
    oid = args.get("order_id", "")
    items, new = list(args.get("item_ids", [])), list(args.get("new_item_ids", []))
    pay = args.get("payment_method_id", "")
    if name == "cancel_pending_order":
        what = f"cancel order {oid} with the reason '{args.get('reason')}'"
    elif name == "return_delivered_order_items":
        what = f"return items {_ids(items)} of order {oid}, with the refund going to {pay}"
    elif name == "exchange_delivered_order_items":
        what = (
            f"exchange items {_ids(items)} of order {oid} for the new items {_ids(new)}, with "
            f"any price difference settled through {pay}"
        )
    elif name == "modify_pending_order_items":
        what = (
            f"modify items {_ids(items)} of pending order {oid} to the new items {_ids(new)}, "
            f"with any price difference settled through {pay}"
        )
    elif name == "modify_pending_order_address":
        what = f"change the shipping address of pending order {oid} to {_address(args)}"
    elif name == "modify_pending_order_payment":
        what = f"change the payment method of pending order {oid} to {pay}"
    elif name == "modify_user_address":
        what = f"update the default address of user {args.get('user_id')} to {_address(args)}"
    else:
        raise ValueError(f"not a retail write: {name}")
    return f"Here are the details of the action: {what}. {CONFIRM}"


def play(task: dict[str, Any]) -> Plan:
    """The gold assistant's script for a tau2 retail task (tau2's own task; the policy is
    :func:`palaestra.envs.tau2.gold.GoldAssistant`)."""
    gold = tau2_tasks.gold_actions(task)
    told = list(task["evaluation_criteria"].get("communicate_info") or [])
    writes = [i for i, a in enumerate(gold) if a["name"] in retail.WRITE]
    last_write = writes[-1] if writes else None
    # what each gold lookup answers on the task's world: a lookup filled from the user's
    # words must answer the same, or the user did not give what the task says it knows
    scratch = store.fresh()
    expected = [retail.call(scratch, a["name"], a.get("arguments") or {}) for a in gold]
    failed_before: str | None = None
    asked = False
    obs: dict[str, Any] = {}
    for index, action in enumerate(gold):
        name, args = action["name"], dict(action.get("arguments") or {})
        if name in ("find_user_id_by_email", "find_user_id_by_name_zip"):
            by_email = name == "find_user_id_by_email"
            fields = "email address" if by_email else "first name, last name, and zip code"
            if failed_before is None:
                intro = "" if asked else "I can help with that. To verify your identity, "
                question = f"{intro}could you please tell me your {fields}?"
                question = question[0].upper() + question[1:]
            elif failed_before == name:
                question = (
                    "No account matches those details. Could you please double-check "
                    f"your {fields}?"
                )
            else:
                question = f"No account matches that. Could you please tell me your {fields}?"
            asked = True
            obs = yield say(question)
            heard = identity(str(obs.get("user_message") or ""))
            wanted = ("email",) if by_email else ("first_name", "last_name", "zip")
            if any(k not in heard for k in wanted):
                yield END
                return
            obs = yield call(name, {k: heard[k] for k in wanted})
            got = str(obs.get("last_tool_result") or "")
            if got != expected[index][0]:
                yield END  # the user's facts do not find what the task's did
                return
            failed_before = name if expected[index][1] else None
            continue
        if name == "transfer_to_human_agents":
            obs = yield call(name, args)
            yield say(TRANSFER_MESSAGE)
            yield END
            return
        if name not in retail.WRITE:
            obs = yield call(name, args)
            continue
        if index == last_write and told:
            obs = yield say(f"For your information: {', '.join(told)}.")
            told = []
        obs = yield say(proposal(name, args))
        if user_agrees(str(obs.get("user_message") or "")) is not True:
            obs = yield say("Understood, I will not make that change.")
            continue
        obs = yield call(name, args)
        result = str(obs.get("last_tool_result") or "")
        if result.startswith("Error:"):
            reason = result.removeprefix("Error:").strip()
            obs = yield say(f"Unfortunately, I could not complete that action: {reason}")
        else:
            obs = yield say("The action has been completed successfully.")
    if told:
        obs = yield say(f"For your information: {', '.join(told)}.")
    yield END
