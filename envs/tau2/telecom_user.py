"""The symbolic user of tau2's telecom tasks: a customer who acts on their own phone.

tau2's weak point is its LLM user (it invents tool results, acts before it is asked, leaves
early); this user is deterministic. Its facts (name, phone number, where it is) come from the
task's ``known_info`` and ``set_user_info``; what it accepts comes from the gold actions and the
scenario (the gold refuel amount and nothing else, a bill payment when the scenario pays one,
roaming on the line when it is abroad, never a plan change); a proposal naming several writes
gets a yes only if it wants every one. A fact the scenario does not give is said to be missing,
never made up.

The assistant's message is read twice: the simulated-user reader of
:mod:`palaestra.envs.runtimes.simuser` finds the dialogue acts (a question for a fact, a
proposal, a report, goodbye), and the device lexicon (:mod:`.telecom_reader`) finds what the
assistant asks it to do or to look at on the phone, clause by clause and in order; only what is
addressed to the user acts. Each instruction becomes a call of the user's own tool
(``world.call("user", ...)``) and the reply reports what the tool answered, never more; a switch
already where the assistant wants it is left alone and said to be so, as the phone's state
shows. An instruction the lexicon cannot map (no setting named, a network mode it does not know)
is asked back and logged ``unread``.

The user closes the conversation when its own check of the goal the scenario sets passes (an
``Excellent`` speed test, an MMS that can be sent, a status bar with signal): it runs that check
when asked, and by itself when the assistant says the fix is done or asks whether there is
anything else. A failed check before anything was changed is a diagnosis and only reported; a
failed check after a change is a failed attempt (mild frustration once, as the scenario says).
It also leaves when it is transferred to a human agent, or told goodbye. Several instructions
in one message are carried out in the order given (tau2's user asks for one at a time;
following them all is kinder to agents and changes no outcome).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from palaestra.envs.runtimes.simuser import acts
from palaestra.envs.runtimes.simuser.domain import Domain, Slot, by_name
from palaestra.envs.tau2.tasks import gold_actions
from palaestra.envs.tau2.telecom_reader import (
    AGENT_SIDE,
    ASKS_USER,
    DIRECTIVE,
    SWITCHES,
    Instruction,
    Unclear,
    clean,
    read_device,
)
from palaestra.envs.tau2.user import UserTurn
from palaestra.envs.tau2.world import Tau2World

PHONE = r"(?<!\d)(\(?\d{3}\)?[ .-]?\d{3}[ .-]?\d{4})(?!\d)"


class TelecomDomain(Domain):
    """The facts a telecom customer is asked for, in the reader's terms."""

    name = "tau2-telecom"
    slots = by_name(
        Slot(
            "phone_number",
            "phone number",
            ("phone number", "mobile number", "cell number", "telephone number", "number"),
            pattern=PHONE,
        ),
        Slot("full_name", "full name", ("full name", "your name", "name")),
        Slot(
            "location",
            "location",
            ("location", "where are you", "abroad", "travelling", "traveling", "country"),
        ),
        Slot(
            "gb_amount",
            "amount of data",
            ("how much data", "how many gb", "how many gigabytes", "amount of data"),
            pattern=r"(\d+(?:\.\d+)?)\s*(?:GB|gb|gigabytes?)\b",
        ),
    )


DOMAIN = TelecomDomain()


