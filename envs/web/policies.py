"""The web family's scripted policies, behind the one ``Policy`` protocol (see ``POLICIES``).

``miniwob`` plays the scripted oracle of a MiniWoB task, ``plan`` the planned oracle of a
synthesized app's task, ``random`` clicks and types on elements of the tree, ``noop`` does
nothing. Every one reads only what an agent reads (goal and accessibility tree, through
:mod:`palaestra.envs.runtimes.axtree`) and answers with actions of the web action set, so
running an oracle through the gateway proves the task, the env and the verifier together.

MiniWoB's oracles are functions from observation to action; ``ORACLES`` maps a task name to
its oracle, and a MiniWoB task's ``oracle`` is ``{"policy": "miniwob", "data": "<task name>"}``.

Every MiniWoB oracle is stateless: it is called once per step with the latest observation and
works out how far the episode has got from the tree itself (a textbox already holding its value,
a checkbox already checked, which element has the focus). That keeps an oracle usable through
any client, including a remote one that only relays observations. Tasks whose solution needs
something the tree does not show (icons with neither names nor ids/classes, SVG shapes, canvas
drawings, file-vs-folder) have no oracle here.
"""

from __future__ import annotations

import ast
import calendar
import operator
import random
import re
from collections.abc import Callable
from typing import Any

from palaestra.envs.runtimes.axtree import (
    Node,
    OracleError,
    action,
    after,
    before,
    click,
    field_after,
    fill,
    fill_then,
    find,
    norm,
    one,
    page,
    parse,
    press,
    subtree,
    textboxes,
)
from palaestra.policies import ConstantPolicy, GiveUpPolicy, scripted
from palaestra.synth_apps.adversaries import GAVE_UP as ADVERSARY_GAVE_UP
from palaestra.synth_apps.adversaries import STRATEGIES
from palaestra.tasks import Task

# ----- reading MiniWoB pages ------------------------------------------------------------------

_QUOTED = re.compile(r'"([^"]*)"')
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")


def goal_node(nodes: list[Node], goal: str) -> Node | None:
    """The node showing the utterance (``#query``); the task's widgets come after it."""
    first = norm(goal).split(" ")[0]
    for node in nodes:
        if node.bid and norm(node.name).startswith(first) and node.role == "generic":
            return node
    return None


def widgets(obs: dict[str, Any]) -> list[Node]:
    """The task's nodes after the utterance (so the utterance's own words never match)."""
    nodes = page(obs)
    anchor = goal_node(nodes, obs.get("goal", ""))
    if anchor is None:
        return nodes
    inside = {n.index for n in subtree(nodes, anchor)}
    return [n for n in after(nodes, anchor) if n.index not in inside]


def quoted(goal: str) -> list[str]:
    """The double-quoted parts of the utterance, which name what to click or type."""
    return _QUOTED.findall(goal)


def ordinal(goal: str) -> int:
    """``"2nd"`` in the utterance as a 0-based index."""
    match = _ORDINAL.search(goal)
    if not match:
        raise OracleError(f"no ordinal in {goal!r}")
    return int(match.group(1)) - 1


def submit_button(nodes: list[Node], *names: str) -> Node:
    """The last clickable node named like a submit button (buttons first, then plain text)."""
    names = names or ("Submit",)
    for roles in (("button", "link"), ("generic",)):
        found = [n for n in nodes if n.role in roles and norm(n.name) in names and n.bid]
        if found:
            return found[-1]


# ----- arithmetic without eval ------------------------------------------------------------------

