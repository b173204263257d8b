"""MiniWoB's form tasks: text, passwords, dates and times typed into fields, drop-downs,
list boxes and spinners set, text moved with the clipboard or the caret, then Submit."""

from __future__ import annotations

import re
from typing import Any

from palaestra.envs.runtimes import axtree as ax
from palaestra.envs.web.policies.reading import ORDINAL, ordinal, quoted, submit_button, widgets


def enter_text(obs: dict[str, Any]) -> str:
    """enter-text, enter-text-dynamic: type the quoted text, then Submit."""
    nodes = widgets(obs)
    return ax.fill_then([(ax.textboxes(nodes)[0], quoted(obs["goal"])[0])], submit_button(nodes))


def enter_text_2(obs: dict[str, Any]) -> str:
    """enter-text-2: the quoted text in the case the utterance asks for, then Submit."""
    text = quoted(obs["goal"])[0]
    text = text.upper() if "upper case" in obs["goal"] else text.lower()
    nodes = widgets(obs)
    return ax.fill_then([(ax.textboxes(nodes)[0], text)], submit_button(nodes))


def enter_password(obs: dict[str, Any]) -> str:
    """enter-password: the quoted password in both fields, then Submit."""
    password = quoted(obs["goal"])[0]
    nodes = widgets(obs)
    return ax.fill_then([(box, password) for box in ax.textboxes(nodes)[:2]], submit_button(nodes))


def login_user(obs: dict[str, Any]) -> str:
    """login-user(-popup): username and password into their labelled fields, then the button.
    A popup that steals the focus (login-user-popup) is dismissed with its Cancel button."""
    nodes = widgets(obs)
    cancel = ax.find(nodes, "button", "Cancel")
    if cancel:
        return ax.click(cancel[-1])
    user, password = quoted(obs["goal"])[:2]
    fields = [
        (ax.field_after(nodes, ax.one(nodes, "LabelText", "Username")), user),
        (ax.field_after(nodes, ax.one(nodes, "LabelText", "Password")), password),
    ]
    return ax.fill_then(fields, submit_button(nodes, "Login", "OK"))


def enter_date(obs: dict[str, Any]) -> str:
    """enter-date: the field is a date input, whose value is always ISO (YYYY-MM-DD) whatever
    the display format, so the date is filled in that form."""
    match = re.search(r"(\d\d)/(\d\d)/(\d{4})", obs["goal"])
    if not match:
        raise ax.OracleError(f"no date in {obs['goal']!r}")
    month, day, year = match.groups()
    nodes = widgets(obs)
    return ax.fill_then([(ax.textboxes(nodes)[0], f"{year}-{month}-{day}")], submit_button(nodes))


def enter_time(obs: dict[str, Any]) -> str:
    """enter-time: a time input's value is 24-hour HH:MM, whatever the display (12:14 AM)."""
    match = re.search(r"(\d{1,2}):(\d\d)\s*([AP]M)?", obs["goal"])
    if not match:
        raise ax.OracleError(f"no time in {obs['goal']!r}")
    hour, minute = int(match.group(1)), match.group(2)
    if match.group(3):
        hour = hour % 12 + (12 if match.group(3) == "PM" else 0)
    nodes = widgets(obs)
    return ax.fill_then([(ax.textboxes(nodes)[0], f"{hour:02d}:{minute}")], submit_button(nodes))


def focus_text(obs: dict[str, Any]) -> str:
    """focus-text: click into the textbox."""
    return ax.click(ax.textboxes(widgets(obs))[0])


def focus_text_2(obs: dict[str, Any]) -> str:
    """focus-text-2: click into the n-th textbox."""
    return ax.click(ax.textboxes(widgets(obs))[ordinal(obs["goal"])])


def choose_list(obs: dict[str, Any]) -> str:
    """choose-list: pick the option in the drop-down, then Submit."""
    match = re.search(r"Select (.*) from the list", obs["goal"])
    if not match:
        raise ax.OracleError(f"no item in {obs['goal']!r}")
    nodes = widgets(obs)
    box = ax.one(nodes, "combobox")
    if ax.norm(box.value) != ax.norm(match.group(1)):
        return ax.action("select_option", box.bid, [match.group(1)])
    return ax.click(submit_button(nodes))


def click_scroll_list(obs: dict[str, Any]) -> str:
    """click-scroll-list: select exactly the listed items in the list box, then Submit."""
    match = re.search(r"Select (.*) from the scroll list", obs["goal"])
    if not match:
        raise ax.OracleError(f"no items in {obs['goal']!r}")
    wanted = match.group(1).split(", ")
    nodes = widgets(obs)
    box = ax.one(nodes, "listbox")
    chosen = {
        ax.norm(o.name) for o in ax.find(ax.subtree(nodes, box), "option") if "selected" in o.props
    }
    if chosen != {ax.norm(w) for w in wanted}:
        return ax.action("select_option", box.bid, wanted)
    return ax.click(submit_button(nodes))


