"""The assistants the tau2 user's fidelity report plays (:mod:`.fidelity`), each a variation of
the gold assistant whose right outcome is known:

- :class:`RewordedGold`: the gold's decisions in other words (the dialogue runtime's frames of
  :mod:`palaestra.envs.runtimes.dialogue.phrasing` where they fit), in one of :data:`STYLES`;
- :class:`WrongGold`: the gold whose first write proposal names a wrong value (:func:`wrong_write`)
  and which would make that write: the user must decline;
- :class:`EarlyBye`: a goodbye right after the opening;
- :class:`IrrelevantAsker`: questions about what the user cannot know (:data:`IRRELEVANT`).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

from palaestra.envs.runtimes.dialogue.env import end as _end
from palaestra.envs.runtimes.dialogue.env import say as _say
from palaestra.envs.runtimes.dialogue.phrasing import ASK, CONFIRM, cap, reformat
from palaestra.envs.runtimes.simuser.acts import user_agrees
from palaestra.envs.tau2 import FAMILY, retail, store
from palaestra.envs.tau2 import tasks as tau2_tasks
from palaestra.envs.tau2.retail_gold import proposal as retail_proposal
from palaestra.tasks import Task

STYLES = ("polite", "terse", "instructions", "combined", "formats", "mixed")


BYE = "Thank you for contacting us. Have a great day, goodbye!"


DECLINED = "Understood, I will not make that change."


_REASONS = ("no longer needed", "ordered by mistake")  # tau2's two cancel reasons


#: questions about things no task's user holds
IRRELEVANT = (
    "Before we continue, could you please tell me your passport number?",
    "What is the 4-digit PIN on your account?",
    "Could you please give me your social security number?",
    "What is your mother's maiden name?",
)


def _is_say(action: Any) -> bool:
    return isinstance(action, dict) and action.get("name") == "send_message"


def _text(action: dict[str, Any]) -> str:
    return str(action["args"].get("text", ""))


# ----- policies --------------------------------------------------------------------------------
class _Wrapped:
    """The gold assistant, passed through a hook that may change or hold back its actions.

    ``pending`` actions are played before the gold is asked again; ``pull`` asks the gold for
    its next action without a new observation (for moves whose reply the gold does not read)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def reset(self, task: Task | None) -> None:
        assert task is not None and "tau2" in task.setup, "a tau2 policy plays a tau2 task"
        self.gold = FAMILY.policy("tau2_gold", seed=self.seed)
        self.gold.reset(task)
        self.task = task
        self.domain: str = task.setup["tau2"]
        self.raw = tau2_tasks.get(self.domain, task.setup["task_id"])
        self.pending: list[dict[str, Any]] = []
        self._obs: dict[str, Any] = {}
        self._info: dict[str, Any] = {}

    def pull(self) -> dict[str, Any]:
        try:
            return dict(self.gold.act(self._obs, self._info))
        except StopIteration:
            return _end()

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        self._obs, self._info = observation, info
        if self.pending:
            return self.pending.pop(0)
        return self.hook(self.pull(), observation)

    def hook(self, action: dict[str, Any], observation: dict[str, Any]) -> dict[str, Any]:
        return action


# -- reworded
_RETAIL_ASK = re.compile(r"^(?P<pre>.*?)(?:[Cc]ould you please (?:tell me|double-check) your )"
                         r"(?P<name>[^?]+)\?$")  # fmt: skip


_PHONE_ASK = re.compile(r"^(?P<pre>.*?)could you please tell me the (?P<name>phone number[^?]*)\?$")


_RETAIL_PROPOSAL = re.compile(
    r"^Here are the details of the action: (?P<vp>.+)\. Do you confirm that I should proceed "
    r"\(yes/no\)\?$"
)


_REFUEL = re.compile(r"^Adding (?P<what>.+?) will cost (?P<cost>\$[\d.,]+)\. Shall I go ahead\?$")


_SHALL = re.compile(r"^(?P<pre>.*?)Shall I (?P<vp>[^?]+)\?$")


_INSTRUCTION = re.compile(r"^Please (?P<vp>(?!confirm)[^?]+)\.$")


_CHECK = re.compile(r"^Could you please (?P<vp>[^?]+)\?$")


_HOW_MUCH = re.compile(r"^(?P<pre>.*)How much data would you like to add\?$")


_INFO = re.compile(r"^For your information: (?P<info>.+)\.$")


_DONE = "The action has been completed successfully."


POLITE_DO = ("Could you please {vp}?", "Would you be able to {vp}?", "Would you mind if we {vp}?")


INSTRUCT_DO = ("Please {vp}.", "I need you to {vp}.", "Go ahead and {vp}.")


HOW_MUCH = {
    "polite": ("How many GB of data would you like me to add?",),
    "terse": ("How many GB?", "How much data?"),
    "instructions": ("Please tell me how many GB of data you'd like to add.",),
}


DONE = {
    "polite": ("All set: that has been taken care of.", "I've completed that for you."),
    "terse": ("Done.", "Done, all set."),
    "instructions": ("The change has been made.",),
}


