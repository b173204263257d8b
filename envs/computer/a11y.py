"""The desktop's accessibility tree (AT-SPI), read from the host, in OSWorld's XML form.

OSWorld agents read ``a11y_tree``: the XML its VM server builds from AT-SPI with pyatspi, one
element per accessible, tagged by role (spaces as ``-``), with ``name``, ``st:<state>="true"``
per state, ``attr:<key>`` per object attribute, ``cp:screencoord="(x, y)"`` and
``cp:size="(w, h)"`` for visible and showing components, the text as the element's text,
``val:value``/``min``/``max``/``step`` and ``act:<name>_desc``/``_kb``. Agents look the
namespaces up by URI, so ours are OSWorld's URIs.

Decisions:

- **Read from the env's process, never from inside the sandbox.** A reader in the sandbox would
  run as the agent's uid, where the agent can kill it or write its memory. The reader is this
  module, talking D-Bus (``jeepney``, pure Python: no GObject in the venv) to the sandbox's
  accessibility bus, whose at-spi2 configuration lets root connect.
- **Everything on that bus is the agent's**: the apps, and the bus itself (same uid; the agent
  can replace it with a server of its own). So the socket is opened without following links
  (``O_PATH|O_NOFOLLOW``, checked to be a socket: a planted symlink cannot make root connect to
  a host socket) and every answer is bounded: a deadline for the whole read, a node budget, a
  depth and a width (OSWorld's 50 and 1024), text and attribute lengths, and the bytes read. A
  hostile or hung app leaves a partial tree, never a hung env.
- **Pipelined**: the calls for a whole level of the tree are sent before any answer is read,
  so a level costs about one round trip through each app's main loop, not one per call.
- **What a screen shows of big apps**: a closed submenu (a ``menu`` not showing) is read
  without its items (LibreOffice has about 1500 menu nodes; OSWorld's agents drop what is not
  showing anyway), and a table that manages its descendants with more children than the width
  bound (Calc's sheet: 16384 columns by 1048576 rows) is read as OSWorld reads Calc's: only the
  cells on screen, found from the cells at its visible corners (their names, ``B3``) and
  asked for by row and column (``Table.GetAccessibleAt``).
- **A partial tree is a tree**: when the deadline passes, what was read so far is returned.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import socket
import stat
import struct
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import prep_socket
from jeepney.low_level import Endianness, calc_msg_size, parse_signature

#: OSWorld's namespaces for Ubuntu trees (``desktop_env/server/main.py``), by prefix
NS = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "doc": "https://accessibility.ubuntu.example.org/ns/document",
    "docattr": "https://accessibility.ubuntu.example.org/ns/document/attributes",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
    "val": "https://accessibility.ubuntu.example.org/ns/value",
    "act": "https://accessibility.ubuntu.example.org/ns/action",
}
for _prefix, _uri in NS.items():
    ET.register_namespace(_prefix, _uri)

#: AtspiStateType, in its order (bit i of GetState's two words)
STATES = [
    "invalid",
    "active",
    "armed",
    "busy",
    "checked",
    "collapsed",
    "defunct",
    "editable",
    "enabled",
    "expandable",
    "expanded",
    "focusable",
    "focused",
    "has_tooltip",
    "horizontal",
    "iconified",
    "modal",
    "multi_line",
    "multiselectable",
    "opaque",
    "pressed",
    "resizable",
    "selectable",
    "selected",
    "sensitive",
    "showing",
    "single_line",
    "stale",
    "transient",
    "vertical",
    "visible",
    "manages_descendants",
    "indeterminate",
    "required",
    "truncated",
    "animated",
    "invalid_entry",
    "supports_autocompletion",
    "selectable_text",
    "is_default",
    "visited",
    "checkable",
    "has_popup",
    "read_only",
]

REGISTRY = "org.a11y.atspi.Registry"
ROOT = "/org/a11y/atspi/accessible/root"
ACC = "org.a11y.atspi.Accessible"
PROPS = "org.freedesktop.DBus.Properties"

MAX_DEPTH = 50  # OSWorld's
MAX_WIDTH = 1024  # OSWorld's: children read per node
MAX_TEXT = 10_000  # characters of one node's text
MAX_VALUE = 500  # characters of a name, an attribute value, an action's description
MAX_BYTES = 32 * 2**20  # read from the bus in one tree
#: what a dead, slow or lying bus raises here (socket errors and timeouts are OSErrors)
BAD_BUS = (
    OSError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    struct.error,
    RecursionError,
)


@dataclass(frozen=True)
class Budget:
    """What one read may cost; the defaults keep a step's tree well under a second."""

    #: (a LibreOffice window with a page of Calc's cells is about 1400 nodes: about 0.8 s on
    #: this 2-core machine, 2 s at a load average of 10)
    deadline_s: float = 4.0
    max_nodes: int = 3000
    #: about the characters of the XML (names, attributes, text): nodes past it are left out
    max_chars: int = 600_000


