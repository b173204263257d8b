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

from palaestra.envs.runtimes.simuser import lexicon
from palaestra.envs.runtimes.simuser.domain import Domain

#: assistant acts
REQUEST, CONFIRM, OFFER, DONE, REFUSE, ANYTHING_ELSE, BYE, INFORM, UNREAD = (
    "request",
    "confirm",
    "offer",
    "done",
    "refuse",
    "anything_else",
    "bye",
    "inform",
    "unread",
)

_SENTENCE = re.compile(r"(?<=[.?!])[\"')]*\s+|\n+")
_LEAD = r"^(?:(?:and|so|also|now|next|ok|okay|great|thanks|thank you|lastly|finally|then)[,:]?\s+)*"
#: a sentence that asks, though it may not end in "?"
_INTERROGATIVE = re.compile(
    _LEAD + r"(?:what|which|when|where|who|whose|why|how|could|can|would|will|shall|should|do|"
    r"does|did|is|are|may|might)\b"
)
#: asking for information: wh-words, and the verbs of requests and instructions
_ASK = re.compile(
    _LEAD + r"(?:please |kindly )?(?:provide|send|enter|give|tell|share|type|state|specify|"
    r"supply|spell)\b|"
    r"\b(?:what|which|when|where|who|whose|why|how (?!about)\w+|"
    r"(?:could|can|would|will) you (?:please |kindly )?(?:tell|give|provide|share|send|confirm|"
    r"let me know|enter|type|state|spell|check|remind|specify|supply)|"
    r"(?:may|can|could) i (?:please )?(?:have|get|ask|know|take|grab|see)|"
    r"(?:please|kindly) (?:provide|share|give|tell|send|enter|type|state|confirm|let me know|"
    r"specify|supply|include)|"
    r"i(?:'ll| will|'d| would)? (?:also )?(?:need|require)|need (?:your|the)|"
    r"let me know (?:your|the|which|what|how|when)|tell me|give me|send me|"
    r"do you (?:have|know|need|want|prefer)|any (?:preference|particular)|"
    r"(?:your|the) [\w' ]+\?$|"
    r"^[\w' ,-]+ please[.!]?$)"
)
#: asking for consent to a proposal, as a question, a tag or an instruction
_CONSENT = re.compile(
    r"\b(?:shall (?:i|we)|should (?:i|we)|(?:do you )?want me to|would you like me to|"
    r"like me to|(?:may|can|could) i (?!(?:please )?(?:have|get|ask|know|take|grab|see)\b)|"
    r"ok(?:ay)? (?:to|if)|is it ok(?:ay)?|(?:is )?(?:that|this) ok(?:ay)?|"
    r"alright (?:to|if|with you)|"
    r"all right (?:to|if|with you)|go ahead|proceed|confirm|sound(?:s)? (?:good|ok|okay|right)|"
    r"does (?:that|this|it) (?:work|sound)|is (?:that|this|it) (?:alright|all right|fine|correct|"
    r"right|what you(?:'d| would)? (?:want|like))|are you happy|happy (?:for me|with)|"
    r"good to go|agreed|"
    r"reply (?:with )?['\"\u2018\u201c]?yes|say ['\"\u2018\u201c]?yes|"
    r"(?:your|the) (?:approval|permission|consent|go-ahead)|"
    r"i(?:'ll| will| can)(?!'t|not| not)\b.+\b(?:once|as soon as|when|after) you\b|"
    r"let me know if (?:i should|you(?:'d| would) like me to|you want me to|that(?:'s| is) (?:ok|"
    r"okay|fine|alright)))\b"
    r"|(?:\b(?:ok|okay|alright|all right|right|correct|yes|good|fine)\s*\?\s*$)"
)
_OFFER = re.compile(
    r"\b(?:how about|what about|i (?:found|recommend|suggest|would recommend|would suggest)|"
    r"i'd (?:recommend|suggest)|there(?:'s| is) |would (?:that|this|it|either|one of these) "
    r"(?:work|suit|do)|does (?:that|this|it) suit|works for you|would you like (?:it|that|this|"
    r"one)|which one|interested|(?:tell|let) me (?:know )?if (?:it|that|this) works)\b"
)
_ANYTHING_ELSE = re.compile(
    r"\b(?:anything else|something else|any other|what else|will that be all|is that all|"
    r"further (?:assistance|help)|help (?:you )?with anything|else i can (?:do|help))\b"
)
_REFUSE = re.compile(
    r"\b(?:cannot|can not|can't|unable|not able|won't be able|(?:not|won't be|isn't|is not) "
    r"possible|impossible|(?:not|isn't|aren't|is not|are not) (?:eligible|allowed|permitted)|"
    r"ineligible|unfortunately|i'm afraid|i am afraid|no longer possible|"
    r"(?:does not|doesn't|do not|don't|won't|will not) (?:allow|permit|let)|"
    r"not something (?:i|we)(?:'m| am| are|'re)? (?:able|allowed)|(?:have to|must) decline|"
    r"decline to|no can do|denied|refuse to|against (?:our|the) (?:policy|rules))\b"
)
_PARTICIPLE = (
    r"(?:booked|cancell?ed|changed|updated|issued|processed|added|returned|exchanged|moved|"
    r"refunded|confirmed|made|requested|reserved|charged|set|completed|modified|rebooked|placed|"
    r"submitted|applied|credited|arranged|sorted|scheduled|switched|done)"
)
_DONE = re.compile(
    r"\b(?:(?:has|have|had) (?:now |just |already |successfully )?been \w+|"
    rf"(?:is|are|was|were|got|gets) (?:now |just |all |successfully |already )?{_PARTICIPLE}|"
    rf"i(?:'ve| have)? (?:just |now |successfully |already )?{_PARTICIPLE}|"
    r"all set|all done|successfully|went through|you(?:'re| are) (?:all )?(?:set|booked)|"
    r"^done)\b"
)
#: a short question about nothing in the domain that asks whether there is more to do
_MORE = re.compile(
    r"\b(?:anything|something|everything|all|more|further|other|that it|that's it)\b.*\?\s*$"
)
_BYE = re.compile(
    r"\b(?:goodbye|good bye|bye|take care|have a (?:nice|great|good|lovely|safe) "
    r"(?:day|trip|stay|evening|meal|flight|journey))\b"
)


