"""What a refusal must name: each rule a domain refuses by, in the words people use for it.

A request the rules forbid is settled by saying so, and a refusal counts only if it names the
rule that blocks this request (or the value that does: 4 seats left, a party of 11 over the
limit of 8, the booking's day): a fixed "sorry, I can't" names nothing. The rules are read off
the reason the domain's own rule code gives (the text after the reference plan's refusal), so
a draft carries no hand-written copy of them, and a reason no rule here matches is an error at
generation, never a refusal that anything passes.

Each rule is a list of groups: a refusal must say one phrase of every group (matched by
:func:`palaestra.verifiers.usersim.names` on normalized words, numbers by value: "#4" is the
number four however it is written). A refusal that also restates other rules of the policy is
keyword stuffing, not a reason: :func:`policy_rules` gives the verifier each written rule's
words to count them with.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Groups = list[list[str]]

_SEATS = ["seat", "space", "place", "room", "table", "availab", "left", "remain", "free"]
_SEATS += ["capacity", "people", "guests", "passengers", "more", "full", "sold out"]
_GONE = ["out of stock", "sold out", "unavailable", "not available", "isn't available"]
_GONE += ["not in stock", "no stock", "none left", "no longer available", "no longer in stock"]
_GONE += ["not stocked", "none in stock", "zero in stock", "0 in stock", "run out", "ran out"]


@dataclass(frozen=True)
class Rule:
    """One rule: ``pattern`` finds it in a reason text, ``groups`` builds what a refusal must
    say from the match (and the domain's today)."""

    name: str
    pattern: str
    groups: Callable[[re.Match[str], str | None], Groups]

    def __call__(self, match: re.Match[str], today: str | None) -> Groups:
        return self.groups(match, today)


def _fixed(words: Groups) -> Callable[[re.Match[str], str | None], Groups]:
    return lambda match, today: words


def _number(n: int, *words: str) -> list[str]:
    """A number said as a number, or (zero) as its usual phrases."""
    zero = ["no seat", "no more seat", "no space", "fully booked", "full", "sold out", "none"]
    return [f"#{n}", *(zero if n == 0 else []), *words]


def day_phrases(day: str, today: str | None = None) -> list[str]:
    """A date in any writing (``"@ISO"``: "2026-12-01", "12/01/2026", "December 1st"), and
    "today" (or "same day") when it is the world's today."""
    out = [f"@{day}"]
    if today is not None and day == today:
        out += ["today", "same day", "that day", "the day of"]
    return out


RULES: tuple[Rule, ...] = (
    Rule(
        "cancel_window",
        r"booked more than 24 hours ago",
        _fixed(
            [["24 hour", "twenty four hour", "a day ago", "within a day", "yesterday", "insur"]]
        ),
    ),
    Rule(
        "certificate_eligibility",
        r"certificates are only for",
        _fixed([["gold", "business"]]),
    ),
    Rule("basic_economy", r"basic economy", _fixed([["basic economy"]])),
    Rule(
        "departed",
        r"already departed",
        _fixed(
            [
                [
                    "depart",
                    "already left",
                    "has left",
                    "left already",
                    "took off",
                    "flown",
                    "in the past",
                ]
            ]
        ),
    ),
    Rule(
        "seats_left",
        r"only (\d+) seat\(s\)",
        lambda m, today: [_number(int(m.group(1))), _SEATS],
    ),
    Rule(
        "party_limit",
        r"at most (\d+) (?:people|guests)",
        lambda m, today: [_number(int(m.group(1)))],
    ),
    Rule(
        "cancel_before_day",
        r"cancelled before their (?:check-in )?day, which is (\d{4}-\d\d-\d\d)",
        lambda m, today: [day_phrases(m.group(1), today)],
    ),
    Rule(
        "already_cancelled",
        r"(?:already|has been) cancelled",
        _fixed(
            [
                ["cancel"],
                ["already", "previously", "earlier", "no longer", "been cancel", "was cancel"],
            ]
        ),
    ),
    Rule(
        "out_of_stock",
        r"the (\w+) variant \(item (\d+)\) is out of stock",
        lambda m, today: [_GONE, [m.group(1), m.group(2)]],
    ),
    Rule(
        "return_pending",
        r"a return or exchange was already requested",
        _fixed(
            [["return", "exchange"], ["already", "pending", "requested", "in progress", "open"]]
        ),
    ),
    Rule("delivered", r"already been delivered", _fixed([["deliver"]])),
    Rule(
        "train_full",
        r"not enough seats left",
        _fixed([_SEATS]),
    ),
)


#: each rule's claim, in the fewest words that make it: a refusal that makes the claim of a rule
#: that does not block the request names a candidate rule that does not apply, and fails (an
#: agent that lists the intent's candidate rules is guessing, not refusing). The words are the
#: rule's claim, not its topic ("already departed", not "depart": a flight's departure may be
#: named in any refusal), and a word another domain uses for something else is left out
#: ("sold out" is a full train as well as an empty shelf)
WORDS: dict[str, Groups] = {
    "cancel_window": [["24 hour", "twenty four hour", "insur"]],
    "certificate_eligibility": [["certificate"]],
    "basic_economy": [["basic economy"]],
    "departed": [["already departed", "has departed", "already left", "has left", "took off"]],
    "seats_left": [["seat", "space", "place"], ["left", "remain"]],
    "party_limit": [["at most", "up to", "maximum", "limit"], ["people", "guests", "party"]],
    "cancel_before_day": [["before"], ["check in day", "day of", "same day", "arrival day"]],
    "already_cancelled": [["already cancel", "been cancel", "was cancel", "previously cancel"]],
    "out_of_stock": [["out of stock", "not in stock", "no stock"]],
    "return_pending": [["return", "exchange"], ["requested", "pending"]],
    "delivered": [["been delivered", "already delivered", "was delivered"]],
    "train_full": [["not enough"], ["seat"]],
}
#: rules that make one claim in two domains' words (a full train, the seats left): naming the
#: kin of the blocking rule is naming it
KIN: dict[str, set[str]] = {"seats_left": {"train_full"}, "train_full": {"seats_left"}}


def reason(text: str, today: str | None = None) -> dict[str, Any]:
    """What a refusal of ``text`` (the reference plan's, its reason after the last colon)
    must name: ``{"rule": name, "reason": [groups], "others": [other rules' WORDS]}``."""
    why = text.rsplit(": ", 1)[-1]
    for rule in RULES:
        found = re.search(rule.pattern, why, re.IGNORECASE)
        if found:
            kin = {rule.name, *KIN.get(rule.name, ())}
            others = [words for name, words in WORDS.items() if name not in kin]
            return {"rule": rule.name, "reason": rule(found, today), "others": others}
    raise ValueError(f"no refusal rule matches the reason {why!r}: add it to reasons.RULES")


_COMMON = {
    *("that", "this", "with", "from", "their", "they", "them", "than", "then", "when", "what"),
    *("will", "your", "only", "have", "been", "into", "before", "after", "every", "never"),
    *("also", "other", "user", "user's", "tell"),
}


def policy_rules(policy: str) -> list[list[str]]:
    """Each written rule of a domain's policy (its "- " bullets) as its content words: a
    message that says most of the words of several rules restates the policy."""
    bullets = re.split(r"\n- ", policy.split("\n", 1)[-1].lstrip("- "))
    out = []
    for bullet in bullets:
        words = [w for w in re.findall(r"[a-z']{4,}", bullet.lower()) if w not in _COMMON]
        out.append(list(dict.fromkeys(words)))
    return out
