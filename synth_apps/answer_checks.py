"""The answer check of a question task (an ``answer`` template): the value its expression gives
over the app's rows, checked in the template's ``answer_format``, with what the oracle says and
the near misses validation must see refused. Each format's check is built so the cheap wrong
answers fail: listing every row, a second number, both yes and no (a yes/no answer is also
gated on a look at what it is about, by the generator: :data:`YES_NO`)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from palaestra.chat import ANSWER
from palaestra.synth_apps import expr
from palaestra.synth_apps.grounding import GenerationError
from palaestra.synth_apps.spec import TaskTemplate

#: the other values of an info task's column its answer check names (must not be answered too)
MAX_OTHERS = 80
#: what the oracle says to a yes/no question (so a task's answer reads as one of the two)
YES_NO = ("Yes", "No")


def answer_check(
    t: TaskTemplate, value: Any, column: list[str]
) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    """The ``answer`` check of an answer template's value in its format (``list``: the items
    in any order and no other row's; ``number``: within ``tolerance``; ``bool``: yes or no,
    in either vocabulary, never both; ``date``; ``text``), what the oracle says, and
    the near misses the check must refuse."""
    form = t.answer_format or format_of(value)
    check: dict[str, Any]
    if form == "list":
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise GenerationError(f"answer {t.answer!r} gives {value!r}, not a list")
        items = list(dict.fromkeys(expr.show(v) for v in value if expr.show(v)))
        others = sorted(set(column) - set(items))[:MAX_OTHERS]
        said = ", ".join(items) or "None"
        check = {"kind": "answer", "value": items, "normalize": "list", "others": others}
        misses = [{"name": "no answer", "chat": []}]
        if others:
            misses.append(
                {"name": "every value listed", "chat": [f"{ANSWER}{said}, " + ", ".join(others)]}
            )
            misses.append(
                {
                    "name": "another row's value",
                    "chat": [f"{ANSWER}{', '.join([*items[1:], others[0]])}"],
                }
            )
        if len(items) > 1:
            misses.append({"name": "one missing", "chat": [f"{ANSWER}{', '.join(items[:-1])}"]})
        return check, said, misses
    if form == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise GenerationError(f"answer {t.answer!r} gives {value!r}, not a number")
        said = str(value) if isinstance(value, int) else f"{value:.2f}".rstrip("0").rstrip(".")
        check = {"kind": "answer", "value": said, "normalize": "number"}
        if t.tolerance:
            check["tolerance"] = t.tolerance
        wrong = value + max(1, 2 * (t.tolerance or 0)) + 1
        wrong_said = str(wrong) if isinstance(wrong, int) else f"{wrong:.2f}"
        misses = [
            {"name": "no answer", "chat": []},
            {"name": "a different value", "chat": [f"{ANSWER}{wrong_said}"]},
            {"name": "two values", "chat": [f"{ANSWER}{said} or {wrong_said}"]},
        ]
        return check, said, misses
    if form == "bool":
        if not isinstance(value, bool):
            raise GenerationError(f"answer {t.answer!r} gives {value!r}, not true or false")
        said, other = YES_NO if value else YES_NO[::-1]
        # either vocabulary reads ("Yes", "True"), and neither word of the other answer may
        # appear beside it
        words = [("yes", "no"), ("true", "false")] if value else [("no", "yes"), ("false", "true")]
        opposite = sorted({w for _, w in words})
        check = {
            "kind": "any",
            "checks": [
                {"kind": "answer", "value": w, "normalize": "text", "others": opposite}
                for w, _ in words
            ],
        }
        misses = [
            {"name": "no answer", "chat": []},
            {"name": "the opposite", "chat": [f"{ANSWER}{other}"]},
            {"name": "both", "chat": [f"{ANSWER}{said} or {other.lower()}"]},
        ]
        return check, said, misses
    said = expr.show(value)
    if not said:
        raise GenerationError(f"answer {t.answer!r} gives nothing to answer")
    normalize = "date" if form == "date" else "text"
    others = sorted(set(column) - {said})[:MAX_OTHERS] if form == "text" else []
    check = {"kind": "answer", "value": said, "normalize": normalize, "others": others}
    misses = [{"name": "no answer", "chat": []}]
    if others:
        misses.append({"name": "a different value", "chat": [f"{ANSWER}{others[0]}"]})
        misses.append(
            {"name": "every value listed", "chat": [f"{ANSWER}{said}, {', '.join(others)}"]}
        )
    return check, said, misses


def format_of(value: Any) -> str:
    """An answer's format when the template does not say: by the value's type."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dt.date):
        return "date"
    return "text"
