"""The words for each slot, built from the domain, and where a sentence mentions them.

A slot's words are its own (field name, label, listed words) and the synonyms ordinary English
has for them (:data:`SYNONYMS`, keyed by a word or phrase the slot's own words contain: a slot
that says "reservation" is also asked for as a "confirmation code" or "booking ref"). Slots of
a kind (a number of people, a date, a time) get that kind's question words too ("For how
many?", "When would you like to go?"). No domain names its synonyms: a new domain, or an
``ask_user`` detail, gets them from its own words.

:meth:`Lexicon.mentions` finds the slots a sentence names, longest phrase first, and keeps the
head of a noun phrase: in "What's the name on the reservation?" the reservation is a modifier
(after "on the"), so the question asks for a name. Generic question words ("how many", "when")
count only when nothing more specific is named ("How many bags?" asks for bags).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from palaestra.envs.runtimes.simuser import values as V

if TYPE_CHECKING:
    from palaestra.envs.runtimes.simuser.domain import Domain, Slot

_CODE = (
    "booking number",
    "booking ref",
    "booking reference",
    "reservation number",
    "confirmation code",
    "confirmation number",
    "reference number",
    "reference",
    "ref",
    "pnr",
    "locator",
)
_PEOPLE = (
    "how many people",
    "how many tickets",
    "how many seats",
    "how many guests",
    "how many travellers",
    "how many passengers",
    "how many of you",
    "number of people",
    "number of guests",
    "number of travellers",
    "number of tickets",
    "passenger count",
    "guest count",
    "party size",
    "people",
    "guests",
    "tickets",
    "travellers",
    "travelers",
    "passengers",
    "party",
    "diners",
    "in your party",
)
#: a word or phrase a slot's own words contain -> more ways people say it
SYNONYMS: dict[str, tuple[str, ...]] = {
    "reservation": ("reservation", "booking", *_CODE),
    "booking reference": ("booking", "reservation", *_CODE),
    "order": ("order id", "order number", "order #", "order no", "order ref", "which order"),
    "user id": ("user id", "userid", "username", "user name", "account", "account username"),
    "email": ("email", "e-mail", "email address", "e-mail address"),
    "flight number": ("flight number", "flight no", "flight", "which flight"),
    "cabin": ("cabin", "cabin class", "class", "class of travel", "travel class", "fare class"),
    "class": ("class", "class of travel", "travel class", "seat class", "cabin"),
    "lead passenger": (
        "passenger's name",
        "passenger name",
        "passenger's full name",
        "full name",
        "name",
        "who is travelling",
        "who's travelling",
        "who is traveling",
        "name on the booking",
        "name for the booking",
    ),
    "train": ("train", "train code", "train number", "which train", "train no"),
    "card": (
        "card",
        "card number",
        "debit card",
        "payment card",
        "payment",
        "pay",
        "paying",
        "pay with",
    ),
    "area": ("area", "part of town", "neighbourhood", "neighborhood", "where in town"),
    "food": ("food", "cuisine", "type of food", "kind of food", "sort of food"),
    "price range": ("price range", "budget", "how much would you like to spend", "spend"),
    "star rating": ("stars", "star rating", "star", "how many stars"),
    "parking": ("parking", "park"),
    "restaurant name": ("restaurant", "which restaurant"),
    "hotel name": ("hotel", "which hotel"),
    "product": ("product", "item", "which item", "what item", "which product"),
    "colour": ("colour", "color", "size", "variant", "option"),
    "reason": ("reason", "why", "reason for cancelling", "reason for the cancellation"),
    "shipping address": ("shipping address", "delivery address", "new address", "address"),
    "refund": ("refund", "refunded", "back", "reimbursed"),
    "fee": ("fee", "cost", "charge", "charged", "pay"),
    "total": ("total", "in total", "comes to", "in all", "price", "cost"),
    "difference": ("difference",),
    "certificate": ("certificate", "voucher", "worth"),
    "phone": ("phone", "phone number", "telephone", "number", "call"),
    "depart": ("depart", "departs", "departure", "leave", "leaves", "leaving"),
    "nights": ("nights", "how many nights", "how long", "length of stay", "length of your stay"),
    "bags": ("bags", "checked bags", "luggage", "baggage", "suitcases"),
}
#: question words of a kind of slot
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "people": (*_PEOPLE, "how many", "for how many"),
    "date": ("date", "day", "when", "what day", "which day", "which date", "check-in"),
    "time": ("time", "what time", "at what time", "which time"),
}
#: nouns that name an identifier: after a code slot's entity noun they name that slot ("order
#: code", "train no"), and before "of the <entity>" they make the entity the head
ID_HEADS = ("number", "code", "id", "ref", "reference", "no", "#", "locator")
#: generic question words: they count only when no more specific word is named
WEAK = frozenset(
    {"how many", "for how many", "when", "how long", "name", "number", "why", "pay", "paying"}
)
#: nouns a question can ask about that no slot may hold ("the name on the reservation")
ATTRIBUTES = ("name", "address", "email", "phone", "date", "time", "price", "status", "number")
_MODIFIER = re.compile(
    r"\b(?:on|of|for|in|under|with|from|to|at|about)\s+"
    r"(?:the |your |this |that |my |our |their |its |a |an )?$"
)
_ID_HEAD = re.compile(
    r"\b(?:{})\s+(?:of|for|on)\s+(?:the |your |this |that |my |our |a |an )?$".format(
        "|".join(re.escape(h) for h in ID_HEADS)
    )
)
_HEAD = re.compile(
    r"\b({})\s+(?:on|of|for|in|under|with|from|to|at|about)\s+"
    r"(?:the |your |this |that |my |our |their |its |a |an )?$".format("|".join(ATTRIBUTES))
)


def kind(slot: Slot) -> str:
    """What sort of value a slot holds, found by what its pattern reads."""
    if slot.label.startswith("number of") and slot.find("2 people"):
        return "people"
    if slot.label.startswith("number of"):
        return "count"
    if slot.find("2026-12-31") == ["2026-12-31"]:
        return "date"
    if slot.find("19:30") == ["19:30"] and not slot.find("$19.30"):
        return "time"
    if slot.find("$12.50") == ["12.50"]:
        return "money"
    if slot.pattern and not slot.values:
        return "code"
    return "text"


@dataclass(frozen=True)
class Mention:
    slots: tuple[str, ...]
    start: int
    end: int
    phrase: str
    modifier: bool


class Lexicon:
    """A domain's slot words, compiled once."""

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self.kinds = {name: kind(slot) for name, slot in domain.slots.items()}
        phrases: dict[str, list[str]] = {}
        for name, slot in domain.slots.items():
            for phrase in self.words(slot):
                phrases.setdefault(phrase, [])
                if name not in phrases[phrase]:
                    phrases[phrase].append(name)
        self.phrases = {p: tuple(s) for p, s in phrases.items()}
        # "length of stay" is also "length of the stay": a determiner may follow "of"
        alternatives = "|".join(
            re.escape(p).replace(r"\ of\ ", r" of (?:the |your |a )?")
            for p in sorted(phrases, key=len, reverse=True)
        )
        self._find = re.compile(rf"(?<![\w'])(?:{alternatives})(?!\w)") if phrases else None
        #: each slot's reader compiled once: :meth:`Slot.find` as one pass (its pattern, and
        #: its listed values longest first, so "basic economy" hides "economy")
        self._finders = []
        for name, slot in domain.slots.items():
            listed = None
            if slot.values:
                by_low = {v.lower(): v for v in slot.values}
                alts = "|".join(re.escape(v) for v in sorted(by_low, key=len, reverse=True))
                listed = (re.compile(rf"(?<![\w-])(?:{alts})(?![\w-])"), by_low)
            pattern = re.compile(slot.pattern) if slot.pattern else None
            self._finders.append((name, pattern, listed))
        self._bags = {name: _bag(self.words(slot)) for name, slot in domain.slots.items()}
        stems = {t for bag in self._bags.values() for t in bag}
        self._idf = {
            t: math.log((1 + len(self._bags)) / sum(t in b for b in self._bags.values()))
            for t in stems
        }
        patterns = [s.pattern for s in domain.slots.values() if s.pattern]
        #: slots whose values no other slot reads: a value of theirs says which slot it is
        self.unique = {
            name
            for name, slot in domain.slots.items()
            if slot.pattern and patterns.count(slot.pattern) == 1
        }

    def words(self, slot: Slot) -> list[str]:
        own = [w.lower() for w in (*slot.words, slot.label, slot.name.replace("_", " "))]
        out = list(dict.fromkeys(own))
        text = " | ".join(own)
        for key, more in SYNONYMS.items():
            if re.search(rf"(?<!\w){re.escape(key)}s?(?!\w)", text):
                out += more
        out += KIND_WORDS.get(kind(slot), ())
        if kind(slot) == "code":  # "order code", "booking no": an entity noun and an id noun
            entities = {
                w.split()[0]
                for w in out
                if len(w.split()) == 2 and w.split()[1] in ID_HEADS and w.split()[0] not in ID_HEADS
            }
            out += [f"{e} {h}" for e in sorted(entities) for h in ID_HEADS]
        return list(dict.fromkeys(out))

    def mentions(self, sentence: str) -> list[Mention]:
        """The slot phrases ``sentence`` names, in order, each marked when it modifies a noun
        before it ("on the reservation")."""
        if self._find is None:
            return []
        low = sentence.lower()
        out = []
        for m in self._find.finditer(low):
            before = low[: m.start()]
            prep = _MODIFIER.search(before)
            modifier = prep is not None and not _ID_HEAD.search(before)
            if prep is not None and modifier:
                # "the name of the hotel" is the "hotel name": the compound names the slot
                head = before[: prep.start()].split()[-1:]
                slots = self.phrases.get(m.group(0), ())
                modifier = not head or not (
                    f"{m.group(0)} {head[0]}" in self.phrases  # "the name of the hotel"
                    or set(self.phrases.get(head[0], ())) & set(slots)  # "name of the passenger"
                )
            phrase = m.group(0)
            if phrase not in self.phrases:
                phrase = _DETERMINER.sub(" of ", phrase)
            out.append(Mention(self.phrases[phrase], m.start(), m.end(), phrase, modifier))
        return out

    def asked(self, sentence: str) -> tuple[list[str], bool]:
        """The slots a request in ``sentence`` asks for (heads of their noun phrases, the
        specific before the generic), and whether it asks about something no slot holds."""
        found = self.mentions(sentence)
        heads = [m for m in found if not m.modifier]
        if found and not heads:
            low = sentence.lower()
            if any(_HEAD.search(low[: m.start]) for m in found):
                return [], True  # "the name on the reservation": no slot is a name here
            heads = found
        strong = [m for m in heads if m.phrase not in WEAK]
        chosen = strong or heads
        out: list[str] = []
        for m in chosen:
            for slot in m.slots:
                if slot not in out:
                    out.append(slot)
        return out, False

    def guess(self, sentence: str) -> tuple[str, ...]:
        """The slots a request in words outside the lexicon most likely asks for, best first
        (empty when nothing points anywhere): the fallback when :meth:`asked` names none.

        Each slot is a bag of word stems from its own words and synonyms, weighted by how few
        slots share them (IDF), so "the duration of the stay" is the slot that says "length of
        stay", "the number of seats" the one that says "how many seats", and "the name of the
        place" every slot named "... name" (the user answers the one its goal holds). A closed
        compound is read by its head ("headcount" ~ "... count"). A word right after a subject
        pronoun is a verb ("what did you order?"), not a noun naming a slot. Ties are all
        returned; a score under one generic word's weight is no guess."""
        scores: dict[str, float] = {}
        for stem in self._stems(sentence):
            for name, bag in self._bags.items():
                if stem in bag:
                    scores[name] = scores.get(name, 0.0) + self._idf[stem]
        if not scores:
            return ()
        best = max(scores.values())
        if best < _MIN_GUESS:
            return ()
        return tuple(n for n, v in scores.items() if v >= best - 1e-9)

    def _stems(self, sentence: str) -> set[str]:
        out: set[str] = set()
        words = _TOKEN.findall(sentence.lower())
        for i, word in enumerate(words):
            if word in _STOP or (i and words[i - 1] in _SUBJECTS):
                continue
            stem = _stem(word)
            if stem not in self._idf and len(word) >= 7:  # a closed compound: its head
                heads = [t for t in self._idf if len(t) >= 4 and stem.endswith(t)]
                stem = max(heads, key=len) if heads else stem
            if stem in self._idf:
                out.add(stem)
        return out

    def names(self, slot: str, sentence: str) -> bool:
        """Whether ``sentence`` names ``slot`` (its answers count only where it is named,
        unless its values are its own)."""
        return any(slot in m.slots for m in self.mentions(sentence))

    def slot_values(self, text: str) -> dict[str, list[str]]:
        """Every slot value in ``text``, in any usual format, by slot (values in the slots'
        own forms; a date without a year as "--MM-DD", a code's ending as "…D7")."""
        canon = V.canonical(text)
        low = canon.lower()
        out: dict[str, list[str]] = {}
        for name, pattern, listed in self._finders:
            found = []
            if pattern is not None:
                found = [m.group(1) if m.groups() else m.group(0) for m in pattern.finditer(canon)]
            if listed is not None:
                found += list(dict.fromkeys(listed[1][m.group(0)] for m in listed[0].finditer(low)))
            if self.kinds[name] == "date":
                found += [m.group(0) for m in _YEARLESS.finditer(canon)]
            if found:
                out[name] = found
        for m in V.ENDING.finditer(canon):
            slot = self._owner(canon[: m.start()])
            if slot is not None:
                out.setdefault(slot, []).append(V.PARTIAL + m.group(1))
        return out

    def _owner(self, before: str) -> str | None:
        """The code slot named last before "ending in ..." ("the card ending in 8777")."""
        found = [s for m in self.mentions(before[-60:]) for s in m.slots if self.kinds[s] == "code"]
        return found[-1] if found else None