@dataclass(frozen=True)
class Act:
    kind: str
    slot: str | None = None
    values: dict[str, list[str]] = field(default_factory=dict)
    text: str = ""
    #: a guessed request: every slot it may ask for, best first (the user answers the first
    #: its goal holds and has not said)
    alternatives: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.slot:
            out["slot"] = self.slot
        if self.alternatives:
            out["guessed"] = list(self.alternatives)
        if self.values:
            out["values"] = self.values
        return out


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def read(domain: Domain, text: str) -> list[Act]:
    """The acts of one assistant message, in order.

    A proposal is often a statement followed by its question ("I will cancel ZFA04Y. Shall I
    proceed?"): a consent or offer question takes over the values of the statements just
    before it, so the user checks what it is actually agreeing to. A message with a question
    or an instruction in it that yields no act but informs is :data:`UNREAD` (the user asks
    what is meant, and the fidelity report counts it).
    """
    words = lexicon.of(domain)
    acts: list[Act] = []
    for sentence in sentences(text):
        acts += _sentence(domain, words, sentence, acts)
    if not any(a.kind != INFORM for a in acts) and _expects(text):
        acts.append(Act(UNREAD, text=text))
    return acts


def _sentence(domain: Domain, words: lexicon.Lexicon, sentence: str, acts: list[Act]) -> list[Act]:
    """The acts of one sentence; a proposal takes the informs at the end of ``acts``."""
    low = sentence.lower().strip()
    values = lexicon.of(domain).slot_values(sentence)
    question = low.endswith("?") or bool(_INTERROGATIVE.search(low))
    asked, unknown = words.asked(sentence)
    asked = [slot for slot in asked if slot not in values]
    consent = bool(_CONSENT.search(low))
    if asked or unknown:
        ask = bool(_ASK.search(low))
        if asked and (
            (ask and not (consent and values)) or (question and not consent and not values)
        ):
            return [Act(REQUEST, slot, text=sentence) for slot in asked] + _guesses(
                words, sentence, asked
            )
        if unknown and (ask or question):
            return [Act(REQUEST, None, text=sentence)]
    closing = any(w in low for w in ("else", "any", "all", "further")) and bool(
        _ANYTHING_ELSE.search(low)
    )
    if closing and not values:
        return [Act(ANYTHING_ELSE, text=sentence)]
    refuse = bool(_REFUSE.search(low))
    if consent and not values and _GIVE.search(low):  # "go ahead and give me the ..."
        guessed = _guesses(words, sentence, [])
        if guessed:
            return guessed
    if consent or (question and not refuse and (values or _OFFER.search(low))):
        kind = CONFIRM if consent else OFFER
        context: list[Act] = []
        while acts and acts[-1].kind == INFORM:
            context.insert(0, acts.pop())
        merged: dict[str, list[str]] = {}
        for part in [*context, Act(kind, values=values)]:
            for slot, found in part.values.items():
                merged.setdefault(slot, []).extend(found)
        full = " ".join([*(c.text for c in context), sentence])
        return [Act(kind, values=merged, text=full)]
    if closing:
        return [Act(ANYTHING_ELSE, text=sentence)]
    if (
        _MORE.search(low)
        and not values
        and not refuse
        and not asked
        and not _WRITE_VERB.search(low)
    ):
        return [Act(ANYTHING_ELSE, text=sentence)]
    if refuse:
        return [Act(REFUSE, values=values, text=sentence)]
    if _DONE.search(low):
        return [Act(DONE, values=values, text=sentence)]
    if ("bye" in low or "have a" in low or "take care" in low) and _BYE.search(low):
        return [Act(BYE, text=sentence)]
    if values:
        return [Act(INFORM, values=values, text=sentence)]
    if (question or _ASK.search(low)) and not values and (not consent or _GIVE.search(low)):
        guessed = _guesses(words, sentence, [])
        if guessed:
            return guessed
    if question and acts and acts[-1].kind == INFORM:
        # a bare question after a statement asks about the statement ("... . Good?")
        said = acts.pop()
        return [Act(CONFIRM, values=said.values, text=f"{said.text} {sentence}")]
    return []


