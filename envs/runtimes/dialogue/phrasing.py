"""The phrase banks and value formats reworded assistants draw from (every dialogue family's).

An agent's score must measure its decisions, not how closely its wording matches a simulated
user's reader; a reworded assistant makes a scripted assistant's moves and words them in one of
:data:`STYLES`, drawing from one of :data:`BANKS`: ``seen`` and ``heldout`` were written apart,
and the reader's lexicon (:mod:`palaestra.envs.runtimes.simuser.lexicon`) from neither, so the
held-out bank's read rate says how a reader does on words nobody tuned it for. The banks hold
how slots are named and asked for (:data:`NAMES`, :data:`QUESTIONS`), request and consent frames
(:data:`ASK`, :data:`CONFIRM`, :data:`OFFER`), refusals, reports and closings; :func:`reformat`
writes counts, dates, times and money in other usual formats.
"""

from __future__ import annotations

import calendar
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

STYLES = (
    "polite",
    "combined",
    "reports",
    "confirmations",
    "terse",
    "instructions",
    "formats",
    "mixed",
)
BANKS = ("seen", "heldout", "fresh")

#: the banks themselves are data (phrasing.json beside this module): per bank, how each slot is
#: named (NAMES) and asked for (QUESTIONS), request/consent frames per style (ASK, CONFIRM,
#: OFFER), refusals, closings and report rewrites (REPORT: pattern and replacements, where "\1"
#: etc. are the pattern's groups); lists are read back as tuples so the banks stay immutable.
_BANKS_DATA = json.loads(Path(__file__).with_name("phrasing.json").read_text(encoding="utf-8"))


def _frozen(value: Any) -> Any:
    """A JSON value with every list turned into a tuple (the shape the tables were written in)."""
    if isinstance(value, dict):
        return {key: _frozen(item) for key, item in value.items()}
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    return value


NAMES: dict[str, dict[str, tuple[str, ...]]] = _frozen(_BANKS_DATA["names"])
QUESTIONS: dict[str, dict[str, tuple[str, ...]]] = _frozen(_BANKS_DATA["questions"])
ASK: dict[str, dict[str, tuple[str, ...]]] = _frozen(_BANKS_DATA["ask"])
CONFIRM: dict[str, dict[str, tuple[str, ...]]] = _frozen(_BANKS_DATA["confirm"])
OFFER: dict[str, dict[str, tuple[str, ...]]] = _frozen(_BANKS_DATA["offer"])
REFUSE: dict[str, tuple[str, ...]] = _frozen(_BANKS_DATA["refuse"])
TERSE_REFUSE: dict[str, tuple[str, ...]] = _frozen(_BANKS_DATA["terse_refuse"])
REPORT: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = _frozen(_BANKS_DATA["report"])
CLOSE: dict[str, tuple[str, ...]] = _frozen(_BANKS_DATA["close"])
TERSE_CLOSE: dict[str, tuple[str, ...]] = _frozen(_BANKS_DATA["terse_close"])

_NUM = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
]
_MONTHS = list(calendar.month_name)[1:]


def cap(text: str) -> str:
    """``text`` with its first letter capitalized (the rest as it is)."""
    return text[:1].upper() + text[1:]


# ----- value formats ------------------------------------------------------------------------
def _count(m: re.Match[str], r: random.Random) -> str:
    n, noun = int(m.group(1)), m.group(2)
    word = _NUM[n] if n < len(_NUM) else str(n)
    forms = [f"{word} {noun}"]
    if noun in ("people", "guests", "passengers"):
        forms += [f"a party of {n}", f"{word} {noun}"]
    return r.choice(forms)


def _date(m: re.Match[str], r: random.Random) -> str:
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    suffix = "th" if 10 <= d % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")
    month = _MONTHS[mo - 1]
    return r.choice(
        [f"{month} {d}", f"{month[:3]} {d}{suffix}", f"{d} {month} {y}", f"{mo:02d}/{d:02d}/{y}"]
    )


def _time(m: re.Match[str], r: random.Random) -> str:
    h, mi = int(m.group(1)), m.group(2)
    h12 = h % 12 or 12
    half = "PM" if h >= 12 else "AM"
    return r.choice([f"{h12}:{mi} {half}", f"{h12:02d}:{mi} {half}", f"{h12}:{mi}{half.lower()}"])


def _money(m: re.Match[str], r: random.Random) -> str:
    amount = m.group(1)
    whole = amount.removesuffix(".00")
    return r.choice([f"${whole}", f"{amount} dollars", f"USD {amount}", f"${amount} USD"])


FORMATS: list[tuple[str, Callable[[re.Match[str], random.Random], str]]] = [
    (r"\b(\d{1,2}) (people|passengers|guests|nights|checked bags|seats)\b", _count),
    (r"\b(20\d\d)-(\d\d)-(\d\d)\b", _date),
    (r"(?<![\d:])([01]\d|2[0-3]):([0-5]\d)\b", _time),
    (r"\$(\d[\d,]*\.\d\d)\b", _money),
]


def _drawn(
    fn: Callable[[re.Match[str], random.Random], str], r: random.Random
) -> Callable[[re.Match[str]], str]:
    """``fn`` with its choices drawn from ``r``: a replacement for :func:`re.sub`."""
    return lambda m: fn(m, r)


def reformat(text: str, r: random.Random) -> str:
    """``text`` with its counts, dates, times and sums of money in other usual formats."""
    for pattern, fn in FORMATS:
        text = re.sub(pattern, _drawn(fn, r), text)
    return text
