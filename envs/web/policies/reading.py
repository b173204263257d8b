"""Reading a MiniWoB page as an agent does: the task's widgets after the utterance, the
utterance's quoted words and ordinals, its submit button, and arithmetic without ``eval``.

Every oracle of :mod:`palaestra.envs.web.policies` reads the page through these.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from typing import Any

from palaestra.envs.runtimes.axtree import Node, OracleError, after, norm, page, subtree

_QUOTED = re.compile(r'"([^"]*)"')
ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")


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
    match = ORDINAL.search(goal)
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
    raise OracleError(f"no submit button named {' or '.join(names)}")


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
