"""Check kinds for dialogue worlds (usersim): end state, what was said, rules kept.

The probe's state carries ``db`` (every table's rows at the end), ``gold`` (a function giving
the rows after the task's reference tool calls, replayed on a fresh copy of the same seeded
world), ``said`` and ``heard`` (the assistant's and the user's messages), ``calls`` (the env's
log of the tool calls it ran: name, checked arguments, and how many assistant messages came
before each), ``violations`` (rule-breaking attempts the env recorded) and ``user_outcome``.
All of it is written by the env, never by the agent except by acting, and none of it is the
simulated user's reading of the agent: these checks judge messages on their own terms, so a
score never depends on how the user understood the wording (and the user's reader can change
without moving a score). They import nothing from the env.

What each kind proves, how it could be gamed and which adversary covers that is in
``docs/verifiers.md`` ("User simulator").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from palaestra.verifiers import answers
from palaestra.verifiers.answers import DAY, HOUR, MONTHS, real_date
from palaestra.verifiers.base import CheckResult, StateProbe, check_kind

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
#: the least share of the told values of a fact's kind that must be the facts asked for: a
#: dump of every venue's phone number tells the right one among 23 wrong ones
MIN_PRECISION = 0.5
#: a JSON object or list (a tool's answer pasted), innermost first
_JSON = re.compile(r"\{[^{}]*\}|\[[^\[\]]*\]")
#: a refusal that restates or names this many other rules (the policy's written rules, the
#: other refusal rules' words) is stuffing, not a reason
STUFFED = 3
#: the longest a refusing message may be: a reason found only inside a dump is not a refusal
REFUSAL_WORDS = 150
_WORDS = [
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen", "twenty"),
]
_NUMBER_WORD = re.compile(rf"\b({'|'.join(_WORDS)})\b")
#: a message that says something is not so: any negation, limit or refusal, in any wording
_POLARITY = re.compile(
    r"\b(?:not?|never|none|nothing|nobody|cannot|unable|impossible|only|too|exceed\w*|over|"
    r"beyond|limit\w*|max\w*|at most|"
    r"up to|already|unavailable|sold out|full|sorry|afraid|unfortunately|refus\w*|declin\w*|"
    r"denied|den(?:y|ies)|ineligible|past|instead|however|regret\w*|turn(?:ed|ing)? \w+ down|"
    r"reject\w*|forbid\w*|prohibit\w*|disallow\w*|outside|out of stock)\b"
)
#: negations that are courtesy, not refusal ("If you don't mind, how many seats?")
_HEDGES = re.compile(
    r"\b(?:if you (?:do )?not mind|would you not mind|(?:do )?not hesitate|no problem|"
    r"not a problem|no worries)\b"
)


# ----- wording-robust matching, shared by the checks ----------------------------------------
def normalize(text: str) -> str:
    """Lower case, one kind of apostrophe, "n't" as " not", hyphens as spaces, no ordinal
    suffixes or thousands commas, single spaces: the form every phrase and value is matched
    in."""
    low = text.lower().replace("\u2019", "'").replace("\u2018", "'").replace("n't", " not")
    low = re.sub(r"(\d),(\d{3})", r"\1\2", low)
    low = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", low)
    low = re.sub(r"[-_/]", " ", low)
    low = re.sub(r"[^\w$#.:' ]+", " ", low)
    return re.sub(r"\s+", " ", low).strip()


def numbers(text: str) -> list[float]:
    """The numbers a text says, digits or words ("eleven"), leaving out dates and clock times
    (their parts are no counts)."""
    low = re.sub(r"\b\d{4}-\d\d-\d\d\b|\b\d{1,2}:\d\d\b", " ", text.lower())
    low = _NUMBER_WORD.sub(lambda m: str(_WORDS.index(m.group(1))), low)
    out = []
    for m in _NUMBER.finditer(low):
        try:
            out.append(float(m.group(0).replace(",", "")))
        except ValueError:
            continue
    return out


def names(text: str, groups: Iterable[Iterable[str]]) -> bool:
    """``text`` says one phrase of every group: a phrase anywhere it starts a word (so
    "availab" is "available" and "availability"), ``"#4"`` the number four in any writing,
    ``"@2026-12-01"`` that day in any writing."""
    low = f" {normalize(text)} "
    said = numbers(text)
    return all(any(_says(text, low, said, phrase) for phrase in group) for group in groups)


def _says(text: str, low: str, said: list[float], phrase: str) -> bool:
    if phrase.startswith("@"):  # a day, in any writing
        return phrase[1:] in dates(text, int(phrase[1:5]))
    if phrase.startswith("#"):
        return any(abs(n - float(phrase[1:])) < 1e-9 for n in said)
    return re.search(rf"(?<![\w]){re.escape(normalize(phrase))}", low) is not None


def _same(a: Any, b: Any) -> bool:
    """Tool arguments as an agent may type them: case, spaces, "5" for 5 do not matter."""
    x, y = normalize(str(a)), normalize(str(b))
    if x == y:
        return True
    try:
        return abs(float(x) - float(y)) < 1e-9
    except ValueError:
        return False


def looked(calls: list[Mapping[str, Any]], wanted: Iterable[Mapping[str, Any]]) -> int | None:
    """How many assistant messages came before the first logged call that is one of
    ``wanted`` (same tool, every wanted argument the same value), or None when none was made."""
    for call in calls:
        for want in wanted:
            args = call.get("args", {})
            if call["name"] == want["name"] and all(
                k in args and _same(args[k], v) for k, v in want["args"].items()
            ):
                return int(call.get("after", 0))
    return None


_MON = rf"({'|'.join(MONTHS)})[a-z]*\.?"
_DATE_FORMS = (
    (re.compile(r"\b(\d{4})-(\d\d)-(\d\d)\b"), "ymd"),
    (re.compile(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b"), "slash"),
    (re.compile(rf"\b{DAY}\s+(?:of\s+)?{_MON}(?:,?\s+(\d{{4}}))?"), "dmy"),
    (re.compile(rf"\b{_MON}\s+{DAY}\b(?:,?\s+(\d{{4}}))?"), "mdy"),
)
_CLOCK = re.compile(r"(?<![\d$.,:])(\d{1,2}):(\d\d)(?:\s*([ap])\.?\s?m\b\.?)?")


def dates(text: str, year: int) -> set[str]:
    """The days a text names, as ISO dates: "2026-12-01", "12/01/2026" (read both ways),
    "1st of December", "Dec 1, 2026"; a date without a year is in ``year``."""
    low, out = text.lower(), set()
    for pattern, form in _DATE_FORMS:
        for m in pattern.finditer(low):
            g = m.groups()
            if form == "ymd":
                candidates = [(int(g[0]), int(g[1]), int(g[2]))]
            elif form == "slash":
                y = int(g[2]) if g[2] else year
                y += 2000 if y < 100 else 0
                candidates = [(y, int(g[0]), int(g[1])), (y, int(g[1]), int(g[0]))]
            else:
                day, mon, said = (g[0], g[1], g[2]) if form == "dmy" else (g[1], g[0], g[2])
                candidates = [(int(said) if said else year, MONTHS.index(mon) + 1, int(day))]
            out |= {f"{y:04d}-{mo:02d}-{d:02d}" for y, mo, d in candidates if real_date(y, mo, d)}
    return out


def times(text: str) -> set[str]:
    """The clock times a text names, as 24-hour "HH:MM": "19:30", "7:30 pm", "7.30pm", "7 PM",
    "noon"."""
    low, out = text.lower(), set()
    for m in [*_CLOCK.finditer(low), *HOUR.finditer(low)]:
        hour, minute, half = int(m.group(1)), int(m.group(2) or 0), m.group(3)
        if half and hour <= 12:
            hour = hour % 12 + (12 if half == "p" else 0)
        if hour < 24 and minute < 60:
            out.add(f"{hour:02d}:{minute:02d}")
    if re.search(r"\bnoon\b|\bmidday\b", low):
        out.add("12:00")
    return out


def _is_time(fact: str) -> bool:
    return re.fullmatch(r"\d\d:\d\d", fact) is not None


def _said(texts: list[str], fact: str) -> bool:
    """A fact was told in any format: :func:`palaestra.verifiers.answers.says` (the reading
    every family's answers share: "+44 1223 238596", "2:05 PM", "$1,000.00"), or this
    module's own (numbers in words, "noon")."""
    if any(answers.says(t, fact) for t in texts):
        return True
    if _is_time(fact):
        return any(fact in times(t) for t in texts)
    try:
        want = float(fact.replace(",", ""))
    except ValueError:
        return any(normalize(fact) in normalize(t) for t in texts)
    return any(abs(n - want) < 0.005 for text in texts for n in numbers(text))


def shape(fact: str) -> re.Pattern[str]:
    """The pattern of a fact's kind, from the fact itself: "01223 456789" gives five digits, a
    space, six digits (every phone number in the world); "12 Mill Street" a number and two
    capitalised words; an amount ("230.00") any sum of money. What a precision counts."""
    if re.fullmatch(r"\d[\d,]*\.\d\d", fact):
        return re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*\.\d\d\b")
    parts = []
    for run in re.findall(r"\d+|[A-Z][a-z]+|[a-z]+|[A-Z]+|\s+|.", fact):
        if run.isdigit():
            parts.append(rf"\d{{{len(run)}}}" if len(run) > 3 else r"\d{1,3}")
        elif run[0].isupper() and run[1:].islower():
            parts.append(r"[A-Z][a-z]+")
        elif run.isupper():
            parts.append(rf"[A-Z]{{{len(run)}}}")
        elif run.islower():
            parts.append(r"[a-z]+")
        elif run.isspace():
            parts.append(r"\s+")
        else:
            parts.append(re.escape(run))
    return re.compile(rf"(?<![\w]){''.join(parts)}(?![\w])")


def _value(text: str) -> str:
    bare = re.sub(r"[$,\s]", "", text)
    try:
        return f"{float(bare):.2f}"
    except ValueError:
        return normalize(text)


def _kind_values(fact: str, text: str) -> set[str]:
    """The values of ``fact``'s kind in ``text``, each as a comparable key (a phone number in
    any format as its national digits)."""
    if _is_time(fact):
        return times(text)
    if answers.kind_of(fact) == "phone":
        return {k for keys in answers.scan(text).keys("phone") for k in keys}
    return {_value(m.group(0)) for m in shape(fact).finditer(text)}


def _fact_key(fact: str) -> str:
    if _is_time(fact):
        return fact
    if answers.kind_of(fact) == "phone":
        return answers.phone_key(fact)
    return _value(fact)


def precision(said: list[str], heard: list[str], facts: list[str]) -> tuple[float, int]:
    """The share of the values of the facts' kinds the assistant told that are the facts (the
    values the user said first left out: echoing them back is no claim), and how many values
    were told."""
    wanted = {_fact_key(f) for f in facts}
    from_user = {v for f in facts for t in heard for v in _kind_values(f, t)}
    told = {v for f in facts for t in said for v in _kind_values(f, t)} - (from_user - wanted)
    if not told:
        return 1.0, 0
    return len(told & wanted) / len(told), len(told)


# ----- the check kinds ------------------------------------------------------------------------
def _differ(state: Mapping[str, Any], calls: list[Any]) -> list[str]:
    """The tables whose rows are not those of the gold replay of ``calls``."""
    gold, db = state["gold"](calls), state["db"]
    return [t for t in sorted(set(gold) | set(db)) if gold.get(t) != db.get(t)]


@check_kind("usersim_db")
def _db(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """The final database equals the gold one, table by table: a done report is judged on
    the world, never on the words that claim it."""
    state = probe.read()
    gold, db = state["gold"](spec["calls"]), state["db"]
    differ = _differ(state, spec["calls"])
    if not differ:
        return CheckResult("usersim_db", True, 1.0, "database matches the gold replay")
    detail = "; ".join(
        f"{t}: {len(set(map(tuple, db.get(t, []))) ^ set(map(tuple, gold.get(t, []))))} row(s) "
        "differ"
        for t in differ
    )
    return CheckResult("usersim_db", False, 0.0, f"database differs from the gold: {detail}")


@check_kind("usersim_told")
def _told(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """Each fact the user had to learn was told (recall), and the values of the same kinds the
    assistant told are mostly those facts (precision): telling every venue's phone number to
    someone who asked for one earns nothing. Score: recall times precision, and zero under
    :data:`MIN_PRECISION`. With ``calls`` (the facts report a write's outcome: a refund, a
    booking reference), they count only once the world is the gold replay of those calls: a
    done report is judged on the world, not on its words."""
    state = probe.read()
    if spec.get("calls") and _differ(state, spec["calls"]):
        return CheckResult("usersim_told", False, 0.0, "an outcome told of a world not changed so")
    said, heard = state["said"], state.get("heard", [])
    facts = [str(f) for f in spec["facts"]]
    told = [f for f in facts if _said(said, f)]
    recall = len(told) / len(facts) if facts else 1.0
    share, values = precision(said, heard, facts)
    score = recall * share if share >= MIN_PRECISION else 0.0
    passed = len(told) == len(facts) and share >= MIN_PRECISION
    detail = f"{len(told)}/{len(facts)} fact(s) told; precision {share:.2f} of {values} value(s)"
    return CheckResult("usersim_told", passed, round(score, 6), detail)


@check_kind("usersim_refused")
def _refused(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """The request could not be granted, and the assistant refused with its evidence: the
    tool-call log shows it looked the request up (``looked``: calls, any one of them), and a
    later message says no in any words and names the blocking rule or value (one phrase of
    each of ``reason``'s groups), in at most :data:`REFUSAL_WORDS` words (not a dump), without
    restating :data:`STUFFED` written rules (``policy``: their content words). And every claim
    is true: no refusal after the lookup makes the claim of a rule that does not block the
    request (``others``: each other rule's claim words), and a count of seats or guests it
    gives is the world's (:func:`false_count`): the candidate rules of an intent listed in one
    refusal, or the blocking rule with a wrong number, is guessing, not refusing."""
    state = probe.read()
    after = looked(state["calls"], spec.get("looked", []))
    if after is None and spec.get("looked"):
        return CheckResult("usersim_refused", False, 0.0, "refused without looking it up")
    heard = state.get("heard", [])
    why = "no refusal named the reason"
    passed = False
    for said in state["said"][after or 0 :]:
        text = prose(said)
        low = normalize(text)
        if not _POLARITY.search(_HEDGES.sub(" ", low)):
            continue
        wrong = [words for words in spec.get("others", []) if names(text, words)]
        if wrong:
            phrase = " / ".join(wrong[0][0])
            return CheckResult(
                "usersim_refused", False, 0.0, f"it claims a rule that does not block: {phrase}"
            )
        lie = false_count(text, spec["reason"], heard, state.get("told", []))
        if lie is not None:
            return CheckResult("usersim_refused", False, 0.0, f"a false count: {lie}")
        if passed or not names(text, spec["reason"]):
            continue
        if len(low.split()) > REFUSAL_WORDS:
            why = f"the reason is said only inside a dump (over {REFUSAL_WORDS} words)"
        elif restated(low, spec.get("policy", [])) >= STUFFED:
            why = "the refusal restates the policy (stuffing), not the reason"
        else:
            passed = True
    if passed:
        return CheckResult("usersim_refused", True, 1.0, "refused, naming the reason")
    return CheckResult("usersim_refused", False, 0.0, why)


_COUNT_WORD = rf"(\d+|{'|'.join(_WORDS[:21])})"
#: a count of places or people, or a hedge of two ("3 or 4 seats")
_COUNT = re.compile(
    rf"\b{_COUNT_WORD}(?:\s*(?:or|to|-)\s*{_COUNT_WORD})?\s+"
    r"(?:more\s+|free\s+|available\s+|open\s+)?"
    r"(?:seats?|spaces?|places?|rooms?|tables?|people|guests|passengers|persons?)\b"
)


def false_count(
    text: str, reason: list[list[str]], heard: list[str], told: Sequence[str] = ()
) -> str | None:
    """A count of seats, rooms or guests ``text`` gives that is neither the rule's own (its
    ``#n`` phrases), nor one the user said (their party), nor a count the world's tools stated
    in those very words ("a booking is one room for at most 4 guests" quoted from the
    availability check): a made-up number, or a hedge of several. None when every count is
    true (or the rule counts nothing)."""
    true = {float(p[1:]) for group in reason for p in group if p.startswith("#")}
    if not true:
        return None
    said_by_user = {n for h in heard for n in numbers(h)}
    stated = " ".join(normalize(t) for t in told)
    for m in _COUNT.finditer(normalize(text)):
        if re.search(rf"\b{re.escape(m.group(0))}\b", stated):
            continue
        for word in filter(None, m.groups()):
            n = float(_WORDS.index(word)) if word in _WORDS else float(word)
            if n not in true and n not in said_by_user:
                return m.group(0)
    return None


def prose(text: str) -> str:
    """A message without the JSON pasted into it: a tool's answer is data the agent copied,
    not its own words (nested objects go innermost first)."""
    for _ in range(20):
        bare = _JSON.sub(" ", text)
        if bare == text:
            break
        text = bare
    return text


def restated(low: str, rules: list[list[str]], share: float = 0.6) -> int:
    """How many written rules (each its content words) a normalized message says most of."""
    words = set(low.split())
    return sum(
        1
        for rule in rules
        if rule and sum(any(w.startswith(r) for w in words) for r in rule) >= share * len(rule)
    )


@check_kind("usersim_rules")
def _rules(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """No written rule was broken (or attempted against the tools' refusal)."""
    broken = probe.read()["violations"]
    if not broken:
        return CheckResult("usersim_rules", True, 1.0, "no rule broken")
    return CheckResult("usersim_rules", False, 0.0, f"{len(broken)} rule violation(s): {broken[0]}")
