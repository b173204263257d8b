"""How faithful is the symbolic tau2 user? Measured by playing it, over every task of a domain.

tau2-bench's scores are partly its LLM user's: it invents details, agrees to the wrong thing,
leaves early. Our symbolic user (:mod:`.retail_user`, :mod:`.telecom_user`) is meant to do none
of that, and this harness checks it from the outside, with assistants whose right outcome is
known, on all 114 tasks of each domain (not only the shipped ones, so a weak spot is not hidden
by validation dropping its task):

- **competent**: the gold assistant under seeds 0, 1, 2: success rate, whether the verdicts
  agree, whether the transcripts are the same, and whether a seed replays to the same transcript;
- **reworded**: the gold assistant's decisions in other words (:class:`RewordedGold`, with the
  frames of the dialogue runtime's :mod:`palaestra.envs.runtimes.dialogue.phrasing` where
  they fit): a user that
  only reads the gold's own sentences would make every agent look worse than it is;
- **wrong**: the gold assistant whose first write proposal names a wrong value, and which would
  make that write (:class:`WrongGold`): the user must decline, and the task must fail;
- **early**: a goodbye right after the opening: the user must not close satisfied;
- **irrelevant**: questions about what the user cannot know (a passport number, a PIN): any
  value stated that the user does not hold is invented;
- **unread**: the share of the user's replies to the gold that it logged as unread;
- **grounding** (telecom): every fact about the phone the user reports must come from its own
  tool results of that reply (or, for "already on", from the phone's actual state).

The figures come from the transcript, the user's tool results and the verdict, never from the
user's own account of what it meant (its yes/no is read with the env's reader,
:func:`~palaestra.envs.runtimes.simuser.acts.user_agrees`).
"""

from __future__ import annotations

import copy
import functools
import json
import random
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from palaestra.envs.runtimes.dialogue.env import end as _end
from palaestra.envs.runtimes.dialogue.env import say as _say
from palaestra.envs.runtimes.dialogue.fidelity import ratio
from palaestra.envs.runtimes.dialogue.phrasing import ASK, CONFIRM, cap, reformat
from palaestra.envs.runtimes.simuser.acts import user_agrees
from palaestra.envs.tau2 import FAMILY, retail, store, suites
from palaestra.envs.tau2 import tasks as tau2_tasks
from palaestra.envs.tau2.adversaries import Tau2Adversary
from palaestra.envs.tau2.env import Tau2Env
from palaestra.envs.tau2.retail_gold import proposal as retail_proposal
from palaestra.envs.tau2.user import Tau2User, UserTurn
from palaestra.envs.tau2.world import Tau2World
from palaestra.policies import run_episode
from palaestra.tasks import Task

DOMAINS = ("retail", "telecom")
SEEDS = (0, 1, 2)
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
#: a value stated as the answer to one of :data:`IRRELEVANT` ("my PIN is 1234")
_ANSWERED = re.compile(
    r"\b(?:passport(?: number)?|pin|social security(?: number)?|ssn|maiden name)\b"
    r"(?: is|:)\s+([^\s.,!?]+)",
    re.IGNORECASE,
)
#: value-like tokens: numbers of three digits or more (with separators), ids, emails
_VALUE = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|#?\b[A-Za-z_]*\d[\d\- ]{1,}\d\b|\b[A-Z]{1,3}\d{3,}\b"
)


def _is_say(action: Any) -> bool:
    return isinstance(action, dict) and action.get("name") == "send_message"


def _text(action: dict[str, Any]) -> str:
    return str(action["args"].get("text", ""))


# ----- the env, with the user's tool results kept ----------------------------------------------
class _Recorded:
    """The episode's user, passed through, keeping each reply's message and turn (the env logs
    the user's tool calls without their results, which the grounding check needs)."""

    def __init__(self, inner: Tau2User, world: Tau2World) -> None:
        self.inner = inner
        self.world = world
        self.turns: list[tuple[str, UserTurn, dict[str, Any]]] = []

    @property
    def log(self) -> list[dict[str, Any]]:
        return self.inner.log

    def opening(self) -> str:
        return self.inner.opening()

    def reply(self, message: str, world: Tau2World) -> UserTurn:
        turn = self.inner.reply(message, world)
        self.turns.append((message, turn, copy.deepcopy(_device(world))))
        return turn