@dataclass
class _Node:
    bus: str
    path: str
    depth: int
    elem: ET.Element = field(default_factory=lambda: ET.Element("unknown"))
    replies: dict[str, Any] = field(default_factory=dict)
    children: list[_Node] = field(default_factory=list)
    parent_elem: ET.Element | None = None
    big: bool = False  # a table read by its cells on screen (``_corners``)
    bar: bool = False  # a menu bar, whose menus are read only if it has a height
    corners: list[str] = field(default_factory=list)  # the names of its corner cells


class _Bus:
    """A D-Bus connection whose every wait has the read's deadline and whose reads are
    bounded (jeepney's own connection says Hello with no timeout and parses every header in
    full: most of a tree's CPU). Headers are read here (only a reply's serial and signature
    matter), and only the bodies of answers still wanted are parsed, by jeepney."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock = sock
        self.deadline = deadline
        self.serial = 0
        self.read = 0
        self.buf = bytearray()

    def close(self) -> None:
        self.sock.close()

    def calls(self, calls: list[Call]) -> list[Any]:
        """Send every call at once, then collect the answers (an error: ``None``)."""
        first = self.serial + 1
        self.serial += len(calls)
        self._timeout()
        self.sock.sendall(b"".join(_wire(c, first + i) for i, c in enumerate(calls)))
        want = set(range(first, first + len(calls)))
        out: list[Any] = [None] * len(calls)
        while want:
            kind, serial, sig, raw, pos = self._next()
            if serial in want:
                want.discard(serial)
                if kind == 2:  # a method return
                    out[serial - first] = _parse_body(raw, pos, sig)
        return out

    def _timeout(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the accessibility tree's deadline passed")
        self.sock.settimeout(left)

    def _next(self) -> tuple[int, int, str, bytes, int]:
        """The next message: its type, reply serial, body signature, bytes, body offset."""
        while True:
            buf = self.buf
            if len(buf) >= 16:
                size = calc_msg_size(bytes(buf[:16]))
                if size > MAX_BYTES:
                    raise ValueError("a message larger than the tree's byte budget")
                if len(buf) >= size:
                    raw = bytes(buf[:size])
                    del buf[:size]
                    return _header(raw)
            self._timeout()
            data = self.sock.recv(1 << 16)  # socket.timeout is TimeoutError (an OSError)
            if not data:
                raise ConnectionError("the accessibility bus closed the connection")
            self.read += len(data)
            if self.read > MAX_BYTES:
                raise ValueError("the accessibility bus sent too much")
            buf += data


def _header(raw: bytes) -> tuple[int, int, str, bytes, int]:
    """A message's type, reply serial (0: none), body signature and body offset, read from
    its header fields (of which only reply_serial, 5, and signature, 8, are kept)."""
    end = "<" if raw[0:1] == b"l" else ">"
    (fields_len,) = struct.unpack_from(end + "I", raw, 12)
    pos, stop = 16, 16 + fields_len
    serial, sig = 0, ""
    while pos < stop:
        pos += -pos % 8
        code, n = raw[pos], raw[pos + 1]
        kind = raw[pos + 2 : pos + 2 + n]
        pos += 3 + n
        if kind == b"u":
            pos += -pos % 4
            (value,) = struct.unpack_from(end + "I", raw, pos)
            pos += 4
            if code == 5:
                serial = value
        elif kind in (b"s", b"o"):
            pos += -pos % 4
            (length,) = struct.unpack_from(end + "I", raw, pos)
            pos += 5 + length
        elif kind == b"g":
            length = raw[pos]
            if code == 8:
                sig = raw[pos + 1 : pos + 1 + length].decode()
            pos += 2 + length
        else:
            raise ValueError(f"a header field of type {kind!r}")
    return raw[1], serial, sig, raw, stop + (-stop % 8)


_BODY_TYPES: dict[str, Any] = {}


def _parse_body(raw: bytes, pos: int, sig: str) -> tuple:
    if not sig:
        return ()
    body_type = _BODY_TYPES.get(sig)
    if body_type is None:
        if len(_BODY_TYPES) > 256:
            _BODY_TYPES.clear()
        body_type = _BODY_TYPES[sig] = parse_signature(list(f"({sig})"))
    endian = Endianness.little if raw[0:1] == b"l" else Endianness.big
    return body_type.parse_data(raw, pos, endian)[0]


#: a method call: (bus name, object path, interface, method, signature, arguments)
Call = tuple[str, str, str, str, str, tuple]
_WIRE: dict[Call, bytes] = {}


def _wire(call: Call, serial: int) -> bytes:
    """The call's bytes: serialised once (jeepney's serialiser is most of a read's CPU; the
    same nodes are asked the same things every step), then only the serial (bytes 8..12 of
    every D-Bus message) is set."""
    data = _WIRE.get(call)
    if data is None:
        bus, path, iface, method, sig, body = call
        msg = new_method_call(DBusAddress(path, bus, iface), method, sig or None, body)
        data = msg.serialise(serial=1)
        if len(_WIRE) > 50_000:
            _WIRE.clear()
        _WIRE[call] = data
    return data[:8] + struct.pack("<I", serial) + data[12:]


def connect(sandbox_pid: int, path: str, deadline: float) -> _Bus:
    """A connection to the bus socket at ``path`` inside the sandbox, opened without
    following a link the agent may have planted, authenticated and said Hello to."""
    fd = os.open(f"/proc/{sandbox_pid}/root{path}", os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            raise ConnectionError(f"{path} is not a socket")
        sock = prep_socket(f"/proc/self/fd/{fd}", timeout=max(deadline - time.monotonic(), 0))
    finally:
        os.close(fd)
    bus = _Bus(sock, deadline)
    dbus = "org.freedesktop.DBus"
    if bus.calls([(dbus, "/org/freedesktop/DBus", dbus, "Hello", "", ())])[0] is None:
        bus.close()
        raise ConnectionError("the accessibility bus did not answer Hello")
    return bus


def app_count(sandbox_pid: int, path: str, deadline_s: float = 0.2) -> int:
    """How many apps have registered with the accessibility registry (0 if unreachable)."""
    deadline = time.monotonic() + deadline_s
    try:
        bus = connect(sandbox_pid, path, deadline)
    except BAD_BUS:
        return 0
    try:
        count = _variant(bus.calls([(REGISTRY, ROOT, PROPS, "Get", "ss", (ACC, "ChildCount"))])[0])
        return count if isinstance(count, int) else 0
    except BAD_BUS:
        return 0
    finally:
        bus.close()


def read_tree(
    sandbox_pid: int, path: str, budget: Budget | None = None, static: Static | None = None
) -> str:
    """The tree as OSWorld's XML text (``<desktop-frame>`` with one child per app); what
    could be read within the budget, or an empty desktop when the bus cannot be reached.
    ``static``: the answers kept from earlier reads of the same desktop (updated)."""
    budget = budget or Budget()
    deadline = time.monotonic() + budget.deadline_s
    root = _Node(REGISTRY, ROOT, 0)
    root.elem = ET.Element("desktop-frame", {"name": ""})
    try:
        bus = connect(sandbox_pid, path, deadline)
    except BAD_BUS:
        return ET.tostring(root.elem, encoding="unicode")
    try:
        _walk(bus, root, budget, {} if static is None else static)
    except BAD_BUS:
        pass  # a partial tree: what was read before the budget ran out or an answer was bad
    finally:
        bus.close()
    _fill_all(root, budget.max_chars)
    return ET.tostring(root.elem, encoding="unicode")


def _call(node: _Node, iface: str, method: str, sig: str = "", body: tuple = ()) -> Call:
    return (node.bus, node.path, iface, method, sig, body)


#: the calls made for every node first
FIRST = {
    "role": lambda n: _call(n, ACC, "GetRoleName"),
    "name": lambda n: _call(n, PROPS, "Get", "ss", (ACC, "Name")),
    "count": lambda n: _call(n, PROPS, "Get", "ss", (ACC, "ChildCount")),
    "states": lambda n: _call(n, ACC, "GetState"),
    "attrs": lambda n: _call(n, ACC, "GetAttributes"),
    "ifaces": lambda n: _call(n, ACC, "GetInterfaces"),
}
IFACE = "org.a11y.atspi."
#: the calls made for a node that has the interface (and, for extents, is on screen)
SECOND = {
    "extents": ("Component", lambda n: _call(n, IFACE + "Component", "GetExtents", "u", (0,))),
    "chars": ("Text", lambda n: _call(n, PROPS, "Get", "ss", (IFACE + "Text", "CharacterCount"))),
    "value": ("Value", lambda n: _call(n, PROPS, "GetAll", "s", (IFACE + "Value",))),
    "actions": ("Action", lambda n: _call(n, IFACE + "Action", "GetActions")),
}


#: answers that do not change while an object lives: kept across reads (``Static``)
STATIC = {"role", "ifaces", "actions"}
#: (bus name, object path, key) -> answer, for one episode's desktop
Static = dict[tuple[str, str, str], Any]


def _walk(bus: _Bus, root: _Node, budget: Budget, static: Static) -> None:
    """Breadth first, all calls of a round sent at once: a node's own calls, then the ones
    its interfaces call for and its children, then the text (its length known by then).
    Answers in ``static`` are not asked again."""
    pending: list[tuple[_Node, str, Call]] = [(root, k, f(root)) for k, f in FIRST.items()]
    seen = 1
    while pending:
        keys = [(c[0], c[1], key) for _, key, c in pending]
        asked = [c for (_, _, c), k in zip(pending, keys, strict=True) if k not in static]
        fresh = iter(bus.calls(asked))
        answers = [static[k] if k in static else next(fresh) for k in keys]
        for k, ans in zip(keys, answers, strict=True):
            if k[2] in STATIC and ans is not None and len(static) < 100_000:
                static[k] = ans
        firsts: dict[int, _Node] = {}
        nxt: list[tuple[_Node, str, Call]] = []
        for (node, key, _), ans in zip(pending, answers, strict=True):
            if key == "child":
                child = _child(node, ans)
                if child is not None:
                    nxt += [(child, k, f(child)) for k, f in FIRST.items()]
                continue
            if key in ("corner", "corner_name"):
                more = _corner(node, key, ans, budget.max_nodes - seen)
                seen += sum(k == "child" for _, k, _ in more)
                nxt += more
                continue
            node.replies[key] = ans
            if key == "extents" and node.big:
                nxt += _corners(node, _first(ans))
            if key == "extents" and node.bar and _ints(_first(ans), 4) and _first(ans)[3] > 0:
                # (LibreOffice keeps its own menu bar, of no height, beside GTK's)
                count = _int(_variant(node.replies.get("count")))
                for j in range(max(0, min(count, MAX_WIDTH, budget.max_nodes - seen))):
                    nxt.append((node, "child", _call(node, ACC, "GetChildAtIndex", "i", (j,))))
                    seen += 1
            if key in FIRST:
                firsts[id(node)] = node
            elif key == "chars":
                chars = _variant(ans)
                if isinstance(chars, int) and chars > 0:
                    args = (0, min(chars, MAX_TEXT))
                    nxt.append((node, "text", _call(node, IFACE + "Text", "GetText", "ii", args)))
        for node in firsts.values():
            ifaces = {i.removeprefix(IFACE) for i in _strs(_first(node.replies["ifaces"]))}
            states = _states(_first(node.replies["states"]))
            for key, (iface, make) in SECOND.items():
                on_screen = "visible" in states and "showing" in states
                if iface in ifaces and (key != "extents" or on_screen):
                    nxt.append((node, key, make(node)))
            count = _variant(node.replies["count"])
            role = _first(node.replies["role"])
            if role == "menu" and "showing" not in states:
                continue  # a closed submenu: its items are not on screen
            if role == "menu bar" and "visible" in states and "showing" in states:
                node.bar = True  # its menus once its extents say it has a height
                continue
            if isinstance(count, int) and count > MAX_WIDTH and "Table" in ifaces:
                if "manages_descendants" in states and "showing" in states:
                    node.big = True  # its cells on screen only
                continue
            if node.depth < MAX_DEPTH and isinstance(count, int) and count > 0:
                for j in range(max(0, min(count, MAX_WIDTH, budget.max_nodes - seen))):
                    nxt.append((node, "child", _call(node, ACC, "GetChildAtIndex", "i", (j,))))
                    seen += 1
        pending = nxt


_CELL = re.compile(r"([A-Z]{1,3})([0-9]{1,7})\Z")


def _corners(table: _Node, extents: Any) -> list[tuple[_Node, str, Call]]:
    """The calls for the cells at a big table's top-left and bottom-right corners on screen."""
    if not _ints(extents, 4):
        return []
    x, y, w, h = extents
    iface = IFACE + "Component"
    return [
        (table, "corner", _call(table, iface, "GetAccessibleAtPoint", "iiu", (px, py, 0)))
        for px, py in ((x + 1, y + 1), (x + max(w - 2, 1), y + max(h - 2, 1)))
    ]