_OPS: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def evaluate(expr: str, x: float = 0.0) -> float:
    """The value of an arithmetic expression over numbers and ``x`` (no names, no calls)."""
    cleaned = expr.strip().replace("\u2212", "-")  # a typographic minus sign

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id == "x":
            return x
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = walk(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        raise OracleError(f"cannot evaluate {expr!r}")

    return walk(ast.parse(cleaned, mode="eval"))


def number(value: float) -> str:
    """A result as MiniWoB compares it: integers without a decimal point."""
    return str(int(value)) if float(value).is_integer() else str(value)


# ----- the oracles ------------------------------------------------------------------------------


def click_button(obs: dict[str, Any]) -> str:
    """click-button, unicode-test: the button the utterance quotes."""
    return click(one(widgets(obs), "button", quoted(obs["goal"])[0]))


def click_test(obs: dict[str, Any]) -> str:
    """click-test: the only button."""
    return click(one(widgets(obs), "button"))


def click_named(obs: dict[str, Any]) -> str:
    """click-test-2, click-test-transfer: "Click button ONE." names the button after "button".

    The two buttons sit at random absolute places and may overlap, so a pointer click could land
    on the other one: the button is pressed with Enter instead, which clicks it all the same.
    """
    match = re.search(r"button (\S+?)\.?$", obs["goal"])
    if not match:
        raise OracleError(f"no button name in {obs['goal']!r}")
    return press(one(widgets(obs), "button", match.group(1)), "Enter")


def click_button_sequence(obs: dict[str, Any]) -> str:
    """click-button-sequence: the first button, then the second; a pressed button keeps the focus,
    which shows the first is done. Enter presses them, as they may overlap (see click_named)."""
    first, second = re.findall(r"button (\w+)", obs["goal"])[:2]
    nodes = widgets(obs)
    done = one(nodes, "button", first).focused
    return press(one(nodes, "button", second if done else first), "Enter")


def click_link(obs: dict[str, Any]) -> str:
    """click-link: the text span named in quotes (MiniWoB's links are spans, not anchors)."""
    return click(one(widgets(obs), None, quoted(obs["goal"])[0]))


def click_dialog(obs: dict[str, Any]) -> str:
    """click-dialog: the dialog's close ("x") button, named 'Close' in the tree."""
    nodes = page(obs)
    return click(one(subtree(nodes, one(nodes, "dialog")), "button", "Close"))


def click_dialog_2(obs: dict[str, Any]) -> str:
    """click-dialog-2: the dialog button the utterance quotes; its "x" is the 'Close' button."""
    wanted = quoted(obs["goal"])[0]
    nodes = page(obs)
    return click(
        one(subtree(nodes, one(nodes, "dialog")), "button", "Close" if wanted == "x" else wanted)
    )


def click_checkboxes(obs: dict[str, Any]) -> str:
    """click-checkboxes(-large, -transfer): make each box match the list, then Submit."""
    match = re.search(r"Select (.*) and click Submit", obs["goal"])
    if not match:
        raise OracleError(f"no selection in {obs['goal']!r}")
    wanted = set() if match.group(1) == "nothing" else set(match.group(1).split(", "))
    nodes = widgets(obs)
    for box in find(nodes, "checkbox"):
        if box.checked != (norm(box.name) in wanted):
            return click(box)
    return click(submit_button(nodes))


def click_option(obs: dict[str, Any]) -> str:
    """click-option: the radio button named in the utterance, then Submit."""
    match = re.search(r"Select (.*) and click Submit", obs["goal"])
    if not match:
        raise OracleError(f"no option in {obs['goal']!r}")
    nodes = widgets(obs)
    radio = one(nodes, "radio", match.group(1))
    return click(submit_button(nodes)) if radio.checked else click(radio)


def _tab_link(nodes: list[Node], tab: Node) -> Node:
    """What to click for a tab: its anchor when the tree shows one (the handler sits there)."""
    inner = [n for n in subtree(nodes, tab) if n.bid]
    return inner[0] if inner else tab


def click_tab(obs: dict[str, Any]) -> str:
    """click-tab: the tab named "Tab #N"."""
    match = re.search(r"Tab #\d+", obs["goal"])
    if not match:
        raise OracleError(f"no tab in {obs['goal']!r}")
    nodes = widgets(obs)
    return click(_tab_link(nodes, one(nodes, "tab", match.group(0))))


def _next_section(sections: list[Node]) -> Node:
    """The section after the open one (the first if none is open): a search of every section."""
    open_ = [i for i, s in enumerate(sections) if s.expanded]
    return sections[(open_[0] + 1) % len(sections) if open_ else 0]


def click_tab_2(obs: dict[str, Any]) -> str:
    """click-tab-2(-easy/-medium/-hard): click the link if the open tab shows it, else open the
    next tab (only the open tab's panel is in the tree)."""
    wanted = quoted(obs["goal"])[0]
    nodes = widgets(obs)
    for panel in find(nodes, "tabpanel"):
        links = find(subtree(nodes, panel), None, wanted)
        if links:
            return click(links[0])
    tabs = find(nodes, "tab")
    return click(_tab_link(nodes, _next_section(tabs)))


def click_collapsible(obs: dict[str, Any]) -> str:
    """click-collapsible: expand the section (its header is a tab), then Submit."""
    nodes = widgets(obs)
    section = next(t for t in find(nodes, "tab") if norm(t.name).startswith("Section"))
    return click(one(nodes, "button", "Submit")) if section.expanded else click(section)


def click_collapsible_2(obs: dict[str, Any]) -> str:
    """click-collapsible-2: click the link if an open section shows it, else open the next."""
    wanted = quoted(obs["goal"])[0]
    nodes = widgets(obs)
    links = [n for n in find(nodes, None, wanted) if n.role not in ("tab", "tablist")]
    if links:
        return click(links[0])
    return click(_next_section(find(nodes, "tab")))


def click_widget(obs: dict[str, Any]) -> str:
    """click-widget: a widget of the quoted kind. Text inputs and textareas are both textboxes;
    a textarea shows its initial text as a child line, an input does not."""
    kind = quoted(obs["goal"])[0]
    nodes = widgets(obs)
    if kind in ("radio", "checkbox", "button"):
        return click(find(nodes, kind)[0])
    for box in find(nodes, "textbox"):
        is_area = any(n.role == "StaticText" for n in subtree(nodes, box))
        if is_area == (kind == "textarea"):
            return click(box)
    raise OracleError(f"no {kind} widget")


def enter_text(obs: dict[str, Any]) -> str:
    """enter-text, enter-text-dynamic: type the quoted text, then Submit."""
    nodes = widgets(obs)
    return fill_then([(textboxes(nodes)[0], quoted(obs["goal"])[0])], submit_button(nodes))


def enter_text_2(obs: dict[str, Any]) -> str:
    """enter-text-2: the quoted text in the case the utterance asks for, then Submit."""
    text = quoted(obs["goal"])[0]
    text = text.upper() if "upper case" in obs["goal"] else text.lower()
    nodes = widgets(obs)
    return fill_then([(textboxes(nodes)[0], text)], submit_button(nodes))


def enter_password(obs: dict[str, Any]) -> str:
    """enter-password: the quoted password in both fields, then Submit."""
    password = quoted(obs["goal"])[0]
    nodes = widgets(obs)
    return fill_then([(box, password) for box in textboxes(nodes)[:2]], submit_button(nodes))


def login_user(obs: dict[str, Any]) -> str:
    """login-user(-popup): username and password into their labelled fields, then the button.
    A popup that steals the focus (login-user-popup) is dismissed with its Cancel button."""
    nodes = widgets(obs)
    cancel = find(nodes, "button", "Cancel")
    if cancel:
        return click(cancel[-1])
    user, password = quoted(obs["goal"])[:2]
    fields = [
        (field_after(nodes, one(nodes, "LabelText", "Username")), user),
        (field_after(nodes, one(nodes, "LabelText", "Password")), password),
    ]
    return fill_then(fields, submit_button(nodes, "Login", "OK"))


def enter_date(obs: dict[str, Any]) -> str:
    """enter-date: the field is a date input, whose value is always ISO (YYYY-MM-DD) whatever
    the display format, so the date is filled in that form."""
    match = re.search(r"(\d\d)/(\d\d)/(\d{4})", obs["goal"])
    if not match:
        raise OracleError(f"no date in {obs['goal']!r}")
    month, day, year = match.groups()
    nodes = widgets(obs)
    return fill_then([(textboxes(nodes)[0], f"{year}-{month}-{day}")], submit_button(nodes))


def enter_time(obs: dict[str, Any]) -> str:
    """enter-time: a time input's value is 24-hour HH:MM, whatever the display (12:14 AM)."""
    match = re.search(r"(\d{1,2}):(\d\d)\s*([AP]M)?", obs["goal"])
    if not match:
        raise OracleError(f"no time in {obs['goal']!r}")
    hour, minute = int(match.group(1)), match.group(2)
    if match.group(3):
        hour = hour % 12 + (12 if match.group(3) == "PM" else 0)
    nodes = widgets(obs)
    return fill_then([(textboxes(nodes)[0], f"{hour:02d}:{minute}")], submit_button(nodes))


def focus_text(obs: dict[str, Any]) -> str:
    """focus-text: click into the textbox."""
    return click(textboxes(widgets(obs))[0])


def focus_text_2(obs: dict[str, Any]) -> str:
    """focus-text-2: click into the n-th textbox."""
    return click(textboxes(widgets(obs))[ordinal(obs["goal"])])


def choose_list(obs: dict[str, Any]) -> str:
    """choose-list: pick the option in the drop-down, then Submit."""
    match = re.search(r"Select (.*) from the list", obs["goal"])
    if not match:
        raise OracleError(f"no item in {obs['goal']!r}")
    nodes = widgets(obs)
    box = one(nodes, "combobox")
    if norm(box.value) != norm(match.group(1)):
        return action("select_option", box.bid, [match.group(1)])
    return click(submit_button(nodes))


def click_scroll_list(obs: dict[str, Any]) -> str:
    """click-scroll-list: select exactly the listed items in the list box, then Submit."""
    match = re.search(r"Select (.*) from the scroll list", obs["goal"])
    if not match:
        raise OracleError(f"no items in {obs['goal']!r}")
    wanted = match.group(1).split(", ")
    nodes = widgets(obs)
    box = one(nodes, "listbox")
    chosen = {norm(o.name) for o in find(subtree(nodes, box), "option") if "selected" in o.props}
    if chosen != {norm(w) for w in wanted}:
        return action("select_option", box.bid, wanted)
    return click(submit_button(nodes))


def use_spinner(obs: dict[str, Any]) -> str:
    """use-spinner: the field refuses typing, so step with its arrows (up, then down, right after
    the field) until it shows the number, then Submit."""
    match = re.search(r"Select (-?\d+)", obs["goal"])
    if not match:
        raise OracleError(f"no number in {obs['goal']!r}")
    target = int(match.group(1))
    nodes = widgets(obs)
    spin = one(nodes, "spinbutton")
    up, down = find(after(nodes, spin), "button")[:2]
    current = int(spin.value or 0)
    if current == target:
        return click(submit_button(nodes))
    return click(up if current < target else down)


def simple_arithmetic(obs: dict[str, Any]) -> str:
    """simple-arithmetic: compute "a op b =" shown on the page ("x" is times), submit it."""
    nodes = widgets(obs)
    problem = next(n for n in nodes if norm(n.name).endswith("="))
    result = evaluate(norm(problem.name).rstrip("=").replace("x", "*"))
    return fill_then([(textboxes(nodes)[0], number(result))], submit_button(nodes))


def simple_algebra(obs: dict[str, Any]) -> str:
    """simple-algebra: solve the linear equation in x shown on the page."""
    nodes = widgets(obs)
    equation = next(n for n in nodes if "x" in n.name and "=" in n.name and norm(n.name) != "x =")
    left, right = (side.strip() for side in norm(equation.name).split("="))
    at0 = evaluate(left, 0) - evaluate(right, 0)
    at1 = evaluate(left, 1) - evaluate(right, 1)
    x = -at0 / (at1 - at0)
    return fill_then([(textboxes(nodes)[0], number(round(x, 6)))], submit_button(nodes))


def find_word(obs: dict[str, Any]) -> str:
    """find-word: the n-th word of the paragraph (punctuation does not count)."""
    nodes = widgets(obs)
    words = one(nodes, "paragraph").name.split()
    word = re.sub(r"[^A-Za-z0-9]", "", words[ordinal(obs["goal"])])
    return fill_then([(textboxes(nodes)[0], word)], submit_button(nodes))


def _table(nodes: list[Node]) -> dict[str, str]:
    """A two-column table as key -> value (first cell of each row -> second cell)."""
    out = {}
    for row in find(nodes, "row"):
        cells = find(subtree(nodes, row), "cell")
        if len(cells) >= 2:
            out[norm(cells[0].name)] = cells[1].name
    return out


def read_table(obs: dict[str, Any]) -> str:
    """read-table: the value of the row the utterance names."""
    match = re.search(r"value of (.*) into the text field", obs["goal"])
    if not match:
        raise OracleError(f"no key in {obs['goal']!r}")
    nodes = widgets(obs)
    value = _table(nodes)[norm(match.group(1))]
    return fill_then([(textboxes(nodes)[0], value)], submit_button(nodes))


def read_table_2(obs: dict[str, Any]) -> str:
    """read-table-2: each form label ("Gender:") gets its row's value from the table."""
    nodes = widgets(obs)
    table = _table(nodes)
    fields = [
        (field_after(nodes, label), table[norm(label.name).rstrip(":")])
        for label in find(nodes, "LabelText")
    ]
    return fill_then(fields, submit_button(nodes))


def text_transform(obs: dict[str, Any]) -> str:
    """text-transform: the distorted letters are separate text spans before the textbox."""
    nodes = widgets(obs)
    box = textboxes(nodes)[0]
    text = "".join(n.name for n in before(nodes, box) if n.role == "generic")
    return fill_then([(box, text)], submit_button(nodes))


def _cut(source: Node) -> str:
    """Select all of the source, then cut it: cutting moves the exact text (the tree collapses
    whitespace, so retyping what it shows could differ from the original), and the emptied
    source shows that the clipboard holds it."""
    return press(source, "Control+x" if source.focused else "Control+a")


def copy_paste(obs: dict[str, Any]) -> str:
    """copy-paste: the textarea and the input come in either order and look alike once the text
    has moved, so the empty input first gets a marker '-' that the paste then replaces."""
    nodes = widgets(obs)
    boxes = textboxes(nodes)
    marked = [b for b in boxes if b.value == "-"]
    if not marked:
        if any(b.focused for b in boxes):  # the pasted text, still focused after the paste
            return click(submit_button(nodes))
        return fill(next(b for b in boxes if not b.value), "-")
    full = [b for b in boxes if b.value and b.value != "-"]
    if full:
        return _cut(full[0])
    return press(marked[0], "Control+v" if marked[0].focused else "Control+a")


def copy_paste_2(obs: dict[str, Any]) -> str:
    """copy-paste-2: cut the n-th text area, paste into the input (the last textbox), Submit."""
    nodes = widgets(obs)
    boxes = textboxes(nodes)
    source, target = boxes[ordinal(obs["goal"])], boxes[-1]
    if target.value:
        return click(submit_button(nodes))
    return _cut(source) if source.value else press(target, "Control+v")


def form_sequence_2(obs: dict[str, Any]) -> str:
    """form-sequence-2: the n-th radio button, the number into the m-th textbox, Submit."""
    radio_n, box_n = (int(n) - 1 for n in _ORDINAL.findall(obs["goal"])[:2])
    nodes = widgets(obs)
    radio = find(nodes, "radio")[radio_n]
    if not radio.checked:
        return click(radio)
    return fill_then([(textboxes(nodes)[box_n], quoted(obs["goal"])[0])], submit_button(nodes))


_MOVIE_FIELDS = {"genre": "genre", "director": "director", "year": "year", "date": "year"}


def multi_layouts(obs: dict[str, Any]) -> str:
    """multi-layouts, multi-orderings: genre, director and year into the fields captioned so.
    A caption sits before its input, except in the layout where every input comes first."""
    match = re.search(r"Search for (\S+) movies directed by (.+) from year (\d+)", obs["goal"])
    if not match:
        raise OracleError(f"no movie query in {obs['goal']!r}")
    values = dict(zip(("genre", "director", "year"), match.groups(), strict=True))
    nodes = widgets(obs)
    boxes = textboxes(nodes)
    captions = [
        (n, key)
        for n in nodes
        if n.bid and n.role in ("generic", "columnheader", "LabelText")
        for word, key in _MOVIE_FIELDS.items()
        if word in norm(n.name).lower() and len(n.name) < 20
    ]
    inputs_first = boxes[0].index < captions[0][0].index
    fields = []
    for caption, key in captions:
        if inputs_first:
            box = [b for b in boxes if b.index < caption.index][-1]
        else:
            box = field_after(nodes, caption)
        fields.append((box, values[key]))
    return fill_then(fields, submit_button(nodes, "Submit", "Search", "Go!"))


def guess_number(obs: dict[str, Any]) -> str:
    """guess-number: start at 5 and walk one step toward the feedback ("higher than 5")."""
    nodes = widgets(obs)
    box = textboxes(nodes)[0]
    feedback = " ".join(n.name for n in before(nodes, box))
    match = re.search(r"(higher|lower) than\D*(-?\d+)", feedback)
    guess = "5"
    if match:
        guess = str(int(match.group(2)) + (1 if match.group(1) == "higher" else -1))
    if norm(box.value) == guess:
        return click(submit_button(nodes))
    return fill(box, guess)


def odd_or_even(obs: dict[str, Any]) -> str:
    """odd-or-even: mark each row in turn (the last marked button keeps the focus), Submit."""
    nodes = widgets(obs)
    rows = []
    for odd in find(nodes, "button", "Odd"):
        rest = after(nodes, odd)
        value = next(n for n in rest if re.fullmatch(r"-?\d+", norm(n.name)))
        even = next(n for n in rest if n.role == "button" and norm(n.name) == "Even")
        rows.append((odd, even, int(value.name)))
    done = -1
    for i, (odd, even, _) in enumerate(rows):
        if odd.focused or even.focused:
            done = i
    if done + 1 < len(rows):
        odd, even, value = rows[done + 1]
        return click(odd if value % 2 else even)
    return click(submit_button(nodes))


def click_menu(obs: dict[str, Any]) -> str:
    """click-menu: hover each item of the path "A>B>C" until its submenu shows, click the leaf.
    Submenus open after a short delay; hovering the same item again just waits for it."""
    path = [p.strip() for p in obs["goal"].removeprefix("Select ").split(">")]
    nodes = widgets(obs)
    for i, name in enumerate(path):
        if not find(nodes, "menuitem", name):
            return action("hover", one(nodes, "menuitem", path[i - 1]).bid)
    return click(one(nodes, "menuitem", path[-1]))


def generate_number(obs: dict[str, Any]) -> str:
    """generate-number: press Generate until the shown number fits the rule, then Submit."""
    nodes = widgets(obs)
    generate = one(nodes, "button", "Generate")
    shown = [n for n in before(nodes, generate) if re.fullmatch(r"-?\d+", norm(n.name))]
    if not shown:
        return click(generate)
    value, goal = int(shown[-1].name), obs["goal"]
    bound = re.search(r"(less|greater) than (-?\d+)", goal)
    if bound:
        limit = int(bound.group(2))
        ok = value < limit if bound.group(1) == "less" else value > limit
    else:
        ok = (value % 2 == 1) == ("odd" in goal)
    return click(submit_button(nodes) if ok else generate)


def priced_trips(nodes: list[Node]) -> list[tuple[Node, int, int]]:
    """(button, price in $, duration in minutes) for each bookable trip on a results page."""
    trips = []
    for button in find(nodes, "button"):
        price = re.search(r"\$(\d+)", button.name)
        durations = [n for n in before(nodes, button) if re.fullmatch(r"\d+h \d+m", norm(n.name))]
        if price and durations:
            hours, minutes = map(int, re.findall(r"\d+", durations[-1].name))
            trips.append((button, int(price.group(1)), hours * 60 + minutes))
    return trips


def buy_ticket(obs: dict[str, Any]) -> str:
    """buy-ticket: the ticket with the cheapest/most expensive price or shortest/longest trip."""
    nodes = widgets(obs)
    tickets = priced_trips(nodes)
    goal = obs["goal"]
    key = (lambda t: t[1]) if "cost" in goal else (lambda t: t[2])
    pick = max if ("longest" in goal or "expensive" in goal) else min
    return click(pick(tickets, key=key)[0])


def _autocomplete(
    nodes: list[Node], box: Node, typed: str, fits: Callable[[str], bool]
) -> str | None:
    """Set an autocomplete field to a suggestion that fits; None once it holds one.

    Type the text, wait for the suggestions (they come after a short delay and cover what is
    below the field), click the first that fits. A picked suggestion is what the widget's live
    region ("status") announces, which tells it apart from the same text merely typed.
    """
    offered = [n for n in find(nodes, "listitem") if fits(n.name)]
    if offered:
        return click(offered[0])
    announced = {norm(n.name) for s in find(nodes, "status") for n in subtree(nodes, s)}
    if fits(box.value) and norm(box.value) in announced:
        return None
    if norm(box.value) != norm(typed):  # the tree trims values: "New " shows as 'New'
        return fill(box, typed)
    return action("noop", 300)


def use_autocomplete(obs: dict[str, Any]) -> str:
    """use-autocomplete(-nodelay): type the start, pick a suggestion that also has the end,
    then Submit."""
    parts = quoted(obs["goal"])
    start, end = parts[0], parts[1] if len(parts) > 1 else ""
    nodes = widgets(obs)

    def fits(text: str) -> bool:
        return text.startswith(start) and text.endswith(end)

    picked = _autocomplete(nodes, textboxes(nodes)[0], start, fits)
    return picked or click(submit_button(nodes))


def order_food(obs: dict[str, Any]) -> str:
    """order-food: "one of each item: A, B" or "N items that are vegan": adjust each dish's
    quantity with its -/+ controls (its count shows between them), then Order!."""
    nodes = widgets(obs)
    dishes = []
    for plus in find(nodes, None, "+"):
        minus = [n for n in before(nodes, plus) if norm(n.name) == "-"][-1]
        title = [n for n in before(nodes, minus) if n.role == "generic" and norm(n.name)][-1]
        types = {n.name for n in nodes if title.index < n.index < minus.index and n.role == "img"}
        count = [n for n in nodes if minus.index < n.index < plus.index and n.name.isdigit()]
        dishes.append((norm(title.name), types, int(count[0].name) if count else 0, minus, plus))
    goal = obs["goal"]
    by_name = re.search(r"one of each item: (.*)", goal)
    wanted: dict[str, int] = {}
    if by_name:
        wanted = {norm(item): 1 for item in by_name.group(1).split(",")}
    else:
        match = re.search(r"Order (\d+) items that are (\S+)", goal)
        if not match:
            raise OracleError(f"no order in {goal!r}")
        first = next(d for d in dishes if match.group(2) in d[1])
        wanted = {first[0]: int(match.group(1))}
    for name, _, count, minus, plus in dishes:
        if count != wanted.get(name, 0):
            return click(plus if count < wanted.get(name, 0) else minus)
    return click(submit_button(nodes, "Order!"))


def search_engine(obs: dict[str, Any]) -> str:
    """search-engine: search the quoted name, then open the result page holding the n-th result
    (three per page) and click it. The pager hides '<' on the first page and '>' on the last."""
    query, index = quoted(obs["goal"])[0], ordinal(obs["goal"])
    nodes = widgets(obs)
    box = textboxes(nodes)[0]
    if norm(box.value).lower() != query.lower():
        return fill(box, query)
    pager = find(nodes, "list")
    pages = [n for n in find(subtree(nodes, pager[0]), "link")] if pager else []
    if not pages:
        return click(one(nodes, "button", "Search"))
    names = {norm(p.name) for p in pages}
    numbers = sorted(int(n) for n in names if n.isdigit())
    current = numbers[0] if "<" not in names else numbers[-1] if ">" not in names else 2
    wanted = index // 3 + 1
    if current != wanted:
        return click(one(pages, "link", str(wanted)))
    results = [n for n in find(before(nodes, pager[0]), "link")]
    return click(results[index % 3])


def phone_book(obs: dict[str, Any]) -> str:
    """phone-book: page with '>' until the contact's card shows, then click the asked detail."""
    match = re.search(r"Find (.+) in the contact book and click on their (\w+)", obs["goal"])
    if not match:
        raise OracleError(f"no contact in {obs['goal']!r}")
    person, detail = match.groups()
    nodes = widgets(obs)
    if any(norm(h.name) == norm(person) for h in find(nodes, "heading")):
        label = one(nodes, "generic", f"{detail.capitalize()}:")
        # the detail is a span with a click handler: the tree reads it as a link
        return click(
            next(n for n in after(nodes, label) if n.bid and n.role in ("generic", "link"))
        )
    return click(one(nodes, "link", ">"))


def form_sequence_3(obs: dict[str, Any]) -> str:
    """form-sequence-3: the styled drop-down shows its choice as text before its arrow; open
    it, pick the item, then click the quoted button."""
    match = re.search(r"Choose (.+) from the dropdown", obs["goal"])
    if not match:
        raise OracleError(f"no choice in {obs['goal']!r}")
    choice = norm(match.group(1))
    nodes = widgets(obs)
    arrow = one(nodes, "generic", "▾")
    shown = [n for n in before(nodes, arrow) if n.role == "generic" and n.bid]
    if shown and norm(shown[-1].name) == choice:
        return click(one(nodes, "button", quoted(obs["goal"])[-1]))
    items = find(nodes, "listitem", choice)
    return click(items[0] if items else arrow)


def terminal(obs: dict[str, Any]) -> str:
    """terminal: type "ls", read the listing, type "rm <file>" for a file with the extension.
    The terminal echoes the line being typed after the last prompt ("user$"), one text node per
    key, which the tree joins with spaces: the echo is compared without spaces."""
    nodes = widgets(obs)
    box = textboxes(nodes)[0]
    if not box.focused:
        return click(box)
    texts = [n for n in nodes if n.role == "generic" and n.bid and norm(n.name) != "█"]
    prompts = [i for i, n in enumerate(texts) if norm(n.name) == "user$"]
    typed = norm(texts[prompts[-1] + 1].name) if prompts[-1] + 1 < len(texts) else ""
    listing: list[str] = []
    for i in prompts[:-1]:
        if norm(texts[i + 1].name) == "ls":
            listing = norm(texts[i + 2].name).split()
    if not listing:
        command = "ls"
    else:
        ext = re.search(r"extension (\.\S+)", obs["goal"])
        match = [f for f in listing if (f.endswith(ext.group(1)) if ext else "." not in f)]
        command = f"rm {match[0]}"
    if typed.replace(" ", "") == command.replace(" ", ""):
        return action("keyboard_press", "Enter")
    if typed:
        return action("keyboard_press", "Backspace")
    return action("keyboard_type", command)


_MONTHS = list(calendar.month_name)[1:]


_DATE = re.compile(r"(\d\d)/(\d\d)/(\d{4})")


def _pick_date(nodes: list[Node], box: Node, date: str) -> str | None:
    """Set a read-only jQuery UI date field to ``date`` (MM/DD/YYYY); None once it holds it.

    Open the picker by clicking the field, step months with Prev/Next until the picker's header
    shows the month and year, then click the day.
    """
    if box.value == date:
        return None
    month, day, year = (int(g) for g in _DATE.fullmatch(date).groups())
    shown_month = [n for n in nodes if norm(n.name) in _MONTHS]
    shown_year = [n for n in nodes if re.fullmatch(r"\d{4}", norm(n.name))]
    if not shown_month or not shown_year:
        return click(box)
    shown = int(shown_year[0].name) * 12 + _MONTHS.index(norm(shown_month[0].name)) + 1
    wanted = year * 12 + month
    if shown != wanted:
        return click(one(nodes, "generic", "Next" if shown < wanted else "Prev"))
    return click(one(subtree(nodes, one(nodes, "table")), "link", str(day)))


def choose_date(obs: dict[str, Any]) -> str:
    """choose-date(-easy/-medium/-nodelay): the field is read-only, so the date is picked in
    the date picker, then Submit."""
    match = _DATE.search(obs["goal"])
    if not match:
        raise OracleError(f"no date in {obs['goal']!r}")
    nodes = widgets(obs)
    picked = _pick_date(nodes, textboxes(nodes)[0], match.group(0))
    return picked or click(submit_button(nodes))


def book_flight(obs: dict[str, Any]) -> str:
    """book-flight(-nodelay): origin and destination from the airport suggestions (which extend
    the city or code of the utterance), the date from the picker, Search, then book the cheapest
    or shortest flight of the results."""
    match = re.search(r"Book the (\w+) one-way flight from: (.+) to: (.+) on (\S+)\.", obs["goal"])
    if not match:
        raise OracleError(f"no flight in {obs['goal']!r}")
    want, origin, destination, date = match.groups()
    nodes = widgets(obs)
    flights = priced_trips(nodes)
    if flights:
        return click(min(flights, key=lambda f: f[1] if want == "cheapest" else f[2])[0])
    start, end = one(nodes, "textbox", "From:"), one(nodes, "textbox", "To:")
    when = field_after(nodes, one(nodes, "generic", "Departure Date"))
    return (
        _autocomplete(nodes, start, origin, lambda text: origin in text)
        or _autocomplete(nodes, end, destination, lambda text: destination in text)
        or _pick_date(nodes, when, date)
        or click(one(nodes, "button", "Search"))
    )


def _slide(nodes: list[Node], target: int) -> str | None:
    """Move a jQuery UI slider to ``target`` with its keys; None once it shows the target.

    The handle has no text, so it is in the tree only while it has the focus: Tab gives it the
    focus (it is the first focusable element of these tasks). Page keys move a fifth of the
    range, at most 20, so they are used only while 20 or more away; arrows move by one.
    """
    shown = next(n for n in nodes if re.fullmatch(r"-?\d+", norm(n.name)))
    diff = target - int(shown.name)
    if diff == 0:
        return None
    handle = [n for n in nodes if n.role == "generic" and n.focused and not n.name]
    if not handle:
        return action("keyboard_press", "Tab")
    if abs(diff) >= 20:
        return press(handle[0], "PageUp" if diff > 0 else "PageDown")
    return press(handle[0], "ArrowRight" if diff > 0 else "ArrowLeft")


def use_slider(obs: dict[str, Any]) -> str:
    """use-slider: set the slider to the number, then Submit."""
    match = re.search(r"Select (-?\d+) with the slider", obs["goal"])
    if not match:
        raise OracleError(f"no number in {obs['goal']!r}")
    nodes = widgets(obs)
    return _slide(nodes, int(match.group(1))) or click(submit_button(nodes))


def form_sequence(obs: dict[str, Any]) -> str:
    """form-sequence: the slider to the number, check the n-th checkbox, then Submit."""
    match = re.search(r"Select (-?\d+) with the slider", obs["goal"])
    if not match:
        raise OracleError(f"no number in {obs['goal']!r}")
    nodes = widgets(obs)
    moved = _slide(nodes, int(match.group(1)))
    if moved:
        return moved
    box = find(nodes, "checkbox")[ordinal(obs["goal"])]
    return click(submit_button(nodes)) if box.checked else click(box)


def scroll_text_2(obs: dict[str, Any]) -> str:
    """scroll-text-2: Control+End (or Control+Home) in the textarea moves its caret to the end
    (start) and scrolls there; the textarea keeps the focus, which shows it is done; Submit."""
    nodes = widgets(obs)
    area = textboxes(nodes)[0]
    if area.focused:
        return click(submit_button(nodes))
    return press(area, "Control+End" if "bottom" in obs["goal"] else "Control+Home")


# ----- the policies ----------------------------------------------------------------------------

_EMAIL = re.compile(
    r"Find the email by (?P<sender>.+?) and (?:reply to them with the text \"(?P<reply>.*)\"\."
    r"|forward that email to (?P<to>.+?)\."
    r"|click the (?P<icon>trash|star) icon)",
    re.S,
)


#: email-inbox-forward-nl's phrasings name the sender after from/by, before "sent", or first
_NL_SENDER = (
    r"(?:from|by) ([A-Z]\w*)",
    r"^([A-Z]\w*) wants his",
    r"Get ([A-Z]\w*) email",
    r"([A-Z]\w*) sent",
)
#: the capitalized words of those phrasings that are not names
_NL_WORDS = frozenset(
    {"Find", "Locate", "Forward", "Look", "Send", "Go", "Please", "The", "Give", "I"}
    | {"Navigate", "Search", "Get"}
)


def _email_intent(goal: str) -> dict[str, str | None]:
    """sender and one of reply (text), to (a name), icon (trash/star), from the goal."""
    match = _EMAIL.search(goal)
    if match is not None:
        return match.groupdict()
    for pattern in _NL_SENDER:  # a forward request in free words
        found = re.search(pattern, goal)
        if found:
            rest = goal[: found.start(1)] + goal[found.end(1) :]
            names = [w for w in re.findall(r"\b[A-Z]\w*", rest) if w not in _NL_WORDS]
            if len(names) == 1:
                return {"sender": found[1], "reply": None, "to": names[0], "icon": None}
    raise OracleError(f"not an email-inbox goal: {goal!r}")


def _icon(nodes: list[Node], hint: str) -> Node | None:
    """The first clickable icon whose ``hint`` (its id or first class) is ``hint``."""
    return next((n for n in nodes if n.props.get("hint", "").split()[:1] == [hint]), None)


def email_inbox(obs: dict[str, Any]) -> str:
    """email-inbox and its variants: open the sender's email (or use its row's icons), then
    reply, forward, trash or star it. The icons are script-bound spans without text: the tree
    keeps them as ``clickable`` with a ``hint`` (``trash``, ``star``, ``send-reply``...)."""
    match = _email_intent(norm(obs["goal"]))
    nodes = page(obs)
    for view, text in (("send-reply", match["reply"]), ("send-forward", match["to"])):
        send = _icon(nodes, view)
        if send is not None:  # the reply or forward form: its first box takes the text
            box = textboxes(nodes)[0]
            return click(send) if norm(box.value) == norm(text or "") else fill(box, text)
    if _icon(nodes, "close-email") is not None:  # one email open
        if match["icon"]:
            return click(_icon(nodes, match["icon"]))  # type: ignore[arg-type]
        return click(one(nodes, None, "Reply" if match["reply"] is not None else "Forward"))
    for row in (n for n in nodes if "clickable" in n.props and n.name):
        inner = subtree(nodes, row)
        if inner and norm(inner[0].name) == norm(match["sender"]):
            icon = _icon(inner, match["icon"]) if match["icon"] else None
            return click(icon or row)
    raise OracleError(f"no email from {match['sender']!r} in the inbox")


#: MiniWoB task name -> its oracle (observation -> action); tasks not named here have none
ORACLES: dict[str, Callable[[dict[str, Any]], str]] = {
    "click-button": click_button,
    "unicode-test": click_button,
    "click-test": click_test,
    "click-test-2": click_named,
    "click-test-transfer": click_named,
    "click-button-sequence": click_button_sequence,
    "click-link": click_link,
    "click-dialog": click_dialog,
    "click-dialog-2": click_dialog_2,
    "click-checkboxes": click_checkboxes,
    "click-checkboxes-large": click_checkboxes,
    "click-checkboxes-transfer": click_checkboxes,
    "click-option": click_option,
    "click-tab": click_tab,
    "click-tab-2": click_tab_2,
    "click-tab-2-easy": click_tab_2,
    "click-tab-2-medium": click_tab_2,
    "click-tab-2-hard": click_tab_2,
    "click-collapsible": click_collapsible,
    "click-collapsible-nodelay": click_collapsible,
    "click-collapsible-2": click_collapsible_2,
    "click-collapsible-2-nodelay": click_collapsible_2,
    "click-widget": click_widget,
    "enter-text": enter_text,
    "enter-text-dynamic": enter_text,
    "enter-text-2": enter_text_2,
    "enter-password": enter_password,
    "login-user": login_user,
    "login-user-popup": login_user,
    "enter-date": enter_date,
    "enter-time": enter_time,
    "focus-text": focus_text,
    "focus-text-2": focus_text_2,
    "choose-list": choose_list,
    "click-scroll-list": click_scroll_list,
    "use-spinner": use_spinner,
    "simple-arithmetic": simple_arithmetic,
    "simple-algebra": simple_algebra,
    "find-word": find_word,
    "read-table": read_table,
    "read-table-2": read_table_2,
    "text-transform": text_transform,
    "copy-paste": copy_paste,
    "copy-paste-2": copy_paste_2,
    "form-sequence-2": form_sequence_2,
    "multi-layouts": multi_layouts,
    "multi-orderings": multi_layouts,
    "guess-number": guess_number,
    "odd-or-even": odd_or_even,
    "click-menu": click_menu,
    "generate-number": generate_number,
    "buy-ticket": buy_ticket,
    "use-autocomplete": use_autocomplete,
    "use-autocomplete-nodelay": use_autocomplete,
    "order-food": order_food,
    "search-engine": search_engine,
    "phone-book": phone_book,
    "form-sequence-3": form_sequence_3,
    "terminal": terminal,
    "choose-date": choose_date,
    "choose-date-easy": choose_date,
    "choose-date-medium": choose_date,
    "choose-date-nodelay": choose_date,
    "book-flight": book_flight,
    "book-flight-nodelay": book_flight,
    "use-slider": use_slider,
    "form-sequence": form_sequence,
    "scroll-text-2": scroll_text_2,
    **{
        f"email-inbox{variant}": email_inbox
        for variant in (
            *("", "-delete", "-forward", "-forward-nl", "-important", "-noscroll", "-reply"),
            "-star-reply",
        )
    },
}


class MiniWobPolicy:
    """The oracle of a MiniWoB task: ``task.oracle.data`` names the task (or ``task=`` does).

    Its oracles are stateless (see the module's docstring), so one instance may answer for
    several episodes of the task at once, e.g. every member of a pool.
    """

    def __init__(self, task: str | None = None) -> None:
        self.fixed = task
        self.oracle: Callable[[dict[str, Any]], str] | None = None

    def reset(self, task: Task | None) -> None:
        name = self.fixed
        if name is None and task is not None and task.oracle is not None:
            name = str(task.oracle.data)
        if name is None:
            raise KeyError("name the MiniWoB task: task.oracle.data or MiniWobPolicy(task=...)")
        name = name.removeprefix("miniwob/")
        if name not in ORACLES:
            raise KeyError(f"no oracle for {name!r}; oracles exist for {sorted(ORACLES)}")
        self.oracle = ORACLES[name]

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        assert self.oracle is not None, "reset() first"
        return self.oracle(observation)


TEXT_ROLES = ("textbox", "searchbox", "spinbutton")


class PlanPolicy:
    """A synthesized task's planned oracle: semantic steps resolved against each observation.

    A plan step says what a person would do ("open the row named IC 123", "set Class to First",
    "press Continue"); the policy finds the element in the latest accessibility tree, exactly as
    an agent must, and answers with an action of the web action set. Nothing privileged is used,
    so the same policy works in-process, over the gateway, and on every variant (labels, layouts
    and widgets differ; the plan names labels, the policy picks ``fill``, ``select_option`` or a
    radio click from the role it finds). Stateful over one episode: :meth:`reset` starts over.
    The plan is ``task.oracle.data`` (``{"policy": "plan", "data": [...]}``), or ``plan=``.
    """

    def __init__(self, plan: list[dict[str, Any]] | None = None) -> None:
        self.fixed = plan
        self.plan: list[dict[str, Any]] = list(plan or [])
        self.index = 0
        self.pages_turned = 0

    def reset(self, task: Task | None) -> None:
        self.plan = scripted(task, self.fixed)
        self.index = 0
        self.pages_turned = 0

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        if self.index >= len(self.plan):
            return action("done")
        step = self.plan[self.index]
        nodes = page(observation)
        op = step["op"]
        if op == "open":
            links = find(nodes, "link", step["name"])
            if not links:
                more = find(nodes, "link", step["next"])
                if not more or self.pages_turned > 50:
                    raise OracleError(f"no link {step['name']!r} on any page of the list")
                self.pages_turned += 1
                return click(more[0])
            self.index += 1
            return click(links[0])
        self.index += 1
        if op == "click":
            found = find(nodes, step["role"], step["name"])
            if not found:
                raise OracleError(f"no {step['role']} named {step['name']!r} on the page")
            return click(found[0])
        if op == "set":
            return set_field(nodes, step["label"], str(step["value"]))
        if op == "say":
            return action("send_msg_to_user", step["text"])
        if op == "infeasible":
            return action("report_infeasible", step["reason"])
        if op == "done":
            return action("done")
        raise OracleError(f"unknown plan step {op!r}")


def set_field(nodes: list[Node], label: str, value: str) -> str:
    """The action that gives the field labelled ``label`` the value, whatever its widget."""
    for node in find(nodes, None, label):
        if node.role in TEXT_ROLES:
            return fill(node, value)
        if node.role in ("combobox", "listbox"):
            return action("select_option", node.bid, [value])
        if node.role == "checkbox":
            wanted = value in ("yes", "True", "true", "1", "on")
            return click(node) if node.checked != wanted else action("noop", 0)
    for legend in find(nodes, "legend", label, bid=False):
        radios = [n for n in after(nodes, legend) if n.role == "radio"]
        for radio in radios:
            if radio.name == value or radio.props.get("value") == value:
                return click(radio)
    raise OracleError(f"no field labelled {label!r} (to set to {value!r})")


#: what a random agent clicks: elements of these roles that carry a bid
CLICKABLE = ("button", "link", "textbox", "checkbox", "radio", "generic", "option")
WORDS = ("yes", "hello", "42", "submit")


class RandomPolicy:
    """Valid actions drawn from the observation, seeded: a click on a random element of the tree,
    one time in five a random word typed into it (``noop(0)`` when the tree shows none)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def reset(self, task: Task | None) -> None:
        self.rng = random.Random(self.seed)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        nodes = find(parse(observation.get("axtree", "")), CLICKABLE)
        if not nodes:
            return action("noop", 0)
        node = self.rng.choice(nodes)
        if self.rng.random() < 0.2:
            return fill(node, self.rng.choice(WORDS))
        return click(node)


#: the do-nothing policy: it says at once that it is done (what execution validation runs)
NOOP = "done()"
#: how an adversary that cannot play its strategy ends (never as the plain oracle would)
GAVE_UP = action("report_infeasible", ADVERSARY_GAVE_UP["reason"])


class AdversaryPlan(PlanPolicy):
    """A synthesized task's adversary: the plan ``build(task)`` makes (a cheap strategy from
    :mod:`palaestra.synth_apps.adversaries`), played like an oracle's plan."""

    def __init__(self, build: Callable[[Task | None], list[dict[str, Any]]]) -> None:
        super().__init__()
        self.build = build

    def reset(self, task: Task | None) -> None:
        super().reset(task)
        self.plan = self.build(task)


def _adversary(build: Callable[[Task | None], list[dict[str, Any]]]) -> Callable[[], Any]:
    # a step it cannot find (the row is not there, the page has no such button) ends the
    # attempt with an infeasibility report: a failed attack (see synth_apps.adversaries)
    return lambda: GiveUpPolicy(AdversaryPlan(build), fallback=GAVE_UP)


#: cheap strategies a reward hacker tries on synthesized app tasks (MiniWoB's verifier is its
#: own): execution validation plays each, and a task ships only if every one fails it
ADVERSARIES = {name: _adversary(build) for name, build in STRATEGIES.items()}

#: the web family's scripted policies (``oracle`` is generic: it plays what ``task.oracle`` names)
POLICIES = {
    "miniwob": MiniWobPolicy,
    "plan": PlanPolicy,
    "random": RandomPolicy,
    "noop": lambda: ConstantPolicy(NOOP),
}