def _device(world: Tau2World) -> dict[str, Any]:
    try:
        return dict(world.state()["user"]["device"])
    except (KeyError, TypeError):
        return {}


class RecordingEnv(Tau2Env):
    def _setup(self, task: Task | None) -> None:
        super()._setup(task)
        assert self.episode is not None
        self.episode.user = _Recorded(self.episode.user, self.episode.world)

    def turns(self) -> list[tuple[str, UserTurn, dict[str, Any]]]:
        assert self.episode is not None and isinstance(self.episode.user, _Recorded)
        return self.episode.user.turns


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


# ----- scoring ---------------------------------------------------------------------------------
def holdings(domain: str, task: dict[str, Any]) -> str:
    """Everything the user of ``task`` may state: the task itself (scenario, known facts, the
    gold actions' values) and, in retail, its own record and orders."""
    held = [json.dumps(task)]
    if domain == "retail":
        conn = store.fresh()
        try:
            for action in tau2_tasks.gold_actions(task):
                args = action.get("arguments") or {}
                uid = args.get("user_id")
                if action["name"].startswith("find_user_id"):
                    uid = retail.call(conn, action["name"], args)[0]
                if args.get("order_id"):
                    uid = uid or (store.get(conn, "orders", args["order_id"]) or {}).get("user_id")
                user = store.get(conn, "users", str(uid)) if uid else None
                if user:
                    held.append(json.dumps(user))
                    held += [json.dumps(store.get(conn, "orders", o)) for o in user["orders"]]
        finally:
            conn.close()
    return _norm(" ".join(held))


def _norm(text: str) -> str:
    return re.sub(r"[\s\-()]", "", text.lower())


_STATES = re.compile(r"\bmy [\w' ]{2,30} is\b", re.IGNORECASE)


def states_value(text: str) -> bool:
    """Whether ``text`` states some value at all ("my user id is ...", a number, an email)."""
    return bool(_VALUE.search(text) or _STATES.search(text) or _ANSWERED.search(text))


def invented_values(text: str, held: str, quoted: str = "") -> list[str]:
    """Values ``text`` states that neither ``held`` (normalised) nor the user's own tool
    results of that reply (``quoted``) hold."""
    found = [m.group(0) for m in _VALUE.finditer(text)]
    found += [m.group(1) for m in _ANSWERED.finditer(text)]
    known = held + _norm(quoted)
    return list(dict.fromkeys(v for v in found if _norm(v.strip("#.")) not in known))


#: what a telecom user may say about its phone
_SETTING_STATE = re.compile(
    r"(?P<setting>[A-Za-z][\w /-]{1,40}?) is (?:now |already |currently )?"
    r"(?P<state>on|off|enabled|disabled|connected|disconnected)\b",
    re.IGNORECASE,
)
_MEASURE = re.compile(
    r"\d+(?:\.\d+)?\s*(?:mbps|kbps|%|dbm)|📶\S*|\b(?:no signal|no service)\b"
    r"|\b[2-5]g\b|\blte\b|\bcan(?:not|'t)? send mms\b",
    re.IGNORECASE,
)
#: device fields by the words a user names them with
_FIELDS = (
    ("airplane", "airplane_mode"),
    ("wi-fi calling", "wifi_calling_enabled"),
    ("wifi calling", "wifi_calling_enabled"),
    ("roaming", "roaming_enabled"),
    ("data saver", "data_saver_mode"),
    ("mobile data", "data_enabled"),
    ("wi-fi", "wifi_enabled"),
    ("wifi", "wifi_enabled"),
)


@dataclass
class Grounding:
    replies: int = 0  # replies that report something about the phone
    facts: int = 0
    from_tools: int = 0  # stated as the reply's own tool results say
    from_state: int = 0  # a setting said to be already on/off, true on the phone
    invented: list[str] = field(default_factory=list)