def use_spinner(obs: dict[str, Any]) -> str:
    """use-spinner: the field refuses typing, so step with its arrows (up, then down, right after
    the field) until it shows the number, then Submit."""
    match = re.search(r"Select (-?\d+)", obs["goal"])
    if not match:
        raise ax.OracleError(f"no number in {obs['goal']!r}")
    target = int(match.group(1))
    nodes = widgets(obs)
    spin = ax.one(nodes, "spinbutton")
    up, down = ax.find(ax.after(nodes, spin), "button")[:2]
    current = int(spin.value or 0)
    if current == target:
        return ax.click(submit_button(nodes))
    return ax.click(up if current < target else down)


def _cut(source: ax.Node) -> str:
    """Select all of the source, then cut it: cutting moves the exact text (the tree collapses
    whitespace, so retyping what it shows could differ from the original), and the emptied
    source shows that the clipboard holds it."""
    return ax.press(source, "Control+x" if source.focused else "Control+a")


def copy_paste(obs: dict[str, Any]) -> str:
    """copy-paste: the textarea and the input come in either order and look alike once the text
    has moved, so the empty input first gets a marker '-' that the paste then replaces."""
    nodes = widgets(obs)
    boxes = ax.textboxes(nodes)
    marked = [b for b in boxes if b.value == "-"]
    if not marked:
        if any(b.focused for b in boxes):  # the pasted text, still focused after the paste
            return ax.click(submit_button(nodes))
        return ax.fill(next(b for b in boxes if not b.value), "-")
    full = [b for b in boxes if b.value and b.value != "-"]
    if full:
        return _cut(full[0])
    return ax.press(marked[0], "Control+v" if marked[0].focused else "Control+a")


def copy_paste_2(obs: dict[str, Any]) -> str:
    """copy-paste-2: cut the n-th text area, paste into the input (the last textbox), Submit."""
    nodes = widgets(obs)
    boxes = ax.textboxes(nodes)
    source, target = boxes[ordinal(obs["goal"])], boxes[-1]
    if target.value:
        return ax.click(submit_button(nodes))
    return _cut(source) if source.value else ax.press(target, "Control+v")


def form_sequence_2(obs: dict[str, Any]) -> str:
    """form-sequence-2: the n-th radio button, the number into the m-th textbox, Submit."""
    radio_n, box_n = (int(n) - 1 for n in ORDINAL.findall(obs["goal"])[:2])
    nodes = widgets(obs)
    radio = ax.find(nodes, "radio")[radio_n]
    if not radio.checked:
        return ax.click(radio)
    return ax.fill_then(
        [(ax.textboxes(nodes)[box_n], quoted(obs["goal"])[0])], submit_button(nodes)
    )


_MOVIE_FIELDS = {"genre": "genre", "director": "director", "year": "year", "date": "year"}


def multi_layouts(obs: dict[str, Any]) -> str:
    """multi-layouts, multi-orderings: genre, director and year into the fields captioned so.
    A caption sits before its input, except in the layout where every input comes first."""
    match = re.search(r"Search for (\S+) movies directed by (.+) from year (\d+)", obs["goal"])
    if not match:
        raise ax.OracleError(f"no movie query in {obs['goal']!r}")
    values = dict(zip(("genre", "director", "year"), match.groups(), strict=True))
    nodes = widgets(obs)
    boxes = ax.textboxes(nodes)
    captions = [
        (n, key)
        for n in nodes
        if n.bid and n.role in ("generic", "columnheader", "LabelText")
        for word, key in _MOVIE_FIELDS.items()
        if word in ax.norm(n.name).lower() and len(n.name) < 20
    ]
    inputs_first = boxes[0].index < captions[0][0].index
    fields = []
    for caption, key in captions:
        if inputs_first:
            box = [b for b in boxes if b.index < caption.index][-1]
        else:
            box = ax.field_after(nodes, caption)
        fields.append((box, values[key]))
    return ax.fill_then(fields, submit_button(nodes, "Submit", "Search", "Go!"))


def scroll_text_2(obs: dict[str, Any]) -> str:
    """scroll-text-2: Control+End (or Control+Home) in the textarea moves its caret to the end
    (start) and scrolls there; the textarea keeps the focus, which shows it is done; Submit."""
    nodes = widgets(obs)
    area = ax.textboxes(nodes)[0]
    if area.focused:
        return ax.click(submit_button(nodes))
    return ax.press(area, "Control+End" if "bottom" in obs["goal"] else "Control+Home")
