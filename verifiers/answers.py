"""One reading of answers for every family: a value in any format, exactly one, and no rival.

An answer is judged on the values it names, never on its wording. :func:`scan` reads every
value a text names, by kind, in the forms people write them (``$1,000.00`` is 1000, ``2:05 PM``
is 14:05, ``December 5, 2026`` is 2026-12-05, ``+44 1223 238596`` is ``01223 238596``, ``60.0``
is 60), after taking out what names a thing rather than being a value (``ORD-12345``,
``4455-9021``, ``27-inch 4K Monitor``, ``order 17``). :func:`answer_problem` then asks:

- is the expected value among the values of its kind the answer names (format aside)?
- is it the ONLY one? Another value of the same kind (``14:05 or 17:45``) fails, unless the
  question itself named it; so does another candidate of a text answer (any value of the
  expected's column, anywhere in the app, or of its shape: every email for an email).
- does the answer stay one fact, not a record? Naming more than :data:`MAX_OTHER_FACTS` other
  facts of the app (its dates, amounts, names of people, products, places) is a dump.

The app's values (:class:`AppValues`, read from its database) make "anywhere in the app" real:
a hedge with a value from another column or another record fails as one from the same column.
The web and phone ``answer`` check, usersim's ``usersim_told`` and tau2's stricter
``COMMUNICATE`` term all read values through this module, so a format one accepts they all do.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date

#: the kinds of value an answer can be; ``text`` is anything else (a status, a place, a name)
KINDS = ("number", "time", "date", "phone", "email", "text")
#: an answer is one value in a sentence at most: longer is a dump, whatever it contains
MAX_ANSWER_CHARS = 160
#: other facts of the app an answer may name beside its value ("order ORD-1 of December 5")
MAX_OTHER_FACTS = 2
#: the year a date written without one is read in, when the expected value gives none
DEFAULT_YEAR = 2026

#: the months' first three letters, in order (shared with the dialogue checks)
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MONTH_NAMES = ["january", "february", "march", "april", "may", "june", "july", "august"]
_MONTH_NAMES += ["september", "october", "november", "december", "sept"]
#: a month's name or its abbreviation, a whole word ("maybe" is no May)
_MON = rf"({'|'.join(_MONTH_NAMES + MONTHS)})\b\.?"
#: a day of the month, "1", "21st"
DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DATES = (
    (re.compile(r"(?<![\d-])(\d{4})([-/.])(\d\d?)\2(\d\d?)(?![\d-])"), "ymd"),
    (re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d.])"), "dot"),
    (re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{2,4})(?![\d/])"), "slash"),
    (re.compile(rf"\b{DAY}\s+(?:of\s+)?{_MON}(?:,?\s+(\d{{4}}))?\b"), "dmy"),
    (re.compile(rf"\b{_MON}\s+{DAY}\b(?:,?\s+(\d{{4}}))?"), "mdy"),
)
_CLOCK = re.compile(r"(?<![\d$.,:])(\d{1,2})[:h](\d\d)(?::\d\d)?(?:\s*([ap])\.?\s?m\b\.?)?(?!\d)")
#: an hour with am/pm: "7 pm", "7.30pm" (group 1 the hour, 2 the minutes, 3 a or p)
HOUR = re.compile(r"(?<![\d$.,:])(\d{1,2})(?:\.(\d\d))?\s*([ap])\.?\s?m\b\.?")
_NOON = re.compile(r"\b(noon|midday|midnight)\b")
_PHONE_START = r"(?<![\w+])(?:\+\d{1,3}[\s.-]?|00\d{1,3}[\s.-]?|0)\(?\d{1,5}\)?"
_PHONE = re.compile(_PHONE_START + r"(?:[\s.-]?\d{2,6}){1,3}(?!\d)")
#: the shortest phone numbers in a run of digit groups ("01223 456789 01223 111111" is two)
_PHONE_SHORT = re.compile(_PHONE_START + r"(?:[\s.-]?\d{2,6}){1,3}?(?!\d)")
#: a word with letters and digits, or digit groups joined by - or / (``ORD-12345``, ``4K``,
#: ``4455-9021``): a name, never a value
_TOKEN = re.compile(r"(?<![\w-])[A-Za-z0-9]+(?:[-/][A-Za-z0-9]+)*")
#: a number right after one of these words names a record (``order 17``, ``#4``)
_ID_WORD = re.compile(
    r"\b(?:order|booking|account|transaction|invoice|ticket|ref|reference|id|no\.|room|seat|"
    r"train|flight|platform)\s*#?\s*(\d+)\b|#\s?(\d+)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<![\w.])(-\s?)?[$€£]?\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:,\d{1,2}(?!\d))?)"
    r"(?![\w])"
)
_WORDS = [
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen", "twenty"),
]
#: counts written as words ("two" to "twenty"; "one" is prose as often as a count)
_NUMBER_WORD = re.compile(rf"\b({'|'.join(_WORDS[2:])})\b", re.IGNORECASE)


# ----- values in text ---------------------------------------------------------------------
@dataclass
class Scan:
    """The values a text names, each kind as canonical keys: numbers as floats rounded to 2
    places, times ``HH:MM``, dates ISO (a ``12/05/2026`` is both readings: one value, two
    keys), phones their national digits, emails lower case. ``rest`` is the text with all of
    them and every name token blanked out."""

    values: dict[str, list[frozenset[str]]] = field(default_factory=dict)
    rest: str = ""

    def keys(self, kind: str) -> list[frozenset[str]]:
        return self.values.get(kind, [])


def _blank(text: str, span: tuple[int, int]) -> str:
    return text[: span[0]] + " " * (span[1] - span[0]) + text[span[1] :]


def real_date(y: int, m: int, d: int) -> bool:
    """Whether year, month and day make a day of the calendar (no 31 April)."""
    try:
        date(y, m, d)
    except ValueError:
        return False
    return True


def _date_keys(groups: tuple[str | None, ...], form: str, year: int) -> frozenset[str]:
    g = groups
    if form == "ymd":  # 2026-12-05, 2026/12/05 (the separator is group 2)
        cands = [(int(g[0] or 0), int(g[2] or 0), int(g[3] or 0))]
    elif form == "dot":  # 05.12.2026: day first, as where dots are written
        cands = [(int(g[2] or 0), int(g[1] or 0), int(g[0] or 0))]
    elif form == "slash":
        y = int(g[2] or year)
        y += 2000 if y < 100 else 0
        cands = [(y, int(g[0] or 0), int(g[1] or 0)), (y, int(g[1] or 0), int(g[0] or 0))]
    else:
        day, mon, said = (g[0], g[1], g[2]) if form == "dmy" else (g[1], g[0], g[2])
        month = MONTHS.index(str(mon)[:3]) + 1
        cands = [(int(said) if said else year, month, int(day or 0))]
    return frozenset(f"{y:04d}-{m:02d}-{d:02d}" for y, m, d in cands if real_date(y, m, d))


def phone_key(text: str) -> str:
    """A phone number as its national digits: ``+44 1223 238596``, ``0044 1223 238596`` and
    ``01223 238596`` are all ``1223238596`` (the country code and the trunk 0 go)."""
    digits = re.sub(r"\D", "", text)
    if text.lstrip().startswith("+") or digits.startswith("00"):
        digits = digits.lstrip("0")
        # the country code is what the national number does not need: 1-3 digits, leaving 9-10
        for cc in (1, 2, 3):
            if len(digits) - cc in (9, 10) and not digits[cc:].startswith("0"):
                return digits[cc:]
        return digits
    return digits.lstrip("0")


def _number(raw: str) -> float:
    if re.fullmatch(r"\d+,\d{1,2}", raw):  # a decimal comma: 42,50
        return float(raw.replace(",", "."))
    return float(raw.replace(",", ""))


def scan(text: str, year: int = DEFAULT_YEAR) -> Scan:
    """Every value ``text`` names, by kind (see :class:`Scan`). Kinds are read in an order
    where each takes its own characters away from the next: emails, dates, times, phone
    numbers, names (letters with digits, ``order 17``), then numbers."""
    text = unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    low = text.lower()
    out = Scan()

    def take(kind: str, keys: frozenset[str], span: tuple[int, int]) -> None:
        nonlocal low
        if keys:
            out.values.setdefault(kind, []).append(keys)
        low = _blank(low, span)

    for m in list(_EMAIL.finditer(low)):
        take("email", frozenset({m.group(0).strip(".")}), m.span())
    for pattern, form in _DATES:
        for m in list(pattern.finditer(low)):
            keys = _date_keys(m.groups(), form, year)
            if keys:  # "May 60" is no day: its number stays a number
                take("date", keys, m.span())
    for m in [*_CLOCK.finditer(low), *HOUR.finditer(low)]:
        if not low[m.start() : m.end()].strip():
            continue  # already taken by the other clock form
        hour, minute, half = int(m.group(1)), int(m.group(2) or 0), m.group(3)
        if half and 1 <= hour <= 12:
            hour = hour % 12 + (12 if half == "p" else 0)
        if hour < 24 and minute < 60:
            take("time", frozenset({f"{hour:02d}:{minute:02d}"}), m.span())
    for m in list(_NOON.finditer(low)):
        take("time", frozenset({"00:00" if m.group(1) == "midnight" else "12:00"}), m.span())
    for m in list(_PHONE.finditer(low)):
        found = [m] if 9 <= len(re.sub(r"\D", "", m.group(0))) <= 14 else []
        if not found:  # several numbers in a row: each the shortest that is a phone number
            found = [
                p
                for p in _PHONE_SHORT.finditer(low, *m.span())
                if 9 <= len(re.sub(r"\D", "", p.group(0))) <= 14
            ]
        for p in found:
            take("phone", frozenset({phone_key(p.group(0))}), p.span())
    for m in list(_TOKEN.finditer(low)):
        word = m.group(0)
        if (re.search(r"[a-z]", word) and re.search(r"\d", word)) or re.fullmatch(
            r"\d+(?:[-/]\d+)+", word
        ):
            low = _blank(low, m.span())
    for m in list(_ID_WORD.finditer(low)):
        low = _blank(low, m.span(1) if m.group(1) else m.span(2))
    for m in list(_NUMBER.finditer(low)):
        value = _number(m.group(2)) * (-1 if m.group(1) else 1)
        take("number", frozenset({f"{value:.2f}"}), m.span())
    for m in list(_NUMBER_WORD.finditer(low)):
        take("number", frozenset({f"{float(_WORDS.index(m.group(1).lower())):.2f}"}), m.span())
    out.rest = low
    return out


def kind_of(value: str, normalize: str = "text") -> str:
    """The kind of an expected value: a ``number`` or ``date`` check says so; otherwise the
    value's own form (``14:05`` a time, ``01223 238596`` a phone, ``a@b.com`` an email)."""
    value = value.strip()
    if normalize in ("number", "date"):
        return normalize
    if re.fullmatch(r"\d{1,2}:\d\d", value):
        return "time"
    if re.fullmatch(r"\d{4}-\d\d-\d\d", value):
        return "date"
    if _EMAIL.fullmatch(value.lower()):
        return "email"
    if re.fullmatch(r"(?:\+\d{1,3}\s?|0)\d[\d\s-]{7,14}\d", value):
        return "phone"
    return "text"


