"""MiniWoB's composite widgets, set over several steps: autocomplete fields, the jQuery UI date
picker and slider, a styled drop-down. Each helper returns None once its widget holds the value,
so a task chains them (``pick(...) or slide(...) or click(submit)``)."""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from typing import Any

from palaestra.envs.runtimes import axtree as ax
from palaestra.envs.web.policies.reading import ordinal, quoted, submit_button, widgets


def autocomplete(
    nodes: list[ax.Node], box: ax.Node, typed: str, fits: Callable[[str], bool]
) -> str | None:
    """Set an autocomplete field to a suggestion that fits; None once it holds one.

    Type the text, wait for the suggestions (they come after a short delay and cover what is
    below the field), click the first that fits. A picked suggestion is what the widget's live
    region ("status") announces, which tells it apart from the same text merely typed.
    """
    offered = [n for n in ax.find(nodes, "listitem") if fits(n.name)]
    if offered:
        return ax.click(offered[0])
    announced = {ax.norm(n.name) for s in ax.find(nodes, "status") for n in ax.subtree(nodes, s)}
    if fits(box.value) and ax.norm(box.value) in announced:
        return None
    if ax.norm(box.value) != ax.norm(typed):  # the tree trims values: "New " shows as 'New'
        return ax.fill(box, typed)
    return ax.action("noop", 300)


def use_autocomplete(obs: dict[str, Any]) -> str:
    """use-autocomplete(-nodelay): type the start, pick a suggestion that also has the end,
    then Submit."""
    parts = quoted(obs["goal"])
    start, end = parts[0], parts[1] if len(parts) > 1 else ""
    nodes = widgets(obs)

    def fits(text: str) -> bool:
        return text.startswith(start) and text.endswith(end)

    picked = autocomplete(nodes, ax.textboxes(nodes)[0], start, fits)
    return picked or ax.click(submit_button(nodes))


_MONTHS = list(calendar.month_name)[1:]


_DATE = re.compile(r"(\d\d)/(\d\d)/(\d{4})")


def pick_date(nodes: list[ax.Node], box: ax.Node, date: str) -> str | None:
    """Set a read-only jQuery UI date field to ``date`` (MM/DD/YYYY); None once it holds it.

    Open the picker by clicking the field, step months with Prev/Next until the picker's header
    shows the month and year, then click the day.
    """
    if box.value == date:
        return None
    parts = _DATE.fullmatch(date)
    if parts is None:
        raise ax.OracleError(f"not a MM/DD/YYYY date: {date!r}")
    month, day, year = (int(g) for g in parts.groups())
    shown_month = [n for n in nodes if ax.norm(n.name) in _MONTHS]
    shown_year = [n for n in nodes if re.fullmatch(r"\d{4}", ax.norm(n.name))]
    if not shown_month or not shown_year:
        return ax.click(box)
    shown = int(shown_year[0].name) * 12 + _MONTHS.index(ax.norm(shown_month[0].name)) + 1
    wanted = year * 12 + month
    if shown != wanted:
        return ax.click(ax.one(nodes, "generic", "Next" if shown < wanted else "Prev"))
    return ax.click(ax.one(ax.subtree(nodes, ax.one(nodes, "table")), "link", str(day)))


def choose_date(obs: dict[str, Any]) -> str:
    """choose-date(-easy/-medium/-nodelay): the field is read-only, so the date is picked in
    the date picker, then Submit."""
    match = _DATE.search(obs["goal"])
    if not match:
        raise ax.OracleError(f"no date in {obs['goal']!r}")
    nodes = widgets(obs)
    picked = pick_date(nodes, ax.textboxes(nodes)[0], match.group(0))
    return picked or ax.click(submit_button(nodes))


def _slide(nodes: list[ax.Node], target: int) -> str | None:
    """Move a jQuery UI slider to ``target`` with its keys; None once it shows the target.

    The handle has no text, so it is in the tree only while it has the focus: Tab gives it the
    focus (it is the first focusable element of these tasks). Page keys move a fifth of the
    range, at most 20, so they are used only while 20 or more away; arrows move by one.
    """
    shown = next(n for n in nodes if re.fullmatch(r"-?\d+", ax.norm(n.name)))
    diff = target - int(shown.name)
    if diff == 0:
        return None
    handle = [n for n in nodes if n.role == "generic" and n.focused and not n.name]
    if not handle:
        return ax.action("keyboard_press", "Tab")
    if abs(diff) >= 20:
        return ax.press(handle[0], "PageUp" if diff > 0 else "PageDown")
    return ax.press(handle[0], "ArrowRight" if diff > 0 else "ArrowLeft")


def use_slider(obs: dict[str, Any]) -> str:
    """use-slider: set the slider to the number, then Submit."""
    match = re.search(r"Select (-?\d+) with the slider", obs["goal"])
    if not match:
        raise ax.OracleError(f"no number in {obs['goal']!r}")
    nodes = widgets(obs)
    return _slide(nodes, int(match.group(1))) or ax.click(submit_button(nodes))


def form_sequence(obs: dict[str, Any]) -> str:
    """form-sequence: the slider to the number, check the n-th checkbox, then Submit."""
    match = re.search(r"Select (-?\d+) with the slider", obs["goal"])
    if not match:
        raise ax.OracleError(f"no number in {obs['goal']!r}")
    nodes = widgets(obs)
    moved = _slide(nodes, int(match.group(1)))
    if moved:
        return moved
    box = ax.find(nodes, "checkbox")[ordinal(obs["goal"])]
    return ax.click(submit_button(nodes)) if box.checked else ax.click(box)


def form_sequence_3(obs: dict[str, Any]) -> str:
    """form-sequence-3: the styled drop-down shows its choice as text before its arrow; open
    it, pick the item, then click the quoted button."""
    match = re.search(r"Choose (.+) from the dropdown", obs["goal"])
    if not match:
        raise ax.OracleError(f"no choice in {obs['goal']!r}")
    choice = ax.norm(match.group(1))
    nodes = widgets(obs)
    arrow = ax.one(nodes, "generic", "▾")
    shown = [n for n in ax.before(nodes, arrow) if n.role == "generic" and n.bid]
    if shown and ax.norm(shown[-1].name) == choice:
        return ax.click(ax.one(nodes, "button", quoted(obs["goal"])[-1]))
    items = ax.find(nodes, "listitem", choice)
    return ax.click(items[0] if items else arrow)