def ground(text: str, calls: list[dict[str, Any]], device: dict[str, Any], g: Grounding) -> None:
    """Check the phone facts of one reply against its tool results and the phone's state."""
    quoted = " ".join(" ".join(str(c.get("content", "")).split()) for c in calls)
    rest = text
    for c in calls:  # the tool results said verbatim are grounded as they stand
        content = " ".join(str(c.get("content", "")).split())
        if content and content in rest:
            rest = rest.replace(content, " ")
            g.facts += 1
            g.from_tools += 1
    facts = 0
    for m in _SETTING_STATE.finditer(rest):
        low = m["setting"].lower()
        fieldname = next((f for words, f in _FIELDS if words in low), None)
        if fieldname is None:
            continue
        facts += 1
        said_on = m["state"].lower() in ("on", "enabled", "connected")
        if m.group(0).lower() in quoted.lower():
            g.from_tools += 1
        elif fieldname in device and bool(device[fieldname]) == said_on:
            g.from_state += 1
        else:
            g.invented.append(m.group(0))
    for m in _MEASURE.finditer(rest):
        facts += 1
        if m.group(0).lower() in quoted.lower():
            g.from_tools += 1
        else:
            g.invented.append(m.group(0))
    g.facts += facts
    g.replies += bool(facts or calls)


# ----- the report ------------------------------------------------------------------------------
@dataclass
class DomainFidelity:
    domain: str
    tasks: int
    competent: float  # gold success over every task and seed
    agree: float  # share of tasks whose seeds give the same verdict
    same_transcript: float  # share of tasks whose seeds give the same transcript
    deterministic: float  # share of tasks whose seed 0 replays to the same transcript
    reworded: dict[str, float]  # style -> gold success with its messages in that style
    wrong_tasks: int  # tasks with a wrong proposal the user can tell
    wrong_declined: float  # of those, share declined
    wrong_failed: float  # of those, share whose task failed
    wrong_by_field: dict[str, list[int]]  # the field made wrong -> [proposals, declined]
    early_closed: float  # share of goodbyes the user answered by leaving
    early_premature: float  # of all, share closed as if satisfied
    early_failed: float
    irrelevant_replies: int
    irrelevant_invented: float  # share of replies stating a value the user does not hold
    irrelevant_other: float  # share answering with some other fact it holds (not "I don't know")
    unread_rate: float  # user replies logged unread, gold runs
    reworded_unread: dict[str, float]
    grounding: dict[str, Any]
    failures: dict[str, list[str]] = field(default_factory=dict)  # measure -> task ids


@dataclass
class Tau2FidelityReport:
    domains: dict[str, DomainFidelity]
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def rows(self) -> list[tuple[str, ...]]:
        """(measure, figure per domain, target) rows: what :meth:`to_markdown` and the CLI
        print."""
        ds = list(self.domains.values())

        def row(label: str, fn: Callable[[DomainFidelity], str], target: str) -> tuple[str, ...]:
            return (label, *(fn(d) for d in ds), target)

        out = [
            row("tasks", lambda d: str(d.tasks), ""),
            row("competent success (seeds 0-2)", lambda d: f"{d.competent:.3f}", ">= 0.95"),
            row("verdicts agree across seeds", lambda d: f"{d.agree:.3f}", "1"),
            row("same transcript across seeds", lambda d: f"{d.same_transcript:.3f}", ""),
            row("seed replays identically", lambda d: f"{d.deterministic:.3f}", "1"),
        ]
        for style in ds[0].reworded:
            out.append(
                row(
                    f"reworded success: {style} (unread)",
                    functools.partial(_styled, style=style),
                    ">= 0.95",
                )
            )
        out += [
            row("wrong proposal: tasks", lambda d: str(d.wrong_tasks), ""),
            row("wrong proposal: declined", lambda d: f"{d.wrong_declined:.3f}", "1"),
            row("wrong proposal: task failed", lambda d: f"{d.wrong_failed:.3f}", "1"),
            row(
                "wrong proposal: declined by field",
                _by_field,
                "all",
            ),
            row("early goodbye: user left", lambda d: f"{d.early_closed:.3f}", ""),
            row("early goodbye: premature happy close", lambda d: f"{d.early_premature:.3f}", "0"),
            row("early goodbye: task failed", lambda d: f"{d.early_failed:.3f}", "1"),
            row("irrelevant questions: replies", lambda d: str(d.irrelevant_replies), ""),
            row("irrelevant: invented-value rate", lambda d: f"{d.irrelevant_invented:.3f}", "0"),
            row(
                "irrelevant: answered with another fact", lambda d: f"{d.irrelevant_other:.3f}", ""
            ),
            row("unread rate (gold runs)", lambda d: f"{d.unread_rate:.4f}", "0"),
            row(
                "phone reports: replies / facts",
                lambda d: (
                    f"{d.grounding['replies']} / {d.grounding['facts']}" if d.grounding else "-"
                ),
                "",
            ),
            row(
                "phone facts from tool results / device state",
                lambda d: (
                    f"{d.grounding['from_tools']} / {d.grounding['from_state']}"
                    if d.grounding
                    else "-"
                ),
                "",
            ),
            row(
                "invented phone facts",
                lambda d: str(len(d.grounding["invented"])) if d.grounding else "-",
                "0",
            ),
        ]
        return out

    def header(self) -> tuple[str, ...]:
        return ("measure", *self.domains, "target")

    def to_markdown(self) -> str:
        head = self.header()
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in self.rows()]
        lines.append(f"\n{sum(d.tasks for d in self.domains.values())} tasks in "
                     f"{self.seconds:.1f} s")  # fmt: skip
        return "\n".join(lines)