def _corner(table: _Node, key: str, ans: Any, left: int) -> list[tuple[_Node, str, Call]]:
    """A corner cell found: ask its name; both names known: ask for every cell between them
    (row by row, within the node budget), as the table's children."""
    if key == "corner":
        ref = _ref(ans)
        if ref is None:
            return []
        cell = _Node(*ref, table.depth + 1)
        return [(table, "corner_name", _call(cell, PROPS, "Get", "ss", (ACC, "Name")))]
    table.corners.append(str(_variant(ans) or ""))
    if len(table.corners) < 2:
        return []
    found = [_CELL.match(c.strip()) for c in table.corners]
    if not all(found):
        return []
    (c0, r0), (c1, r1) = [(_column(m.group(1)), int(m.group(2)) - 1) for m in found if m]
    iface = IFACE + "Table"
    cells = ((r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1))  # lazily: the
    # names are the app's, and a lying one may claim a million rows
    return [
        (table, "child", _call(table, iface, "GetAccessibleAt", "ii", (r, c)))
        for r, c in itertools.islice(cells, max(0, min(left, MAX_WIDTH)))
    ]


def _column(letters: str) -> int:
    """``"A"`` -> 0, ``"AB"`` -> 27."""
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n - 1


_BUS_NAME = re.compile(r"[:A-Za-z0-9_.-]{1,255}\Z")
_PATH = re.compile(r"/[A-Za-z0-9_/]{0,500}\Z")


