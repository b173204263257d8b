"""The computer family's accessibility tree (``a11y_tree``, OSWorld's XML form) on the shared
desktop: the editor's window, menus and text read from AT-SPI, off by default, an unknown
``observe`` key refused, OSWorld's screen size as an option, and a hostile bus bounded."""

import contextlib
import os
import socket
import stat
import struct
import threading
import time
import typing
import xml.etree.ElementTree as ET

import pytest

from palaestra.envs.computer import a11y, desktop
from palaestra.envs.computer.env import DEFAULT_PARTS, PARTS
from palaestra.envs.computer.options import ComputerOptions, Part
from palaestra.envs.computer.sandbox import A11Y_BUS
from palaestra.errors import InvalidRequest
from palaestra.options import OperatorConfig, check_options
from palaestra.tasks import get_task

pytestmark = pytest.mark.timeout(120)
ST, CP = a11y.NS["st"], a11y.NS["cp"]


@pytest.fixture
def tree_env(env):
    """The shared desktop observing the tree too; back to the default parts after."""
    env.set_parts(PARTS)
    yield env
    env.set_parts(DEFAULT_PARTS)


def tree_of(env, want, tries=40):
    """The tree once ``want(root)`` holds (GTK's bridge registers just after the window)."""
    for _ in range(tries):
        obs, *_ = env.step("wait(0.05)")
        assert env.observation_space.contains(obs)
        root = ET.fromstring(obs["a11y_tree"])
        if want(root):
            return root
    raise AssertionError(obs["a11y_tree"][:2000])


def test_the_editors_window_menus_and_text_are_in_the_tree(tree_env):
    obs, _ = tree_env.reset(options={"task": get_task("computer-basic/append-line-in-editor")})
    assert obs["a11y_tree"].startswith("<desktop-frame")
    root = tree_of(tree_env, lambda r: r.find(".//application[@name='mousepad']//text") is not None)
    app = root.find("application[@name='mousepad']")
    frame = app.find("frame")
    assert "Mousepad" in frame.get("name") and frame.get(f"{{{ST}}}active") == "true"
    assert frame.get(f"{{{CP}}}screencoord") == "(0, 0)"
    assert desktop.REGISTRYD in {p["exe"] for p in tree_env.sandbox.processes()}
    assert frame.get(f"{{{CP}}}size") == "(1024, 768)"
    assert root.find(".//frame[@st:active='true']", a11y.NS) is frame  # OSWorld's xpaths
    menus = [m.get("name") for m in app.iter("menu")]
    assert {"File", "Edit"} <= set(menus)
    assert any(i.get("name", "").strip().startswith("Save") for i in app.iter("menu-item"))
    text = next(t for t in app.iter("text") if t.get(f"{{{ST}}}editable") == "true")
    assert text.text == "eggs\nbread" and text.get(f"{{{ST}}}multi_line") == "true"
    # the tree follows the GUI: typed text shows in the text node
    tree_env.step("key('ctrl+End')")
    tree_env.step("type_text('\\nmilk')")
    tree_of(tree_env, lambda r: any(t.text == "eggs\nbread\nmilk" for t in r.iter("text")))


def test_a_planted_link_or_a_silent_bus_leaves_an_empty_or_partial_tree(tree_env, tmp_path):
    tree_env.set_parts(["a11y_tree"])  # the tree alone, as OSWorld's a11y_tree-only setting
    obs, _ = tree_env.reset(options={"task": get_task("computer-basic/append-line-in-editor")})
    assert set(obs) == {"a11y_tree", "last_action_error"} and "mousepad" in obs["a11y_tree"]
    # a bus that accepts and never answers: the read ends at its deadline
    tree_env.step(
        f"run_shell('rm -f {A11Y_BUS}; python3 -c \"import socket,time; s=socket.socket(1); "
        f"s.bind(\\'{A11Y_BUS}\\'); s.listen(); c=s.accept(); time.sleep(3600)\" &')"
    )
    bus = f"/proc/{tree_env.sandbox.pid}/root{A11Y_BUS}"
    for _ in range(200):  # the listener is up once the bus path is a socket again
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(os.lstat(bus).st_mode):
                break
        time.sleep(0.05)
    # the bus holds the connection for an hour: only the read's own deadline can end it
    tree = a11y.read_tree(tree_env.sandbox.pid, A11Y_BUS, a11y.Budget(deadline_s=0.3))
    assert tree == '<desktop-frame name="" />'

    # a link to a socket outside the sandbox is not followed (root would connect to it). The
    # host socket here is a working bus (a relay to the session's own, moved aside), so the
    # tree would come back whole if the link were followed: only O_NOFOLLOW keeps it empty
    tree_env.reset(options={"task": get_task("computer-basic/append-line-in-editor")})
    tree_of(tree_env, lambda r: r.find(".//application[@name='mousepad']") is not None)
    moved = f"{A11Y_BUS}.real"
    tree_env.step(f"run_shell('mv {A11Y_BUS} {moved}')")
    host = tmp_path / "host-bus.sock"
    with _relay(str(host), f"/proc/{tree_env.sandbox.pid}/root{moved}"):
        obs, *_ = tree_env.step(f"run_shell('ln -s {host} {A11Y_BUS}')")
        assert obs["a11y_tree"] == '<desktop-frame name="" />'
        relayed = a11y.read_tree(tree_env.sandbox.pid, moved, a11y.Budget(deadline_s=2.0))
        assert "mousepad" in relayed  # the bus behind the link works: following it would show