def key(value: str, kind: str, year: int = DEFAULT_YEAR) -> frozenset[str]:
    """The canonical key(s) of one expected value of ``kind``."""
    if kind == "text":
        return frozenset({normalize_text(value)})
    if kind == "phone":
        return frozenset({phone_key(value)})
    found = scan(value, year).keys(kind)
    if not found:
        raise ValueError(f"{value!r} is not a {kind}")
    return found[0]


def normalize_text(text: str) -> str:
    """Case, accents' forms, spacing and punctuation aside: the form text values match in."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w:@.\-]+", " ", text).replace(". ", " ").split()).strip(" .")


def mentions(said: str, value: str) -> bool:
    """``value`` occurs in ``said`` (normalized, space-padded) as whole words."""
    value = normalize_text(value)
    return value != "" and f" {value} " in said


def says(text: str, fact: str, year: int = DEFAULT_YEAR) -> bool:
    """``text`` names the value ``fact`` in any format (usersim's facts, tau2's information to
    communicate): a number by value, a time, date, phone or email by its key, else the words."""
    kind = kind_of(fact, "number" if _is_amount(fact) else "text")
    if kind == "text":
        return mentions(f" {normalize_text(text)} ", fact)
    want = key(fact, kind, year)
    return any(k & want for k in scan(text, year).keys(kind))


def _is_amount(value: str) -> bool:
    return re.fullmatch(r"[$€£]?\s?-?\d[\d,]*(?:\.\d+)?", value.strip()) is not None


# ----- the app's values -------------------------------------------------------------------
@dataclass
class AppValues:
    """Every value an app holds (its database, ids and references left out): by kind, the
    candidates an answer must not also name; ``columns``: each text column's values, so the
    candidates of a text answer are its column's; ``names``: the text values that name things
    (several words, or digits in them), which a dump of a record names."""

    keys: dict[str, set[str]] = field(default_factory=dict)
    columns: list[set[str]] = field(default_factory=list)
    names: set[str] = field(default_factory=set)

    @classmethod
    def from_db(cls, path: str, year: int = DEFAULT_YEAR) -> AppValues:
        out = cls()
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            query = "SELECT name FROM sqlite_master WHERE type='table'"
            tables = [r[0] for r in conn.execute(query)]
            for table in tables:
                cols = [
                    r[1]
                    for r in conn.execute(f'PRAGMA table_info("{table}")')
                    if r[1] != "id" and not r[1].endswith("_id")
                ]
                for col in cols:
                    cells = [r[0] for r in conn.execute(f'SELECT "{col}" FROM "{table}"')]
                    out._add(cells, year)
        finally:
            conn.close()
        return out

    @classmethod
    def from_values(
        cls, columns: Iterable[Iterable[object]], year: int = DEFAULT_YEAR
    ) -> AppValues:
        out = cls()
        for cells in columns:
            out._add(list(cells), year)
        return out

    def _add(self, cells: list[object], year: int) -> None:
        texts: set[str] = set()
        for cell in cells:
            if cell is None or isinstance(cell, bytes):
                continue
            if isinstance(cell, int | float) and not isinstance(cell, bool):
                self.keys.setdefault("number", set()).add(f"{float(cell):.2f}")
                continue
            value = str(cell).strip()
            kind = kind_of(value)
            if kind == "phone":
                self.keys.setdefault(kind, set()).add(phone_key(value))
                continue
            for found, keys in scan(value, year).values.items():
                self.keys.setdefault(found, set()).update(*keys)
            if kind != "text" or _is_amount(value):
                continue
            texts.add(normalize_text(value))
            if len(value.split()) > 1 or re.search(r"\d", value):
                self.names.add(value)
        if texts:
            self.columns.append(texts)

    def text_candidates(self, expected: str) -> set[str]:
        """The values of every column that holds ``expected``."""
        want = normalize_text(expected)
        return set().union(*[c for c in self.columns if want in c])


# ----- the answer check ---------------------------------------------------------------------
def _year(expected: str) -> int:
    m = re.search(r"\b(19|20)\d\d\b", expected)
    return int(m.group(0)) if m else DEFAULT_YEAR


def _strip_given(answer: str, app: AppValues | None, given: str) -> str:
    """The answer without the things the question named (its quoted titles, the app's names
    the question uses): repeating the question's subject is no other value."""
    if not given:
        return answer
    subjects = re.findall(r"[\"\u201c]([^\"\u201d]{2,})[\"\u201d]", given)
    if app is not None:
        low = given.casefold()
        subjects += [n for n in app.names if n.casefold() in low]
    for subject in sorted(set(subjects), key=len, reverse=True):
        answer = re.sub(re.escape(subject), " ", answer, flags=re.IGNORECASE)
    return answer