NOT_DONE = {
    "polite": ("Alright, I won't make that change.",),
    "terse": ("OK, not changing it.",),
    "instructions": ("I will leave it as it is.",),
}


INFO = {
    "polite": ("Just so you know: {info}.",),
    "terse": ("FYI: {info}.",),
    "instructions": ("Please note: {info}.",),
}


class RewordedGold(_Wrapped):
    """The gold assistant's moves, its messages worded in ``style`` (phrasing ``bank`` of the
    family's reworded frames): same questions, proposals, instructions and reports. ``combined``
    says in one message what the gold says in a row without reading the reply between: the
    instructions of consecutive phone steps (and the final check after them), or the
    information owed before a proposal together with that proposal."""

    def __init__(self, style: str, seed: int = 0, bank: str = "seen") -> None:
        if style not in STYLES:
            raise ValueError(f"unknown style {style!r}; styles: {list(STYLES)}")
        super().__init__(seed)
        self.style, self.bank = style, bank

    def reset(self, task: Task | None) -> None:
        super().reset(task)
        assert task is not None
        self.words = random.Random(f"{self.seed}:{self.style}:{self.bank}:{task.id}")

    def hook(self, action: dict[str, Any], observation: dict[str, Any]) -> dict[str, Any]:
        if not _is_say(action):
            return action
        text = _text(action)
        style = self.style
        if style == "mixed":
            style = self.words.choice([s for s in STYLES if s not in ("mixed", "combined")])
        if style == "combined":
            return _say(self._combined(text))
        if style == "formats":
            return _say(reformat(text, self.words))
        return _say(self.reword(text, style))

    def _combined(self, text: str) -> str:
        """``text`` with the gold's next messages that need no reply in between."""
        parts = [text]
        while _mergeable(parts[-1]):
            nxt = self.pull()
            if not _is_say(nxt):
                self.pending.append(nxt)
                break
            parts.append(_text(nxt))
        if len(parts) == 1:
            return text
        joined = parts[0]
        for part in parts[1:]:
            joined += " Then, " + part[:1].lower() + part[1:] if _step(part) else " " + part
        return joined

    def _pick(self, options: tuple[str, ...]) -> str:
        return self.words.choice(options)

    def reword(self, text: str, style: str) -> str:
        if m := _RETAIL_PROPOSAL.match(text):
            return self._confirm(m["vp"], "", style)
        if m := _REFUEL.match(text):
            return self._confirm(f"add {m['what']} for {m['cost']}", "", style)
        if m := _SHALL.match(text):
            return self._confirm(m["vp"], m["pre"], style)
        if m := _RETAIL_ASK.match(text) or _PHONE_ASK.match(text):
            frames = tuple(f for f in ASK[self.bank][style] if "{Q}" not in f)
            pre = (
                ""
                if style == "terse" and m["pre"].startswith(("I can help", "Hello"))
                else m["pre"]
            )
            return _join(pre, self._pick(frames).format(name=m["name"], Name=cap(m["name"])))
        if m := _HOW_MUCH.match(text):
            return m["pre"] + self._pick(HOW_MUCH[style])
        if m := _INSTRUCTION.match(text) or _CHECK.match(text):
            vp = m["vp"]
            if style == "terse":
                return cap(vp.replace(" on your phone", "")) + "."
            return self._pick(POLITE_DO if style == "polite" else INSTRUCT_DO).format(vp=vp)
        if m := _INFO.match(text):
            return self._pick(INFO[style]).format(info=m["info"])
        if text == _DONE:
            return self._pick(DONE[style])
        if text == DECLINED:
            return self._pick(NOT_DONE[style])
        return text

    def _confirm(self, vp: str, pre: str, style: str) -> str:
        frames = CONFIRM[self.bank][style]
        return _join(pre, self._pick(frames).format(vp=vp, Vp=cap(vp)))


def _join(pre: str, text: str) -> str:
    """``text`` after ``pre``, in lower case when ``pre`` leaves its sentence open."""
    if pre and not pre.rstrip().endswith((".", "!", "?", ";")):
        return pre + text[:1].lower() + text[1:]
    return pre + text


def _step(text: str) -> bool:
    return bool(_INSTRUCTION.match(text) or _CHECK.match(text))


def _mergeable(text: str) -> bool:
    """A gold message whose reply the gold does not read: a phone step, or information owed."""
    return bool(_INSTRUCTION.match(text) or _INFO.match(text))