def _ref(ans: Any) -> tuple[str, str] | None:
    """An object reference answered by an app: a bus name and an object path, not null."""
    ref = _first(ans)
    if not (isinstance(ref, tuple) and len(ref) == 2 and all(isinstance(x, str) for x in ref)):
        return None
    if ref[1] == "/org/a11y/atspi/null" or not (_BUS_NAME.match(ref[0]) and _PATH.match(ref[1])):
        return None
    return str(ref[0]), str(ref[1])


def _child(parent: _Node, ans: Any) -> _Node | None:
    ref = _ref(ans)
    if ref is None:
        return None
    child = _Node(*ref, parent.depth + 1)
    parent.children.append(child)
    return child


def _fill_all(root: _Node, max_chars: int) -> None:
    """Every node's element, breadth first, until the size budget is spent."""
    level, size = [root], 0
    while level:
        nxt = []
        for node in level:
            with contextlib.suppress(*BAD_BUS):  # answers of the wrong type: a bare node
                _fill(node)
            e = node.elem
            # an attribute's key as written (``st:x``), not as kept (``{namespace URI}x``)
            size += len(e.tag) + len(e.text or "")
            size += sum(len(k.rpartition("}")[2]) + 4 + len(v) for k, v in e.items())
            if size > max_chars:
                return
            if node.parent_elem is not None:
                node.parent_elem.append(e)
            for child in node.children:
                child.parent_elem = e
            nxt += node.children
        level = nxt


