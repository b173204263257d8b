"""Values as people write them, rewritten into the one form the domain's slots read.

An assistant may write "three people", "a party of 4", "8:30 PM", "Dec 31st", "968 dollars" or
"the card ending in 8777"; a domain's slot patterns read "3 people", "20:30", "2026-12-31",
"$968.00" and full codes. :func:`canonical` rewrites a sentence into those forms with maintained
parsers (``word2number`` for numbers in words, ``python-dateutil`` for dates and times,
``price-parser`` for sums of money), so every slot pattern keeps working unchanged and a value
in any format is checked against the user's true one. A date without a year becomes the ISO
8601 "--MM-DD" and a partial code "…D7": :func:`same_value` compares those with a full value by
what they say (month and day, the last characters), never by guessing the rest.

A correct "07:30 PM" becomes "19:30": the 12-hour clock is read before the slot patterns run,
so the "07:30" inside it is never taken for a morning time.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any

from dateutil import parser as dateparser
from price_parser import Price
from word2number import w2n

_UNITS = [
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
    *("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen"),
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_NUMBER_WORD = r"(?:(?:{})(?:[- ](?:{}))?|{})".format(
    "|".join(_TENS),
    "|".join(_UNITS[1:10]),
    "|".join(_UNITS),
)
#: things people count; a number in words before one of them becomes digits
_COUNTED = (
    r"(?:people|persons?|passengers?|guests?|travell?ers?|adults?|diners?|tickets?|seats?|"
    r"nights?|(?:checked )?bags?|suitcases?|stars?|rooms?|items?)"
)
#: nouns for a number of people: all become "people", which every head-count slot reads
_PEOPLE = r"(?:persons?|guests?|travell?ers?|adults?|diners?|tickets?|seats?)"

_MONTHS = {
    m.lower(): i
    for i, names in enumerate(
        [
            ("January", "Jan"),
            ("February", "Feb"),
            ("March", "Mar"),
            ("April", "Apr"),
            ("May",),
            ("June", "Jun"),
            ("July", "Jul"),
            ("August", "Aug"),
            ("September", "Sep", "Sept"),
            ("October", "Oct"),
            ("November", "Nov"),
            ("December", "Dec"),
        ],
        start=1,
    )
    for m in names
}
_MONTH = r"(?:{})\.?".format("|".join(sorted(_MONTHS, key=len, reverse=True)))
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_WEEKDAY = r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,? )?"
_DATES = [
    # "December 31", "Dec 31st, 2026", "Thursday, December 31"
    rf"\b{_WEEKDAY}{_MONTH} {_DAY}(?:,? (?:20\d\d))?\b",
    # "31 December 2026", "the 31st of December"
    rf"\b{_WEEKDAY}(?:the )?{_DAY} (?:of )?{_MONTH}(?:,? (?:20\d\d))?\b",
    # "12/31/2026" (US order, as the assistant of an English-speaking service writes it)
    r"\b(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/20\d\d\b",
]
_DATE = re.compile("|".join(f"(?:{d})" for d in _DATES), re.IGNORECASE)
_TIME12 = re.compile(
    r"\b((?:0?[1-9]|1[0-2])(?:[:.][0-5]\d)?)\s*([ap])\.?\s?m\.?(?![a-z])", re.IGNORECASE
)
_TIME_WORDS = re.compile(r"\b(noon|midday|midnight)\b", re.IGNORECASE)
_MONEY = re.compile(
    r"(?:\$\s?\d[\d,]*(?:\.\d+)?(?:\s?USD)?|\bUSD\s?\d[\d,]*(?:\.\d+)?|"
    r"\b\d[\d,]*(?:\.\d+)?\s?(?:dollars|USD|bucks)\b)",
    re.IGNORECASE,
)
_NUMBER_COUNT = re.compile(rf"\b({_NUMBER_WORD})([- ]){_COUNTED}\b", re.IGNORECASE)
_PEOPLE_COUNT = re.compile(rf"\b(\d{{1,3}}) {_PEOPLE}\b", re.IGNORECASE)
_PARTY = re.compile(
    rf"\b(?:a )?(?:party|group|table) (?:of|for) (\d{{1,3}}|{_NUMBER_WORD})\b"
    r"(?! (?:people|persons?|guests?))",
    re.IGNORECASE,
)
#: "ending in D7": the last characters of a code, read as a partial value of the code slot
ENDING = re.compile(r"\bending (?:in|with) ([A-Z0-9]{2,8})\b", re.IGNORECASE)
PARTIAL = "…"
YEARLESS = "--"


def number(text: str) -> int | None:
    """A number written in digits or words ("4", "four", "twenty-one")."""
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    try:
        return int(w2n.word_to_num(text.replace("-", " ")))
    except ValueError:
        return None


def _number_count(m: re.Match[str]) -> str:
    n = number(m.group(1))
    return m.group(0) if n is None else f"{n}{m.group(2)}{m.group(0)[len(m.group(1)) + 1 :]}"


def _party(m: re.Match[str]) -> str:
    n = number(m.group(1))
    return m.group(0) if n is None else f"{n} people"


def _date(m: re.Match[str]) -> str:
    text = m.group(0)
    try:
        when = dateparser.parse(text, default=dt.datetime(1, 1, 1), fuzzy=True)
    except (ValueError, OverflowError):
        return text
    if re.search(r"20\d\d", text):
        return when.strftime("%Y-%m-%d")
    return f"{YEARLESS}{when.month:02d}-{when.day:02d}"


def _time12(m: re.Match[str]) -> str:
    clock = m.group(1).replace(".", ":")
    if ":" not in clock:
        clock += ":00"
    try:
        when = dateparser.parse(f"{clock} {m.group(2)}m", default=dt.datetime(2000, 1, 1))
    except (ValueError, OverflowError):
        return m.group(0)
    return when.strftime("%H:%M")


def _time_word(m: re.Match[str]) -> str:
    return "00:00" if m.group(1).lower() == "midnight" else "12:00"


def _money(m: re.Match[str]) -> str:
    price = Price.fromstring(m.group(0).replace("bucks", "dollars"))
    if price.amount is None:
        return m.group(0)
    return f"${price.amount:,.2f}"


@functools.lru_cache(maxsize=4096)
def canonical(text: str) -> str:
    """``text`` with counts, dates, times and money in the forms the slot patterns read.

    Idempotent: a text already in those forms comes back unchanged."""
    text = _NUMBER_COUNT.sub(_number_count, text)
    text = _PARTY.sub(_party, text)
    text = _PEOPLE_COUNT.sub(lambda m: f"{m.group(1)} people", text)
    text = _DATE.sub(_date, text)
    text = _TIME12.sub(_time12, text)
    text = _TIME_WORDS.sub(_time_word, text)
    return _MONEY.sub(_money, text)


def same_value(a: Any, b: Any) -> bool:
    """Values as people say them: case, spacing, "$" and a trailing '.00' do not matter; a
    year-less date matches its month and day, a partial code ("…D7") its last characters."""
    x, y = _norm(a), _norm(b)
    if x == y:
        return True
    for part, full in ((x, y), (y, x)):
        if part.startswith(YEARLESS) and not full.startswith(YEARLESS):
            return full.endswith(part[len(YEARLESS) - 1 :])
        if part.startswith(PARTIAL) and not full.startswith(PARTIAL):
            return full.endswith(part[len(PARTIAL) :])
    return False


def _norm(value: Any) -> str:
    text = str(value).strip().lower().replace(",", "")
    text = re.sub(r"^\$|\s+", "", text)
    return re.sub(r"\.0+$", "", text)