# -- wrong
class WrongGold(_Wrapped):
    """The gold assistant whose first write proposal names a wrong value (another order, item,
    payment method, address, GB amount), and which makes the write with that value if the user
    says yes (with a no it drops the write, as the gold does). Tasks whose writes the user could
    not tell apart (telecom's payment request, resume, roaming: the user knows no bill or line
    ids) have no wrong proposal and are not counted."""

    def reset(self, task: Task | None) -> None:
        super().reset(task)
        self.plan = wrong_write(self.domain, self.raw)
        self.field = _changed(self.plan[1], self.plan[2]) if self.plan else ""
        self.proposed: str | None = None  # the wrong proposal, once made
        self.reply: str | None = None
        self.stage = 0  # 0 before the proposal, 1 waiting for the write, 2 after

    def hook(self, action: dict[str, Any], observation: dict[str, Any]) -> dict[str, Any]:
        if self.plan is None or self.stage == 2:
            return action
        name, right, wrong = self.plan
        if self.stage == 0 and _is_say(action):
            text = _text(action)
            if self.domain == "retail" and text == retail_proposal(name, right):
                text = retail_proposal(name, wrong)
            elif self.domain == "telecom" and (m := _REFUEL.match(text)):
                gb = float(right["gb_amount"])
                cost = float(m["cost"].lstrip("$").replace(",", "")) / gb if gb else 0.0
                bad = float(wrong["gb_amount"])
                text = text.replace(m["what"], m["what"].replace(f"{gb:g} GB", f"{bad:g} GB"))
                text = text.replace(m["cost"], f"${bad * cost:.2f}")
            else:
                return action
            self.proposed, self.stage = text, 1
            return _say(text)
        if self.stage == 1:
            self.stage = 2
            self.reply = str(observation.get("user_message") or "")
            is_write = action.get("name") == "call_tool" and action["args"].get("name") == name
            if not is_write:  # the retail gold heard a no and says so
                return action
            if user_agrees(self.reply) is True:
                return {"name": "call_tool", "args": {"name": name, "arguments": wrong}}
            return _say(DECLINED)
        return action


def wrong_write(domain: str, task: dict[str, Any]) -> tuple[str, dict, dict] | None:
    """The assistant's first gold write that changes the world, with one value made wrong:
    a value no gold write uses, so no other want of the user's fits it (None when the task has
    no write the user could tell apart)."""
    gold = tau2_tasks.gold_actions(task)
    if domain == "telecom":
        for action in gold:
            if action["name"] == "refuel_data":
                args = dict(action.get("arguments") or {})
                gb = float(args["gb_amount"])
                return action["name"], args, {**args, "gb_amount": gb + 1 if gb < 5 else gb / 2}
        return None
    used = {json.dumps(v) for a in gold for v in (a.get("arguments") or {}).values()}
    used |= {json.dumps(i) for a in gold for v in (a.get("arguments") or {}).values()
             if isinstance(v, list) for i in v}  # fmt: skip
    conn = store.fresh()
    try:
        for action in gold:
            name, args = action["name"], dict(action.get("arguments") or {})
            _content, failed = retail.call(conn, name, args)
            if name in retail.WRITE and not failed:
                bad = _retail_wrong(name, args, lambda v: json.dumps(v) not in used)
                return (name, args, bad) if bad is not None else None
    finally:
        conn.close()
    return None


def _changed(right: dict[str, Any], wrong: dict[str, Any]) -> str:
    return next((k for k in wrong if wrong[k] != right.get(k)), "")


def _retail_wrong(
    name: str, args: dict[str, Any], unused: Callable[[Any], bool]
) -> dict[str, Any] | None:
    conn = store.fresh()
    try:
        order = store.get(conn, "orders", str(args.get("order_id", ""))) or {}
        uid = args.get("user_id") or order.get("user_id")
        user = store.get(conn, "users", str(uid)) if uid else None
        user = user or {}
        others = [o for o in user.get("orders", []) if unused(o)]
        pays = [p for p in user.get("payment_methods", {}) if unused(p)]
        items = [i["item_id"] for i in order.get("items", []) if unused(i["item_id"])]
        if name in ("exchange_delivered_order_items", "modify_pending_order_items"):
            new = list(args["new_item_ids"])
            product = store.get(conn, "products", _product_of(conn, new[0])) or {}
            swaps = [i for i in product.get("variants", {}) if unused(i)]
            if swaps:
                return {**args, "new_item_ids": [swaps[0], *new[1:]]}
        if name == "modify_pending_order_payment" and pays:
            return {**args, "payment_method_id": pays[0]}
        if name == "return_delivered_order_items" and items:
            return {**args, "item_ids": [items[0], *args["item_ids"][1:]]}
        if name == "modify_user_address" or (name == "modify_pending_order_address" and not others):
            return {**args, "zip": str((int(args["zip"]) + 1) % 100000).zfill(5)}
        if others:
            return {**args, "order_id": others[0]}
        if name == "cancel_pending_order":
            return {**args, "reason": next(r for r in _REASONS if r != args.get("reason"))}
        if pays and "payment_method_id" in args:
            return {**args, "payment_method_id": pays[0]}
        return None
    finally:
        conn.close()


def _product_of(conn: Any, item_id: str) -> str:
    for pid, product in store.scan(conn, "products"):
        if item_id in product.get("variants", {}):
            return pid
    return ""


# -- early and irrelevant
class EarlyBye:
    """Says goodbye right after the opening and ends the conversation."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def reset(self, task: Task | None) -> None:
        self.moves = [_say(BYE), _end()]

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if not self.moves:
            raise StopIteration
        return self.moves.pop(0)


class IrrelevantAsker(EarlyBye):
    """Asks only for things the user cannot know, then ends."""

    def reset(self, task: Task | None) -> None:
        self.moves = [*(_say(q) for q in IRRELEVANT), _end()]