def _fill(node: _Node) -> None:
    """The node's element from its answers, as OSWorld's ``_create_atspi_node`` shapes it."""
    r, elem = node.replies, node.elem
    role = str(_first(r.get("role")) or "unknown").strip().replace(" ", "-")
    elem.tag = _tag(role)
    attrib: dict[str, str] = {"name": _clip(_variant(r.get("name")) or "")}
    states = _states(_first(r.get("states")))
    for s in states:
        attrib[f"{{{NS['st']}}}{s}"] = "true"
    attrs = _first(r.get("attrs"))
    for k, v in list(attrs.items() if isinstance(attrs, dict) else [])[:64]:
        if k and _xml_name(str(k)):
            attrib[f"{{{NS['attr']}}}{k}"] = _clip(v)
    extents = _first(r.get("extents"))
    if "visible" in states and "showing" in states and _ints(extents, 4):
        x, y, w, h = extents
        attrib[f"{{{NS['cp']}}}screencoord"] = f"({x}, {y})"
        attrib[f"{{{NS['cp']}}}size"] = f"({w}, {h})"
    ifaces = set(_strs(_first(r.get("ifaces"))))
    if "org.a11y.atspi.Image" in ifaces:
        attrib["image"] = "true"
    if "org.a11y.atspi.Selection" in ifaces:
        attrib["selection"] = "true"
    value = _first(r.get("value"))
    if isinstance(value, dict):
        for key, prop in (
            ("value", "CurrentValue"),
            ("min", "MinimumValue"),
            ("max", "MaximumValue"),
            ("step", "MinimumIncrement"),
        ):
            if prop in value:
                attrib[f"{{{NS['val']}}}{key}"] = _clip(_prop_of(r.get("value"), prop))
    actions = _first(r.get("actions"))
    for action in (actions if isinstance(actions, list) else [])[:32]:
        if isinstance(action, tuple) and len(action) == 3:
            name = str(action[0]).replace(" ", "-")
            if _xml_name(name):
                attrib[f"{{{NS['act']}}}{name}_desc"] = _clip(action[1])
                attrib[f"{{{NS['act']}}}{name}_kb"] = _clip(action[2])
    elem.attrib.update(attrib)
    text = _first(r.get("text"))
    if isinstance(text, str):
        text = _clean(text.replace("\ufffc", "").replace("\ufffd", ""))[:MAX_TEXT]
        if text:
            elem.text = text