def answer_problem(
    answer: str,
    expected: str,
    normalize: str = "text",
    others: Iterable[str] = (),
    *,
    app: AppValues | None = None,
    given: str = "",
) -> str | None:
    """Why ``answer`` is not exactly the one value ``expected`` (None when it is).

    ``normalize`` is the check's declared kind (``number``, ``date`` or ``text``: a text
    expected value that is a time, phone or email is judged as one); ``others`` are candidates
    the task names; ``app`` the app's values (every other one of the kind is a candidate too);
    ``given`` the question, whose own values and subjects an answer may repeat."""
    if len(answer) > max(MAX_ANSWER_CHARS, 2 * len(expected)):
        return f"{len(answer)} characters: an answer is one value, not a list"
    kind = kind_of(expected, normalize)
    year = _year(expected)
    bare = _strip_given(answer, app, given)
    found = scan(bare, year)
    asked = scan(given, year) if given else Scan()
    if kind == "text":
        problem = _text_problem(bare, expected, others, app)
    else:
        want = key(expected, kind, year)
        mine = found.keys(kind)
        if not any(k & want for k in mine):
            return "not the value" if mine else f"no {kind} in the answer"
        allowed = set().union(*asked.keys(kind)) - want
        rivals = {k for k in mine if not k & want and not k & allowed}
        problem = f"{len(rivals) + 1} {kind}s: an answer is one value" if rivals else None
    if problem is None and app is not None:
        problem = _dump_problem(found, bare, kind, app, asked)
    return problem


def _text_problem(
    answer: str, expected: str, others: Iterable[str], app: AppValues | None
) -> str | None:
    said = f" {normalize_text(answer)} "
    if not mentions(said, expected):
        return "not the value"
    want = normalize_text(expected)
    pool = {normalize_text(o) for o in others}
    if app is not None:
        pool |= app.text_candidates(expected)
    rivals = [o for o in pool if o and o not in want and want not in o and mentions(said, o)]
    return "it names other candidates too" if rivals else None


def _dump_problem(found: Scan, answer: str, kind: str, app: AppValues, asked: Scan) -> str | None:
    """More than :data:`MAX_OTHER_FACTS` other values of the app named: a record, not a
    value."""
    facts: set[str] = set()
    for other, keys in found.values.items():
        if other == kind:
            continue
        pool = app.keys.get(other, set()) - set().union(*asked.keys(other))
        facts |= {f"{other}:{sorted(k)[0]}" for k in keys if k & pool}
    low = answer.casefold()
    facts |= {f"name:{n}" for n in app.names if n.casefold() in low}
    if len(facts) > MAX_OTHER_FACTS:
        return f"it names {len(facts)} other facts of the app: a record, not one value"
    return None