@contextlib.contextmanager
def _relay(listen: str, upstream: str) -> typing.Iterator[None]:
    """A Unix socket at ``listen`` (on the host) that relays each connection to ``upstream``."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(listen)
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def pipe(a: socket.socket, b: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := a.recv(65536):
                b.sendall(data)
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def serve() -> None:
        while not stop.is_set():
            try:
                client, _ = server.accept()
            except TimeoutError:
                continue
            up = socket.socket(socket.AF_UNIX)
            up.connect(upstream)
            for a, b in ((client, up), (up, client)):
                threading.Thread(target=pipe, args=(a, b), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        server.close()


def test_the_tree_is_off_by_default(env):
    obs, _ = env.reset()
    assert "a11y_tree" not in obs and "a11y_tree" not in env.observation_space.spaces
    assert not env.sandbox.a11y
    exes = {p["exe"] for p in env.sandbox.processes()}
    assert exes and desktop.REGISTRYD not in exes
    assert "observe" not in check_options(ComputerOptions, {}, None).env_kwargs(OperatorConfig())


def test_unknown_observe_key_is_a_422_naming_the_parts():
    with pytest.raises(InvalidRequest) as err:
        check_options(ComputerOptions, {"observe": ["screenshot", "axtree"]}, None)
    assert err.value.status == 422 and "options.observe" in str(err.value)
    assert all(p in str(err.value) for p in PARTS)
    assert typing.get_args(Part) == PARTS  # the options model and the env list the same parts
    ok = check_options(ComputerOptions, {"observe": ["a11y_tree", "screenshot"]}, None)
    assert ok.env_kwargs(OperatorConfig())["observe"] == ["a11y_tree", "screenshot"]


def test_osworld_screen_size_is_an_option():
    kwargs = check_options(ComputerOptions, {"screen": "osworld"}, None).env_kwargs(
        OperatorConfig()
    )
    assert (kwargs["width"], kwargs["height"]) == (1920, 1080) and "screen" not in kwargs
    with pytest.raises(InvalidRequest, match="not both"):
        check_options(ComputerOptions, {"screen": "osworld", "width": 800}, None)
    with pytest.raises(InvalidRequest, match=r"options\.screen"):
        check_options(ComputerOptions, {"screen": "4k"}, None)


def test_a_lying_bus_gives_an_empty_tree_fast(tmp_path):
    """A server that authenticates like D-Bus, then announces a 4 GB message: the reader
    stops at its byte budget (no sandbox needed: the path is read through /proc/PID/root)."""
    path = tmp_path / "bus"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()

    def serve():
        conn, _ = server.accept()
        with conn:
            conn.recv(1024)  # the NUL byte and AUTH EXTERNAL
            conn.sendall(b"OK 0123456789abcdef0123456789abcdef\r\n")
            conn.recv(1024)  # BEGIN and Hello
            conn.sendall(b"l\x02\x01\x01" + struct.pack("<III", 0xFFFFFFF0, 1, 0) + b"x" * 64)
            done.wait(600)  # holds the connection open until the read is over

    done = threading.Event()
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    # the bus claims a 4 GB message and stalls: the read must end by itself (the size check
    # or its deadline), while the connection is still open
    assert a11y.read_tree(os.getpid(), str(path)) == '<desktop-frame name="" />'
    done.set()
    server.close()


def test_answers_of_the_wrong_type_are_left_out():
    """An app answers whatever signature it likes: wrong types never break the tree."""
    node = a11y._Node("x", "/a", 0)
    node.replies = {
        "role": ("push button",),
        "name": (("s", "OK"),),
        "states": ([1 << 25 | 1 << 30, 0],),  # showing, visible
        "attrs": ("not a dict",),
        "extents": (("a", 1, 2, 3),),
        "ifaces": (5,),
        "actions": (7,),
        "text": ("hi\x00there",),
    }
    a11y._fill(node)
    assert ET.tostring(node.elem, encoding="unicode") == (
        f'<push-button xmlns:st="{ST}" name="OK" st:showing="true" st:visible="true">'
        "hithere</push-button>"
    )
    assert a11y._child(node, (("x", "not a path"),)) is None
    assert a11y._child(node, ((":1.2", "/org/a11y/atspi/accessible/3"),)).depth == 1
