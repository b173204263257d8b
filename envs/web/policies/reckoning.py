"""MiniWoB's tasks whose answer is worked out from the page: arithmetic, algebra, a word or a
table cell read, distorted text, a number guessed from feedback, odd or even."""

from __future__ import annotations

import re
from typing import Any

from palaestra.envs.runtimes import axtree as ax
from palaestra.envs.web.policies.reading import evaluate, number, ordinal, submit_button, widgets


def simple_arithmetic(obs: dict[str, Any]) -> str:
    """simple-arithmetic: compute "a op b =" shown on the page ("x" is times), submit it."""
    nodes = widgets(obs)
    problem = next(n for n in nodes if ax.norm(n.name).endswith("="))
    result = evaluate(ax.norm(problem.name).rstrip("=").replace("x", "*"))
    return ax.fill_then([(ax.textboxes(nodes)[0], number(result))], submit_button(nodes))


def simple_algebra(obs: dict[str, Any]) -> str:
    """simple-algebra: solve the linear equation in x shown on the page."""
    nodes = widgets(obs)
    equation = next(
        n for n in nodes if "x" in n.name and "=" in n.name and ax.norm(n.name) != "x ="
    )
    left, right = (side.strip() for side in ax.norm(equation.name).split("="))
    at0 = evaluate(left, 0) - evaluate(right, 0)
    at1 = evaluate(left, 1) - evaluate(right, 1)
    x = -at0 / (at1 - at0)
    return ax.fill_then([(ax.textboxes(nodes)[0], number(round(x, 6)))], submit_button(nodes))


def find_word(obs: dict[str, Any]) -> str:
    """find-word: the n-th word of the paragraph (punctuation does not count)."""
    nodes = widgets(obs)
    words = ax.one(nodes, "paragraph").name.split()
    word = re.sub(r"[^A-Za-z0-9]", "", words[ordinal(obs["goal"])])
    return ax.fill_then([(ax.textboxes(nodes)[0], word)], submit_button(nodes))


def _table(nodes: list[ax.Node]) -> dict[str, str]:
    """A two-column table as key -> value (first cell of each row -> second cell)."""
    out = {}
    for row in ax.find(nodes, "row"):
        cells = ax.find(ax.subtree(nodes, row), "cell")
        if len(cells) >= 2:
            out[ax.norm(cells[0].name)] = cells[1].name
    return out


def read_table(obs: dict[str, Any]) -> str:
    """read-table: the value of the row the utterance names."""
    match = re.search(r"value of (.*) into the text field", obs["goal"])
    if not match:
        raise ax.OracleError(f"no key in {obs['goal']!r}")
    nodes = widgets(obs)
    value = _table(nodes)[ax.norm(match.group(1))]
    return ax.fill_then([(ax.textboxes(nodes)[0], value)], submit_button(nodes))


def read_table_2(obs: dict[str, Any]) -> str:
    """read-table-2: each form label ("Gender:") gets its row's value from the table."""
    nodes = widgets(obs)
    table = _table(nodes)
    fields = [
        (ax.field_after(nodes, label), table[ax.norm(label.name).rstrip(":")])
        for label in ax.find(nodes, "LabelText")
    ]
    return ax.fill_then(fields, submit_button(nodes))


def text_transform(obs: dict[str, Any]) -> str:
    """text-transform: the distorted letters are separate text spans before the textbox."""
    nodes = widgets(obs)
    box = ax.textboxes(nodes)[0]
    text = "".join(n.name for n in ax.before(nodes, box) if n.role == "generic")
    return ax.fill_then([(box, text)], submit_button(nodes))


def guess_number(obs: dict[str, Any]) -> str:
    """guess-number: start at 5 and walk one step toward the feedback ("higher than 5")."""
    nodes = widgets(obs)
    box = ax.textboxes(nodes)[0]
    feedback = " ".join(n.name for n in ax.before(nodes, box))
    match = re.search(r"(higher|lower) than\D*(-?\d+)", feedback)
    guess = "5"
    if match:
        guess = str(int(match.group(2)) + (1 if match.group(1) == "higher" else -1))
    if ax.norm(box.value) == guess:
        return ax.click(submit_button(nodes))
    return ax.fill(box, guess)


def odd_or_even(obs: dict[str, Any]) -> str:
    """odd-or-even: mark each row in turn (the last marked button keeps the focus), Submit."""
    nodes = widgets(obs)
    rows = []
    for odd in ax.find(nodes, "button", "Odd"):
        rest = ax.after(nodes, odd)
        shown = next(n for n in rest if re.fullmatch(r"-?\d+", ax.norm(n.name)))
        even = next(n for n in rest if n.role == "button" and ax.norm(n.name) == "Even")
        rows.append((odd, even, int(shown.name)))
    done = -1
    for i, (odd, even, _) in enumerate(rows):
        if odd.focused or even.focused:
            done = i
    if done + 1 < len(rows):
        odd, even, value = rows[done + 1]
        return ax.click(odd if value % 2 else even)
    return ax.click(submit_button(nodes))


def generate_number(obs: dict[str, Any]) -> str:
    """generate-number: press Generate until the shown number fits the rule, then Submit."""
    nodes = widgets(obs)
    generate = ax.one(nodes, "button", "Generate")
    shown = [n for n in ax.before(nodes, generate) if re.fullmatch(r"-?\d+", ax.norm(n.name))]
    if not shown:
        return ax.click(generate)
    value, goal = int(shown[-1].name), obs["goal"]
    bound = re.search(r"(less|greater) than (-?\d+)", goal)
    if bound:
        limit = int(bound.group(2))
        ok = value < limit if bound.group(1) == "less" else value > limit
    else:
        ok = (value % 2 == 1) == ("odd" in goal)
    return ax.click(submit_button(nodes) if ok else generate)