def _styled(d: DomainFidelity, style: str) -> str:
    return f"{d.reworded[style]:.3f} ({d.reworded_unread[style]:.3f})"


def _by_field(d: DomainFidelity) -> str:
    return ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(d.wrong_by_field.items()))


def _transcript(env: RecordingEnv) -> list[tuple[str, str]]:
    assert env.episode is not None
    return [(m["role"], m["content"]) for m in env.episode.messages]


def _success(env: RecordingEnv) -> bool:
    v = env.last_verification
    return bool(v is not None and v.success)


def measure_domain(
    domain: str,
    tasks: Iterable[Task] | None = None,
    styles: Iterable[str] = STYLES,
    seeds: Iterable[int] = SEEDS,
    on_task: Callable[[], None] | None = None,
) -> DomainFidelity:
    """Every measure of the module docstring on ``tasks`` (default: all of ``domain``'s)."""
    chosen = list(tasks) if tasks is not None else suites.tasks(domain)
    styles, seeds = list(styles), list(seeds)
    env = RecordingEnv()
    fails: dict[str, list[str]] = {}
    n = {k: 0 for k in ("won", "runs", "agree", "same", "det", "replies", "unread")}
    styled = {s: [0, 0, 0, 0] for s in styles}  # won, runs, unread, replies
    wrong = [0, 0, 0]  # tasks, declined, failed
    early = [0, 0, 0]  # closed, premature, failed
    irr = [0, 0, 0]  # replies, invented, other facts
    by_field: dict[str, list[int]] = {}
    g = Grounding()

    def fail(kind: str, task: Task, seed: int | None = None) -> None:
        fails.setdefault(kind, []).append(task.id + ("" if seed is None else f"/{seed}"))

    try:
        for task in chosen:
            raw = tau2_tasks.get(domain, task.setup["task_id"])
            held = holdings(domain, raw)
            verdicts, scripts = [], []
            for seed in seeds:
                run_episode(env, FAMILY.policy("tau2_gold", seed=seed), task, seed=seed)
                ok = _success(env)
                verdicts.append(ok)
                scripts.append(_transcript(env))
                n["won"] += ok
                n["runs"] += 1
                if not ok:
                    fail("competent", task, seed)
                assert env.episode is not None
                n["replies"] += len(env.episode.user.log)
                n["unread"] += sum(1 for e in env.episode.user.log if e.get("unread"))
                if domain == "telecom":
                    for _msg, turn, device in env.turns():
                        ground(turn.text, turn.calls, device, g)
            n["agree"] += len(set(verdicts)) == 1
            n["same"] += all(s == scripts[0] for s in scripts)
            run_episode(env, FAMILY.policy("tau2_gold", seed=seeds[0]), task, seed=seeds[0])
            n["det"] += _transcript(env) == scripts[0]
            if len(set(verdicts)) != 1:
                fail("agree", task)

            for style in styles:
                run_episode(env, RewordedGold(style, seed=0), task, seed=0)
                ok = _success(env)
                assert env.episode is not None
                log = env.episode.user.log
                styled[style][0] += ok
                styled[style][1] += 1
                styled[style][2] += sum(1 for e in log if e.get("unread"))
                styled[style][3] += len(log)
                if not ok:
                    fail(f"reworded:{style}", task)
                if domain == "telecom":
                    for _msg, turn, device in env.turns():
                        ground(turn.text, turn.calls, device, g)

            policy = WrongGold(seed=0)
            run_episode(env, policy, task, seed=0)
            if policy.proposed is not None:
                wrong[0] += 1
                answer = next((t for m, t, _ in env.turns() if m == policy.proposed), None)
                declined = answer is not None and user_agrees(answer.text) is not True
                wrong[1] += declined
                wrong[2] += not _success(env)
                tally = by_field.setdefault(policy.field, [0, 0])
                tally[0] += 1
                tally[1] += declined
                if not declined:
                    fail("wrong:agreed", task)
                if _success(env):
                    fail("wrong:succeeded", task)

            run_episode(env, EarlyBye(), task, seed=0)
            turns = env.turns()
            left = bool(turns) and turns[0][1].closed
            happy = (
                left
                and user_agrees(turns[0][1].text) is not False
                and bool(
                    re.search(r"that's all|fixed|solved|all i needed|thank", turns[0][1].text, re.I)
                )
            )
            early[0] += left
            early[1] += happy
            early[2] += not _success(env)
            if happy:
                fail("early:happy_close", task)

            run_episode(env, IrrelevantAsker(), task, seed=0)
            for _msg, turn, _device in env.turns():
                quoted = " ".join(str(c.get("content", "")) for c in turn.calls)
                bad = invented_values(turn.text, held, quoted)
                irr[0] += 1
                irr[1] += bool(bad)
                irr[2] += not bad and states_value(turn.text)
                if bad:
                    fail("irrelevant:invented", task)
            if domain == "telecom":  # settings already right: the "already on" replies
                run_episode(env, Tau2Adversary("act_on_all"), task, seed=0)
                for _msg, turn, device in env.turns():
                    ground(turn.text, turn.calls, device, g)
            if on_task:
                on_task()
    finally:
        env.close()
    tasks_n = len(chosen)
    return DomainFidelity(
        domain=domain,
        tasks=tasks_n,
        competent=ratio(n["won"], n["runs"], 0.0),
        agree=ratio(n["agree"], tasks_n, 0.0),
        same_transcript=ratio(n["same"], tasks_n, 0.0),
        deterministic=ratio(n["det"], tasks_n, 0.0),
        reworded={s: ratio(v[0], v[1], 0.0) for s, v in styled.items()},
        wrong_tasks=wrong[0],
        wrong_declined=ratio(wrong[1], wrong[0]),
        wrong_failed=ratio(wrong[2], wrong[0]),
        wrong_by_field=by_field,
        early_closed=ratio(early[0], tasks_n, 0.0),
        early_premature=ratio(early[1], tasks_n, 0.0),
        early_failed=ratio(early[2], tasks_n, 0.0),
        irrelevant_replies=irr[0],
        irrelevant_invented=ratio(irr[1], irr[0], 0.0),
        irrelevant_other=ratio(irr[2], irr[0], 0.0),
        unread_rate=ratio(n["unread"], n["replies"], 0.0),
        reworded_unread={s: ratio(v[2], v[3], 0.0) for s, v in styled.items()},
        grounding=asdict(g) if domain == "telecom" else {},
        failures=fails,
    )


def measure(
    domains: Iterable[str] = DOMAINS,
    tasks_per_domain: int | None = None,
    styles: Iterable[str] = STYLES,
    on_task: Callable[[], None] | None = None,
) -> Tau2FidelityReport:
    """The report over ``domains``: all their tasks, or the first ``tasks_per_domain``."""
    start = time.perf_counter()
    out: dict[str, DomainFidelity] = {}
    for domain in domains:
        chosen = suites.tasks(domain)
        if tasks_per_domain is not None:
            chosen = _spread(chosen, tasks_per_domain)
        out[domain] = measure_domain(domain, chosen, styles, on_task=on_task)
    return Tau2FidelityReport(out, round(time.perf_counter() - start, 2))


def _spread(tasks: list[Task], k: int) -> list[Task]:
    """``k`` tasks spread over the list (tau2's tasks come grouped by kind)."""
    if k >= len(tasks):
        return tasks
    step = len(tasks) / k
    return [tasks[int(i * step)] for i in range(k)]