#: the assistant asking what the problem is
_ASKS_PROBLEM = re.compile(
    r"\b(?:how (?:can|may|could) i (?:help|assist)|"
    r"what (?:seems to be|is|'s) the (?:problem|issue)|"
    r"what(?:'s| is) (?:wrong|going on|happening)|what can i (?:do|help)|describe (?:the|your) "
    r"(?:problem|issue)|what (?:problem|issue))"
)
#: a question for a fact the user may be asked but does not know (its scenario gives none)
_UNKNOWN_FACT = re.compile(
    r"\b(?:customer id|account (?:id|number)|date of birth|birthday|e-?mail(?: address)?|"
    r"(?:home |billing )?address|zip(?: code)?|pin|puk|imei|bill id|line id|plan id|device id|"
    r"passport(?: number)?|social security(?: number)?|ssn|(?:mother's )?maiden name|password|"
    r"security (?:question|answer|code)|(?:credit |debit )?card number|cvv|driver's licen[cs]e)\b",
    re.IGNORECASE,
)
#: a number or name that is not the phone number or the user's own name
_NAMED_ELSE = re.compile(
    r"\b(?!phone|mobile|cell|telephone|contact|your|the|my|a\b)\w+ number\b|"
    r"\b(?:maiden|user|app) name\b"
)
#: the words that name a slot outright, where another number or name is also asked for
_OWN_WORDS = {
    "phone_number": r"\b(?:phone|mobile|cell|telephone|contact) number\b",
    "full_name": r"\b(?:full|your|first|last) name\b",
}
#: the steps an anxious user worries about
_DRASTIC = frozenset({"reboot_device", "reset_apn_settings", "reseat_sim_card"})
_SENT_REQUEST = re.compile(r"\b(?:sent|send|sending|issued)\b.*\bpayment request\b")

_TRANSFER = re.compile(
    r"\btransfer\w*\b.*\b(?:human|agent|specialist|technical support|representative)\b|"
    r"\b(?:human|live) agent\b.*\b(?:transfer|connect)\w*"
)
_FIXED = re.compile(
    r"\b(?:should (?:now )?(?:be )?(?:fixed|resolved|working|work)|(?:is|are) (?:now )?"
    r"(?:fixed|resolved)|try (?:it )?again|(?:fix|resolve)d? (?:the|your) (?:issue|problem)|"
    r"all set|that should (?:do it|help|fix))\b"
)
_BEING_TRANSFERRED = re.compile(
    r"\b(?:i(?:'m| am|'ve| have| will|'ll) (?:now )?transferr?\w*|(?:being|been) transferred|"
    r"connecting you)\b"
)
_ASKS_CONSENT = re.compile(
    r"\b(?:shall|should) i\b|\bwould you like\b|\bdo you want\b|\bwant me to\b|\bmay i\b|"
    r"\bcan i\b|\bok(?:ay)? (?:to|if)\b"
)
_REFUEL = re.compile(
    r"refuel|top[ -]?up|\b(?:add(?:ing)?|more|extra|additional)\b.*\b(?:gb|data)\b"
)
_PAYMENT_REQUEST = re.compile(
    r"payment request|send (?:you )?a (?:payment|bill)|pay (?:the|your) bill"
)
_GB = re.compile(r"(\d+(?:\.\d+)?)\s*(?:gb|gigabytes?)\b")


#: a requested fact must name it: the reader's lexicon hears a phone number in "on your phone"
_NAMED = {"phone_number": r"\bnumber\b", "full_name": r"\bname\b"}


def _plausible(heard: list[acts.Act]) -> list[acts.Act]:
    """The reader's acts, less requests for a fact the sentence does not name, and guesses
    beside a request the sentence names outright."""
    out = []
    for act in heard:
        named = _NAMED.get(act.slot or "")
        if act.kind == acts.REQUEST and named and not re.search(named, act.text.lower()):
            continue
        if (
            act.kind == acts.REQUEST
            and act.alternatives
            and any(
                a.kind == acts.REQUEST and not a.alternatives and a.text == act.text for a in heard
            )
        ):
            continue
        out.append(act)
    return out


def first_person(text: str) -> str:
    """The scenario's second person as the user says it ("Your phone" -> "My phone")."""
    subs = (
        (r"\bYou are\b", "I am"),
        (r"\byou are\b", "I am"),
        (r"\bYou (?=mobile|phone|data|internet|line)", "My "),
        (r"\bYour\b", "My"),
        (r"\byour\b", "my"),
        (r"\bYou\b", "I"),
        (r"\byou\b", "me"),
    )
    for pattern, repl in subs:
        text = re.sub(pattern, repl, text)
    return text


def _text_of(content: str) -> str:
    return " ".join(line.strip() for line in content.splitlines() if line.strip())


