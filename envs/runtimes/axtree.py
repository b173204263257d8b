"""Reading the web family's accessibility-tree text and writing web actions.

Every scripted policy that acts on a page the way an agent does (MiniWoB's oracles, the planned
oracles of synthesized apps) reads the same observation: the ``axtree`` text of ``observe.js``,
one element per line (tabs for depth, ``[bid]``, role, quoted name, properties). This module
parses it into :class:`Node` lines, finds elements by role and name, and writes call strings of
the web action set. Policies of other families share its text matching (:func:`norm`) and its
error (:class:`OracleError`), so it lives below the families.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# ----- reading the tree -------------------------------------------------------------------------

#: one line of observe.js' output: tabs, optional ``[bid]``, role, optional quoted name, props
_LINE = re.compile(r"^(\t*)(?:\[([^\]]+)\] )?(\S+)(?: '((?:[^'\\]|\\.)*)')?(?:, (.*))?$")
#: one property after the name: ``value='...'``, ``checked=true``, or a bare flag like ``focused``
_PROP = re.compile(r"(\w+)(?:=('(?:[^'\\]|\\.)*'|[^,]*))?(?:, |$)")


class OracleError(RuntimeError):
    """The tree does not hold what the oracle expects (the task or the observation changed)."""


@dataclass(frozen=True)
class Node:
    """An element (or text) line of the tree; ``index`` is its position in document order."""

    index: int
    depth: int
    bid: str | None
    role: str
    name: str
    props: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def value(self) -> str:
        return self.props.get("value", "")

    @property
    def checked(self) -> bool:
        return self.props.get("checked") == "true"

    @property
    def focused(self) -> bool:
        return "focused" in self.props

    @property
    def expanded(self) -> bool:
        return self.props.get("expanded") == "true"


def _unquote(text: str) -> str:
    return text.replace("\\'", "'")


def parse(axtree: str) -> list[Node]:
    """The tree text as nodes; lines that do not look like tree lines are skipped."""
    nodes: list[Node] = []
    for line in axtree.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        tabs, bid, role, name, rest = match.groups()
        props = {}
        for prop in _PROP.finditer(rest or ""):
            if prop.group(1):
                raw = prop.group(2) or ""
                props[prop.group(1)] = _unquote(raw[1:-1]) if raw.startswith("'") else raw
        nodes.append(Node(len(nodes), len(tabs), bid, role, _unquote(name or ""), props))
    return nodes


def norm(text: str) -> str:
    """Text as compared: whitespace collapsed, invisible control characters dropped."""
    kept = "".join(c for c in text if unicodedata.category(c) != "Cc")
    return " ".join(kept.split())


def find(
    nodes: Iterable[Node],
    role: str | Iterable[str] | None = None,
    name: str | None = None,
    *,
    bid: bool = True,
) -> list[Node]:
    """Nodes with the role (or one of the roles) and exactly the name, in document order."""
    roles = {role} if isinstance(role, str) else set(role) if role is not None else None
    wanted = norm(name) if name is not None else None
    return [
        n
        for n in nodes
        if (roles is None or n.role in roles)
        and (wanted is None or norm(n.name) == wanted)
        and (n.bid is not None or not bid)
    ]


def one(
    nodes: Iterable[Node], role: str | Iterable[str] | None = None, name: str | None = None
) -> Node:
    """The first node with the role and name; an OracleError if there is none."""
    found = find(nodes, role, name)
    if not found:
        raise OracleError(f"no {role or 'element'} named {name!r} in the tree")
    return found[0]


def after(nodes: Iterable[Node], anchor: Node) -> list[Node]:
    """Every node after ``anchor`` in document order."""
    return [n for n in nodes if n.index > anchor.index]


def before(nodes: Iterable[Node], anchor: Node) -> list[Node]:
    """Every node before ``anchor`` in document order."""
    return [n for n in nodes if n.index < anchor.index]


def subtree(nodes: Iterable[Node], root: Node) -> list[Node]:
    """The nodes nested under ``root`` (the deeper lines right after it)."""
    out = []
    for node in after(nodes, root):
        if node.depth <= root.depth:
            break
        out.append(node)
    return out


#: MiniWoB's score panel under every task: a caption and its value, both left out
_FOOTER = {"Last reward:", "Last 10 average:", "Time left:", "Episodes done:"}


def page(obs: dict[str, Any]) -> list[Node]:
    """The page's nodes, without MiniWoB's score panel (a page without one: all of them)."""
    out, skip = [], False
    for node in parse(obs.get("axtree", "")):
        if node.role == "LabelText" and norm(node.name) in _FOOTER:
            skip = True
        elif skip:
            skip = False
        else:
            out.append(node)
    return out


# ----- writing actions --------------------------------------------------------------------------


def action(name: str, *args: Any) -> str:
    """A call string of the action set; arguments are Python literals, so any text is safe."""
    return f"{name}({', '.join(repr(a) for a in args)})"


def click(node: Node) -> str:
    return action("click", node.bid)


def fill(node: Node, value: str) -> str:
    return action("fill", node.bid, value)


def press(node: Node, keys: str) -> str:
    return action("press", node.bid, keys)


def fill_then(fields: list[tuple[Node, str]], then: Node) -> str:
    """Fill the first field not yet holding its value; once all hold theirs, click ``then``."""
    for node, value in fields:
        if norm(node.value) != norm(value):
            return fill(node, value)
    return click(then)


def textboxes(nodes: Iterable[Node]) -> list[Node]:
    return find(nodes, ("textbox", "spinbutton", "searchbox"))


def field_after(nodes: list[Node], label: Node) -> Node:
    """The first textbox after a label (how forms lay out a caption and its input)."""
    boxes = textboxes(after(nodes, label))
    if not boxes:
        raise OracleError(f"no textbox after {label.name!r}")
    return boxes[0]