_DETERMINER = re.compile(r" of (?:the |your |a )")
_TOKEN = re.compile(r"[a-z][a-z-]*")
#: function words and the words of asking: they name no slot
_STOP_WORDS = (
    "a an the of for in on at to from with by about your my our their its this that these those "
    "what which when where who whose why how many much is are was were be been do does did will "
    "would could can may might shall should please kindly you i we me us it and or any some "
    "need like want tell give let know send share provide yes no ok okay good right correct "
    "fine alright sure type enter state spell supply specify go ahead require continue over"
)
_STOP = frozenset(_STOP_WORDS.split())
_SUBJECTS = frozenset({"you", "i", "we", "they"})
#: the least a guess must score: above one word every slot shares
_MIN_GUESS = 0.5


def _stem(word: str) -> str:
    """A crude English stem, enough to meet a slot's word in another inflection ("seats" ~
    "seat", "travelling" ~ "travellers")."""
    word = word.removesuffix("'s")
    for suffix in ("ers", "ing", "ies", "ed", "er", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _bag(phrases: list[str]) -> set[str]:
    return {_stem(w) for p in phrases for w in _TOKEN.findall(p) if w not in _STOP}


_YEARLESS = re.compile(r"(?<![\w-])--\d\d-\d\d\b")


def of(domain: Domain) -> Lexicon:
    """The domain's lexicon, built once per domain object."""
    cached = domain.__dict__.get("_lexicon")
    if cached is None:
        cached = Lexicon(domain)
        domain.__dict__["_lexicon"] = cached
    return cached