class TelecomUser:
    """A telecom customer who answers from its facts and acts on its phone when asked.

    ``seed`` is taken for the protocol only: the user is the same under every seed, so three
    runs of a task must agree and a failure is the agent's, not a draw's.
    """

    def __init__(self, task: dict[str, Any], seed: int = 0) -> None:
        self.task = task
        self.seed = seed
        self.log: list[dict[str, Any]] = []
        scenario = task["user_scenario"]["instructions"]
        self.reason: str = scenario["reason_for_call"]
        self.known: str = scenario.get("known_info") or ""
        self.rules: str = scenario.get("task_instructions") or ""
        info: dict[str, Any] = {}
        abroad: bool | None = None
        for action in (task.get("initial_state") or {}).get("initialization_actions") or []:
            if action["func_name"] == "set_user_info":
                info = dict(action.get("arguments") or {})
            if action["func_name"] == "set_user_location":
                abroad = bool((action.get("arguments") or {}).get("abroad"))
        phone = re.search(PHONE, self.known)
        name = re.search(r"You are ([A-Z][\w'-]+(?: [A-Z][\w'-]+)+)", self.known)
        self.phone: str | None = info.get("phone_number") or (phone.group(1) if phone else None)
        self.name: str | None = info.get("name") or (name.group(1) if name else None)
        place = re.search(r"currently ([^.]+)", self.known)
        self.place: str | None = place.group(1).strip() if place else None
        self.abroad = abroad if abroad is not None else bool(self.place and "abroad" in self.place)
        low_reason = self.reason.lower()
        if "mms" in low_reason:
            self.goal = "mms"
        elif "service" in low_reason or "signal" in low_reason:
            self.goal = "service"
        else:
            self.goal = "speed"
        gold = gold_actions(task)
        names = {a["name"] for a in gold}
        refuel = [a for a in gold if a["name"] == "refuel_data"]
        willing = re.search(r"refuel (\d+(?:\.\d+)?) ?GB", self.rules)
        self.refuel: float | None = (
            float(refuel[0]["arguments"]["gb_amount"])
            if refuel
            else (float(willing.group(1)) if willing else None)
        )
        self.pays = bool(names & {"make_payment", "send_payment_request"}) or bool(
            re.search(r"asks you to pay a bill, you accept", self.rules)
        )
        persona = (task["user_scenario"].get("persona") or "").lower()
        #: tau2's anxious persona ("'reboot the phone' can trigger worries about losing precious
        #: photos"): wording only, said once, never a fact about the phone
        self.anxious = "flustered" in persona or "overwhelmed" in persona
        self.worried = False
        self.solved = False
        self.frustrated = False
        #: it has changed something on its phone (or been told a fix is done): a failed check
        #: of its goal is then a failed attempt, not a first diagnosis
        self.attempted = False
        self.stated: set[str] = set()

    # --- the protocol
    def opening(self) -> str:
        return first_person(self.reason.strip())

    def reply(self, message: str, world: Tau2World) -> UserTurn:
        installed = self._installed(world)
        device = read_device(message, installed)
        consumed = {item.text for item in device}
        rest = [s for s in acts.sentences(message) if s not in consumed]
        heard = _plausible(acts.read(DOMAIN, " ".join(rest))) if rest else []
        entry: dict[str, Any] = {
            "message": message,
            "heard": [a.to_json() for a in heard],
            "said": [],
        }
        entry["heard"] += [d.to_json() for d in device]
        parts: list[str] = []
        calls: list[dict[str, Any]] = []
        agreed = closed = unread = False
        said: list[str] = entry["said"]
        low = message.lower()

        if self._transferred(low):
            said.append("transfer")
            turn = UserTurn("Okay, I'll hold for the human agent. Thank you.", closed=True)
            return self._done(entry, turn)

        for sentence in rest:  # a fact its scenario does not give: said so, never made up
            unknown = [m.group(0) for m in _UNKNOWN_FACT.finditer(sentence)]
            if unknown and ASKS_USER.search(clean(sentence)):
                parts.append(f"Sorry, I can't give you my {' or my '.join(unknown)}.")
                said.append("fact:unknown")
        for act in heard:
            own = _OWN_WORDS.get(act.slot or "")
            if own and _NAMED_ELSE.search(act.text) and not re.search(own, act.text, re.IGNORECASE):
                continue  # "passport number" is not a phone number
            if act.kind == acts.REQUEST and act.slot is not None:
                parts.append(self._fact(act.slot))
                said.append(f"fact:{act.slot}")
        if not any(a.kind == acts.REQUEST and a.slot for a in heard) and re.search(
            r"\b(?:where are you|are you (?:currently )?(?:abroad|traveling|travelling|at home|in "
            r"the|outside)|your (?:current )?location)\b",
            low,
        ):
            parts.append(self._fact("location"))
            said.append("fact:location")

        ran_goal = False
        for item in device:
            if isinstance(item, Unclear):
                parts.append(f"Sorry, I'm not sure what you want me to do: {item.what}?")
                said.append("clarify")
                unread = True
                continue
            text, ran = self._perform(item, world, calls)
            parts.append(text)
            said.append(f"did:{item.tool}")
            ran_goal = ran_goal or ran

        asked = any(a.kind == acts.REQUEST and a.slot for a in heard)
        proposal = [] if asked else self._proposal(" ".join(rest), heard)
        confirms = [a for a in heard if a.kind == acts.CONFIRM]
        if proposal:
            ok, text = self._answer(proposal, " ".join(rest))
            parts.append(text)
            said.append("agree" if ok else "decline")
            agreed = ok
        elif confirms and any(a.values.get("phone_number") for a in confirms):
            given = {re.sub(r"\D", "", v) for a in confirms for v in a.values["phone_number"]}
            right = given == {re.sub(r"\D", "", self.phone or "")}
            parts.append("That's right." if right else self._fact("phone_number"))
            said.append("confirm_fact" if right else "correct_fact")
        elif confirms and not device and not _ASKS_PROBLEM.search(low):
            parts.append("Okay, please tell me what I should do.")
            said.append("ack")

        verify = not ran_goal and (
            bool(_FIXED.search(low))
            or (
                any(a.kind in (acts.ANYTHING_ELSE, acts.DONE) for a in heard)
                and not device
                and not proposal
            )
        )
        if verify and not calls:
            self.attempted = True  # told the fix is done: its own check is the attempt's
            text, ran = self._perform(self._goal_check(), world, calls)
            parts.append(text)
            said.append("verify")
            ran_goal = True
        if ran_goal:
            if self.solved:
                parts.append("That's fixed it, thank you so much for your help. Goodbye!")
                said.append("bye")
                closed = True
            elif complaint := self._not_yet():
                parts.append(complaint)
                said.append("not_solved")
        elif any(a.kind == acts.BYE for a in heard) and not parts:
            parts.append("Okay, goodbye.")
            said.append("bye")
            closed = True

        if not parts and _ASKS_PROBLEM.search(low):
            parts.append(self.opening() if not self.solved else "My problem is solved, thanks.")
            said.append("problem")
        if not parts and not proposal and _SENT_REQUEST.search(low):
            parts.append(self._perform(Instruction("check_payment_request", {}, ""), world,
                                       calls)[0])  # fmt: skip
            said.append("did:check_payment_request")
        if not parts:
            if (
                any(a.kind == acts.UNREAD for a in heard)
                or acts._expects(message)
                or any(DIRECTIVE.search(clean(s)) for s in acts.sentences(message))
            ):
                parts.append("Sorry, I didn't quite follow. What would you like me to do?")
                said.append("clarify")
                unread = True
            else:
                parts.append(self._restate())
                said.append("restate")
        turn = UserTurn(" ".join(parts), closed=closed, agreed=agreed, calls=calls)
        entry["unread"] = unread
        return self._done(entry, turn)

    # --- pieces
    def _done(self, entry: dict[str, Any], turn: UserTurn) -> UserTurn:
        entry["text"] = turn.text
        entry["calls"] = [{"name": c["name"], "arguments": c["arguments"]} for c in turn.calls]
        entry.setdefault("unread", False)
        self.log.append(entry)
        return turn

    def _transferred(self, low: str) -> bool:
        if "you are being transferred" in low:
            return True
        if not _TRANSFER.search(low):
            return False
        return bool(_BEING_TRANSFERRED.search(low))

    def _installed(self, world: Tau2World) -> list[str]:
        try:
            return list(world.state()["user"]["device"]["app_statuses"])
        except (KeyError, TypeError):
            return []

    def _fact(self, slot: str) -> str:
        self.stated.add(slot)
        if slot == "phone_number" and self.phone:
            return f"My phone number is {self.phone}."
        if slot == "full_name" and self.name:
            return f"My name is {self.name}."
        if slot == "location":
            if self.place:
                return f"I'm {self.place}."
            return "I'm not travelling." if not self.abroad else "I'm abroad."
        if slot == "gb_amount" and self.refuel is not None:
            return f"I'd like to add {self.refuel:g} GB of data."
        label = DOMAIN.slots[slot].label
        return f"Sorry, I don't have my {label} to hand."

    def _call(self, world: Tau2World, calls: list[dict[str, Any]], tool: str, args: dict) -> str:
        res = world.call("user", tool, args)
        calls.append(
            {"name": tool, "arguments": dict(args), "content": res.content, "error": res.error}
        )
        return res.content

    def _perform(
        self, item: Instruction, world: Tau2World, calls: list[dict[str, Any]]
    ) -> tuple[str, bool]:
        """Do one instruction on the phone; the reply and whether the goal's check ran."""
        if item.tool == "data_usage":
            return "My phone doesn't show me my data usage.", False
        if item.tool == "make_payment" and not self.pays:
            return "I'd rather not make a payment right now.", False
        if item.want is not None:
            field = next(f for _l, _w, t, f in SWITCHES if t == item.tool)
            now = bool(world.state()["user"]["device"][field])
            if now == item.want:
                state = "on" if now else "off"
                label = f"{item.label[0].upper()}{item.label[1:]}"
                return f"{label} is already {state}.", False
        if (
            self.goal == "service"
            and item.tool == "check_network_status"
            and re.search(r"\b(?:service|signal)\b", item.text.lower())
            and not re.search(
                r"network (?:status|settings|connection)|airplane|mobile data|roaming",
                item.text.lower(),
            )
        ):  # its scenario: "always check the status bar if asked for status information"
            item = Instruction("check_status_bar", {}, item.text)
        content = self._call(world, calls, item.tool, item.arguments)
        worry = ""
        if self.anxious and not self.worried and item.tool in _DRASTIC:
            self.worried, worry = True, "Oh dear, I hope I won't lose my photos. "
        if not item.tool.startswith(("check_", "run_", "can_")):
            self.attempted = True
        goal_tool = self._goal_check().tool
        ran = item.tool == goal_tool or (
            self.goal == "service" and item.tool == "check_network_status"
        )
        if ran:
            self.solved = self._met(item.tool, content)
        if item.tool == "run_speed_test":
            return f"I ran a speed test: {_text_of(content)}", ran
        if item.tool == "can_send_mms":
            return f"I tried: {_text_of(content)}", ran
        if item.tool.startswith("check_"):
            return f"I checked: {_text_of(content)}", ran
        return f"{worry}Done. My phone says: {_text_of(content)}", ran

    def _goal_check(self) -> Instruction:
        tool = {"speed": "run_speed_test", "mms": "can_send_mms", "service": "check_status_bar"}
        return Instruction(tool[self.goal], {}, "")

    def _met(self, tool: str, content: str) -> bool:
        if self.goal == "speed":
            return tool == "run_speed_test" and "(Excellent)" in content
        if self.goal == "mms":
            return tool == "can_send_mms" and " can send MMS" in content
        if tool == "check_network_status":
            return "Cellular Connection: connected" in content
        return "📶" in content and "No Signal" not in content

    def _not_yet(self) -> str:
        want = {
            "speed": "I need an excellent internet speed",
            "mms": "I still can't send MMS messages",
            "service": "I still don't have any signal",
        }[self.goal]
        if not self.attempted:
            return ""
        text = f"That doesn't solve my problem: {want}."
        if not self.frustrated:
            self.frustrated = True
            text += " This is a bit frustrating."
        return text

    def _restate(self) -> str:
        if self.solved:
            return "Thanks, my problem is solved."
        # what it wants, never a claim about the phone it has not just looked at
        return {
            "speed": "What should I do next to get an excellent internet speed?",
            "mms": "What should I do next to be able to send MMS messages?",
            "service": "What should I do next to get service on my phone?",
        }[self.goal]

    def _proposal(self, message: str, heard: list[acts.Act]) -> list[str]:
        """What the assistant proposes to do itself (each write it names), if the message asks
        consent for it."""
        low = clean(message)
        consent = (
            any(a.kind in (acts.CONFIRM, acts.OFFER) for a in heard)
            or bool(_ASKS_CONSENT.search(low))
            # a bare question naming a write on its side: "Enable roaming on your line?"
            or any(
                s.rstrip().endswith("?") and AGENT_SIDE.search(s.lower())
                for s in acts.sentences(message)
            )
        )
        if not consent:
            return []
        found = []
        if re.search(r"\bplan\b", low) and re.search(r"chang|switch|upgrad|move|new plan", low):
            found.append("change_plan")
        if _REFUEL.search(low):
            found.append("refuel_data")
        if _PAYMENT_REQUEST.search(low):
            found.append("send_payment_request")
        if re.search(r"\b(?:resume|reactivate|restore|unsuspend|lift)\b", low):
            found.append("resume_line")
        elif re.search(r"\bsuspend(?:ing)?\b", low):
            found.append("suspend_line")
        if re.search(r"roaming", low) and re.search(r"\b(?:disable|turn off|remove)\b", low):
            found.append("disable_roaming")
        elif re.search(r"roaming", low):
            found.append("enable_roaming")
        if re.search(r"transfer|human agent", low):
            found.append("transfer_to_human_agents")
        return found

    def _answer(self, proposals: list[str], text: str) -> tuple[bool, str]:
        """Yes to a proposal only when every write it names is one the user wants; offered
        alternatives ("add data, or change your plan: which do you prefer?"), it picks the one
        it wants."""
        verdicts = [self._consider(p, text) for p in proposals]
        choice = len(proposals) > 1 and bool(
            re.search(r"\bor\b", text.lower())
            and re.search(r"\b(?:which|prefer|rather|either)\b", text.lower())
        )
        if choice and any(ok for ok, _ in verdicts):
            return True, " ".join(t for ok, t in verdicts if ok)
        if all(ok for ok, _ in verdicts):
            return True, " ".join(t for _, t in verdicts)
        return False, " ".join(t for ok, t in verdicts if not ok)

    def _consider(self, proposal: str, message: str) -> tuple[bool, str]:
        low = message.lower()
        if proposal == "refuel_data":
            if self.refuel is None:
                return False, "No thanks, I don't want to buy more data."
            amounts = [float(x) for x in _GB.findall(low)]
            if not amounts:
                return False, f"I'd like {self.refuel:g} GB of data. How much would that cost?"
            if any(abs(a - self.refuel) < 1e-9 for a in amounts) and len(set(amounts)) == 1:
                return True, f"Yes, please add {self.refuel:g} GB of data."
            return False, f"No, I only want to add {self.refuel:g} GB of data."
        accepts, yes, no = _CONSENT.get(proposal, _DECLINE)
        return (True, yes) if accepts(self) else (False, no)


#: an agent's proposal (other than refuelling, which weighs amounts) -> whether this user agrees,
#: their yes, their no; a proposal not listed is declined
_CONSENT: dict[str, tuple[Callable[[TelecomUser], bool], str, str]] = {
    "change_plan": (lambda user: False, "", "No, I don't want to change my plan."),
    "send_payment_request": (
        lambda user: user.pays,
        "Yes, please send me the payment request.",
        "No, I don't want to pay anything right now.",
    ),
    "resume_line": (
        lambda user: user.goal == "service",
        "Yes, please resume my line.",
        "No, please leave my line as it is.",
    ),
    "enable_roaming": (
        lambda user: user.abroad,
        "Yes, please enable roaming on my line.",
        "No, I'm not travelling, I don't need roaming.",
    ),
    "transfer_to_human_agents": (lambda user: True, "Yes, please transfer me.", ""),
}
_DECLINE: tuple[Callable[[TelecomUser], bool], str, str] = (
    lambda user: False,
    "",
    "No, I don't want that.",
)
