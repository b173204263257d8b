"""Dialogue acts, and the rule-based reader that finds them in what the assistant writes.

The reader needs no model: it splits a message into sentences and reads each one's function
from cue words (a question that names a slot is a request for it; "shall I ..." asks for
consent; "has been cancelled" reports an action done; "unfortunately ... cannot" refuses) and
its content from the domain's slot patterns. It is deliberately conservative: a sentence it
cannot place yields no act, and the user then restates what it still needs rather than guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from palaestra.envs.runtimes.simuser.domain import Domain

#: assistant acts
REQUEST, CONFIRM, OFFER, DONE, REFUSE, ANYTHING_ELSE, BYE, INFORM = (
    "request",
    "confirm",
    "offer",
    "done",
    "refuse",
    "anything_else",
    "bye",
    "inform",
)

_SENTENCE = re.compile(r"(?<=[.?!])\s+|\n+")
_CONSENT = re.compile(
    r"\b(shall i|should i|do you want me to|would you like me to|may i|can i go ahead|"
    r"go ahead|proceed|do you confirm|is that correct|confirm that)\b"
)
_ASK = re.compile(
    r"\b(what|which|when|where|how many|how much|could you (please )?(tell|give|provide|share|"
    r"confirm)|can you (please )?(tell|give|provide|share)|may i (have|get|ask)|please (provide|"
    r"share|give))\b"
)
_OFFER = re.compile(
    r"\b(would (that|this|it|either|one of these) (work|suit)|does (that|this|it) (work|suit)|"
    r"how about|would you like|works for you|is that (ok|okay|fine|alright)|which one)\b"
)
_ANYTHING_ELSE = re.compile(
    r"\b(anything else|something else|any other|help you with (anything|something))\b"
)
_REFUSE = re.compile(
    r"\b(cannot|can not|can't|unable|not (possible|eligible|allowed|permitted|able)|"
    r"unfortunately|i'm afraid|i am afraid|no longer possible|does not allow|doesn't allow)\b"
)
_DONE = re.compile(
    r"\b(has been|have been|is now|are now|successfully|all set|done|completed|"
    r"i've (booked|cancelled|changed|updated|issued|processed|added|returned|exchanged)|"
    r"i have (booked|cancelled|changed|updated|issued|processed|added|returned|exchanged))\b"
)
_BYE = re.compile(r"\b(goodbye|good bye|bye|have a (nice|great|good|lovely) (day|trip|stay))\b")


@dataclass(frozen=True)
class Act:
    kind: str
    slot: str | None = None
    values: dict[str, list[str]] = field(default_factory=dict)
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.slot:
            out["slot"] = self.slot
        if self.values:
            out["values"] = self.values
        return out


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def read(domain: Domain, text: str) -> list[Act]:
    """The acts of one assistant message, in order.

    A proposal is often a statement followed by its question ("I will cancel ZFA04Y. Shall I
    proceed?"): a consent or offer question takes over the values of the statements just
    before it, so the user checks what it is actually agreeing to.
    """
    acts: list[Act] = []
    for sentence in sentences(text):
        low = sentence.lower()
        values = domain.slot_values(sentence)
        question = sentence.rstrip().endswith("?")
        asked = [
            s.name for s in domain.slots.values() if s.asked(sentence) and s.name not in values
        ]
        if question and asked and (_ASK.search(low) or not _CONSENT.search(low)):
            acts += [Act(REQUEST, slot, text=sentence) for slot in asked]
        elif question and (_CONSENT.search(low) or _OFFER.search(low) or values):
            kind = CONFIRM if _CONSENT.search(low) else OFFER
            context = []
            while acts and acts[-1].kind == INFORM:
                context.insert(0, acts.pop())
            merged: dict[str, list[str]] = {}
            for part in [*context, Act(kind, values=values)]:
                for slot, found in part.values.items():
                    merged.setdefault(slot, []).extend(found)
            full = " ".join([*(c.text for c in context), sentence])
            acts.append(Act(kind, values=merged, text=full))
        elif _ANYTHING_ELSE.search(low):
            acts.append(Act(ANYTHING_ELSE, text=sentence))
        elif _REFUSE.search(low):
            acts.append(Act(REFUSE, values=values, text=sentence))
        elif _DONE.search(low):
            acts.append(Act(DONE, values=values, text=sentence))
        elif _BYE.search(low):
            acts.append(Act(BYE, text=sentence))
        elif values:
            acts.append(Act(INFORM, values=values, text=sentence))
    return acts


_YES = re.compile(
    r"\b(yes|yeah|yep|sure|please do|go ahead|that works|sounds good|perfect)\b", re.IGNORECASE
)
_NO = re.compile(r"\b(no|nope|not quite|that's not|that is not|not what i)\b", re.IGNORECASE)


def user_agrees(text: str) -> bool | None:
    """Whether a user's reply says yes (True), no (False) or neither (None).

    Used by the env (consent before a write) and by the fidelity harness, so neither relies on
    the simulator's own account of what it meant.
    """
    if _NO.search(text):
        return False
    if _YES.search(text):
        return True
    return None