def _first(body: Any) -> Any:
    return body[0] if isinstance(body, tuple) and body else None


def _variant(body: Any) -> Any:
    """The value of a ``Properties.Get`` answer (a variant: ``(signature, value)``)."""
    v = _first(body)
    return v[1] if isinstance(v, tuple) and len(v) == 2 else None


def _prop_of(body: Any, name: str) -> Any:
    """One property of a ``Properties.GetAll`` answer (``{name: (signature, value)}``)."""
    props = _first(body)
    v = props.get(name) if isinstance(props, dict) else None
    return v[1] if isinstance(v, tuple) and len(v) == 2 else None


def _int(v: Any) -> int:
    return v if type(v) is int else 0


def _ints(v: Any, n: int) -> bool:
    return isinstance(v, tuple | list) and len(v) == n and all(type(x) is int for x in v)


def _strs(v: Any) -> list[str]:
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []


def _states(words: Any) -> list[str]:
    if not _ints(words, 2):
        return []
    bits = sum(int(w) << (32 * i) for i, w in enumerate(words[:2]))
    return [s for i, s in enumerate(STATES) if i and bits >> i & 1]


def _clip(v: Any) -> str:
    return _clean(str(v))[:MAX_VALUE]


def _clean(s: str) -> str:
    """Without the characters XML 1.0 cannot hold (an app's name could carry any)."""
    return "".join(c for c in s if c in "\t\n\r" or " " <= c <= "\ud7ff" or _ok_high(c))


def _ok_high(c: str) -> bool:
    return "\ue000" <= c <= "\ufffd" or c >= "\U00010000"


def _xml_name(s: str) -> bool:
    return bool(s) and (s[0].isalpha() or s[0] == "_") and all(c.isalnum() or c in "-_." for c in s)


def _tag(role: str) -> str:
    return role if _xml_name(role) else "unknown"