#: asking to be given something: it outweighs a consent cue ("go ahead and give me the ...")
_GIVE = re.compile(r"\b(?:give|tell|send|provide|share|type|enter) (?:me|us|in|over)\b")
_ITEMS = re.compile(r",\s*(?:and\s+)?|\s+and\s+|:\s*")


def _guesses(words: lexicon.Lexicon, sentence: str, asked: list[str]) -> list[Act]:
    """Requests for the items of a request that the lexicon maps to no slot, each guessed
    (:meth:`lexicon.Lexicon.guess`): "the district, type of cuisine and price bracket"."""
    items = _ITEMS.split(sentence)
    if len(items) == 1:
        guessed = () if asked else words.guess(sentence)
        return [Act(REQUEST, guessed[0], text=sentence, alternatives=guessed)] if guessed else []
    out = []
    for item in items:
        if words.asked(item)[0]:
            continue
        guessed = tuple(g for g in words.guess(item) if g not in asked)
        if guessed:
            asked = [*asked, guessed[0]]
            out.append(Act(REQUEST, guessed[0], text=sentence, alternatives=guessed))
    return out


_WRITE_VERB = re.compile(
    r"\b(?:book|cancel|change|modify|return|exchange|move|add|set|refund|reserve|update|switch)\b"
)


def _expects(text: str) -> bool:
    """Whether a message asks the user something (a question, or a request as an
    instruction), so reading nothing in it is a misunderstanding."""
    low = text.lower()
    return "?" in low or bool(_ASK.search(low)) or bool(_CONSENT.search(low))


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
