"""A :class:`~palaestra.envs.mobile.phone.Phone` driven through an Appium server.

``AppiumPhone(url, capabilities)`` opens one Appium session (``appium.webdriver.Remote``) with
the given capabilities (UiAutomator2 for Android, XCUITest for iOS, or the fake driver in tests)
and maps the phone interface onto it:

* screenshots come from ``get_screenshot_as_png`` as RGB ``uint8`` arrays; :attr:`size` is the
  screenshot's size, and every coordinate in and out of this class is in screenshot pixels. The
  driver's own coordinate space (the window size: pixels on Android, points on iOS) is converted
  both ways, so gestures and element bounds agree with the picture;
* elements are the page source (XML) parsed into AndroidWorld's :class:`UIElement`, from
  UiAutomator2's form (``bounds="[x1,y1][x2,y2]"``, ``resource-id``, ``content-desc``, ...),
  XCUITest's (``x``/``y``/``width``/``height``, ``name``, ``label``, ``value``) or the fake
  driver's (``left``/``top``/``width``/``height``, ``id``);
* gestures are W3C actions with a touch pointer;
* ``start`` resets the app under test: ``terminate_app`` + ``activate_app`` when its package or
  bundle id is known, else (an app given only as a file, like the fake driver's) a fresh session,
  which reinstalls/relaunches it as the capabilities say. ``setup={"reset": "session"}`` asks for
  a fresh session in every case (use it with ``appium:fullReset``/``appium:noReset`` as wanted).
  The seed cannot reach a real device and is ignored.

A ``palaestra:apps`` entry in the capabilities (``{"Mail": "com.example.mail", ...}``) names the
apps :meth:`open_app` and :meth:`apps` know; it is removed before the capabilities are sent.

Every failure (Appium, Selenium, urllib3, sockets) becomes a :class:`PhoneError` that names the
server and the command, e.g. ``Appium server http://127.0.0.1:4723 failed on tap: ...``.
Connecting is bounded by ``connect_timeout`` and urllib3 does not retry a refused connection, so
a server that is down is reported at once.
"""

from __future__ import annotations

import http.client
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any, TypeVar

import numpy as np
import urllib3

from palaestra.envs.mobile.phone import PhoneError, UIElement

T = TypeVar("T")

APPS_CAPABILITY = "palaestra:apps"
LAUNCHERS = {
    "com.google.android.apps.nexuslauncher",
    "com.android.launcher",
    "com.android.launcher3",
    "com.google.android.launcher",
    "com.sec.android.app.launcher",
    "com.springboard",
}
#: page-source wrappers that are not elements
_ROOTS = {"hierarchy", "AppiumAUT", "app"}
_BOUNDS = re.compile(r"\[(-?[\d.]+),(-?[\d.]+)\]\[(-?[\d.]+),(-?[\d.]+)\]")
_EDITABLE = (
    "EditText",
    "AutoCompleteTextView",
    "XCUIElementTypeTextField",
    "XCUIElementTypeSecureTextField",
    "XCUIElementTypeSearchField",
    "XCUIElementTypeTextView",
    "MockInputField",
)
_CLICKABLE = ("Button", "Cell", "Link", "Switch", "CheckBox", "RadioButton", "ListItem", "Tab")
_SCROLLABLE = ("ScrollView", "RecyclerView", "ListView", "XCUIElementTypeTable", "CollectionView")
_NOT_SUPPORTED = ("not yet implemented", "unknown command", "unknown method", "not supported")


def _true(value: str | None) -> bool:
    return (value or "").lower() == "true"


def _describe(exc: BaseException) -> str:
    """The first line of an error, without Selenium's stack trace.

    A reply that is not a WebDriver error (Selenium's bare ``WebDriverException`` carries the
    raw response body) is named but never quoted: an error must not read a server's pages back
    to the client (the server is the operator's, but its errors reach an API client)."""
    from selenium.common.exceptions import WebDriverException

    # Selenium turns a reply that is not WebDriver JSON into a bare exception holding the raw
    # body and no remote stack trace; a WebDriver error (Appium's) comes with its stack trace
    if type(exc) is WebDriverException and not getattr(exc, "stacktrace", None):
        return "WebDriverException: the server answered with no WebDriver error (body withheld)"
    msg = getattr(exc, "msg", None) or str(exc) or type(exc).__name__
    first = msg.strip().splitlines()[0] if msg.strip() else type(exc).__name__
    return f"{type(exc).__name__}: {first}"[:400]


def _unsupported(exc: BaseException) -> bool:
    """Whether the driver lacks the command (as opposed to the command failing)."""
    from selenium.common.exceptions import UnknownMethodException

    text = str(exc).lower()
    return isinstance(exc, UnknownMethodException) or any(s in text for s in _NOT_SUPPORTED)


def _errors() -> tuple[type[BaseException], ...]:
    from selenium.common.exceptions import WebDriverException

    return (
        WebDriverException,
        urllib3.exceptions.HTTPError,
        http.client.HTTPException,
        OSError,
        ValueError,
    )


def parse_page_source(
    source: str | bytes, scale: tuple[float, float] = (1.0, 1.0)
) -> tuple[list[UIElement], list[str]]:
    """Page source -> (elements in document order, the absolute XPath of each).

    ``scale`` multiplies the driver's coordinates into screenshot pixels. Nodes without bounds,
    with no area, or marked invisible (``visible``/``displayed="false"``) are left out.
    """
    data = source.encode("utf-8") if isinstance(source, str) else source
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"page source is not XML: {exc}") from exc
    sx, sy = scale
    elements: list[UIElement] = []
    xpaths: list[str] = []

    def visit(node: ET.Element, path: str) -> None:
        box = _box(node.attrib)
        a = node.attrib
        if (
            box is not None
            and node.tag not in _ROOTS
            and a.get("visible") != "false"
            and a.get("displayed") != "false"
        ):
            x1, y1, x2, y2 = box
            if x2 > x1 and y2 > y1:
                elements.append(_element(len(elements), node, (x1 * sx, y1 * sy, x2 * sx, y2 * sy)))
                xpaths.append(path)
        seen: dict[str, int] = {}
        for child in node:
            if not isinstance(child.tag, str):
                continue
            seen[child.tag] = seen.get(child.tag, 0) + 1
            visit(child, f"{path}/{child.tag}[{seen[child.tag]}]")

    visit(root, f"/{root.tag}")
    return elements, xpaths


def _box(a: dict[str, str]) -> tuple[float, float, float, float] | None:
    try:
        if "bounds" in a:
            m = _BOUNDS.fullmatch(a["bounds"].strip())
            if m is None:
                return None
            x1, y1, x2, y2 = (float(v) for v in m.groups())
            return x1, y1, x2, y2
        x, y = a.get("x", a.get("left")), a.get("y", a.get("top"))
        if x is None or y is None or "width" not in a or "height" not in a:
            return None
        x0, y0 = float(x), float(y)
        return (x0, y0, x0 + float(a["width"]), y0 + float(a["height"]))
    except ValueError:
        return None


def _element(index: int, node: ET.Element, box: tuple[float, ...]) -> UIElement:
    a = node.attrib
    cls = a.get("class") or a.get("type") or node.tag
    ios = cls.startswith("XCUIElementType")
    editable = _true(a.get("editable")) or any(k in cls for k in _EDITABLE)
    # UiAutomator2 says what is clickable/scrollable; XCUITest and the fake driver do not
    guess_click = editable or any(k in cls for k in _CLICKABLE)
    clickable = _true(a["clickable"]) if "clickable" in a else guess_click
    guess_scroll = any(k in cls for k in _SCROLLABLE)
    scrollable = _true(a["scrollable"]) if "scrollable" in a else guess_scroll
    text = a.get("text") or a.get("value") or ("" if not ios else a.get("label", ""))
    desc = a.get("content-desc") or a.get("label") or ("" if ios else a.get("name", ""))
    return UIElement(
        index=index,
        text=text,
        content_description=desc,
        class_name=cls,
        resource_id=a.get("resource-id") or a.get("id") or (a.get("name", "") if ios else ""),
        package_name=a.get("package", ""),
        x_min=round(box[0]),
        y_min=round(box[1]),
        x_max=round(box[2]),
        y_max=round(box[3]),
        is_clickable=clickable,
        is_editable=editable,
        is_scrollable=scrollable,
        is_checked=_true(a.get("checked")) or _true(a.get("selected")),
        is_focused=_true(a.get("focused")) or _true(a.get("hasFocus")),
        is_enabled=a.get("enabled", "true").lower() != "false",
    )


class AppiumPhone:
    """A phone behind an Appium server; see the module docstring."""

    def __init__(
        self,
        url: str,
        capabilities: dict[str, Any],
        *,
        connect_timeout: float = 5.0,
        command_timeout: float = 60.0,
        session_timeout: float = 180.0,
    ) -> None:
        self.url = url.rstrip("/")
        caps = dict(capabilities)
        self.app_map: dict[str, str] = dict(caps.pop(APPS_CAPABILITY, None) or {})
        self.capabilities = caps
        self.platform = str(caps.get("platformName", "")).lower()
        self._timeouts = (connect_timeout, command_timeout, session_timeout)
        self._driver: Any = None
        self.size: tuple[int, int] = (0, 0)  # set from the first screenshot
        self._scale = (1.0, 1.0)  # screenshot pixels -> driver coordinates
        self._last_tap: tuple[float, float] | None = None
        self._open_session()

    # -- plumbing ---------------------------------------------------------------------------

    def _fail(self, command: str, detail: str) -> PhoneError:
        return PhoneError(f"Appium server {self.url} failed on {command}: {detail}")

    def _call(self, command: str, fn: Callable[[], T]) -> T:
        if self._driver is None:
            raise self._fail(command, "the session is closed")
        try:
            return fn()
        except PhoneError:
            raise
        except _errors() as exc:
            raise self._fail(command, _describe(exc)) from exc

    @property
    def driver(self) -> Any:
        """The ``appium.webdriver.Remote`` of the current session (for tests and verifiers)."""
        return self._driver

    def _open_session(self) -> None:
        from appium import webdriver
        from appium.options.common import AppiumOptions
        from appium.webdriver.client_config import AppiumClientConfig

        connect, command, session = self._timeouts
        config = AppiumClientConfig(
            remote_server_addr=self.url,
            keep_alive=True,
            timeout=urllib3.Timeout(connect=connect, read=session),
            # a refused or timed-out connection is reported at once, never retried
            init_args_for_pool_manager={
                "init_args_for_pool_manager": {"retries": urllib3.Retry(connect=0, read=0)}
            },
        )
        try:
            options = AppiumOptions().load_capabilities(self.capabilities)
            self._driver = webdriver.Remote(self.url, options=options, client_config=config)
        except _errors() as exc:
            raise self._fail("new session", _describe(exc)) from exc
        config.timeout = urllib3.Timeout(connect=connect, read=command)
        try:
            self._measure()
        except PhoneError:
            self.close()
            raise

    def _measure(self) -> None:
        """Sets :attr:`size` from a screenshot and the scale to the driver's window size."""
        shot = self.screenshot()
        h, w = shot.shape[:2]
        self.size = (w, h)
        try:
            win = self._call("window size", self._driver.get_window_size)
            self._scale = (win["width"] / w, win["height"] / h)
        except PhoneError:
            self._scale = (1.0, 1.0)

    def _to_driver(self, x: float, y: float) -> tuple[int, int]:
        return round(x * self._scale[0]), round(y * self._scale[1])

    def _actions(self, command: str, build: Callable[[Any], None]) -> None:
        from selenium.webdriver.common.actions import interaction
        from selenium.webdriver.common.actions.action_builder import ActionBuilder
        from selenium.webdriver.common.actions.pointer_input import PointerInput

        def run() -> None:
            finger = PointerInput(interaction.POINTER_TOUCH, "finger")
            build(finger)
            ActionBuilder(self._driver, mouse=finger).perform()

        self._call(command, run)

    def _touch(self, finger: Any, x: float, y: float, hold_ms: float) -> None:
        dx, dy = self._to_driver(x, y)
        finger.create_pointer_move(duration=0, x=dx, y=dy, origin="viewport")
        finger.create_pointer_down(button=0)
        finger.create_pause(hold_ms / 1000)
        finger.create_pointer_up(button=0)

    # -- reads ------------------------------------------------------------------------------

    def screenshot(self) -> np.ndarray:
        from PIL import Image

        def grab() -> np.ndarray:
            png = self._driver.get_screenshot_as_png()
            return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.uint8)

        return self._call("screenshot", grab)

    def page_source(self) -> str:
        return self._call("page source", lambda: self._driver.page_source)

    def _parse(self) -> tuple[list[UIElement], list[str]]:
        source = self.page_source()
        scale = (1 / self._scale[0], 1 / self._scale[1])
        return self._call("page source", lambda: parse_page_source(source, scale))

    def elements(self) -> list[UIElement]:
        return self._parse()[0]

    def _current_app(self) -> str:
        """The package (Android) or bundle id (iOS) in front; the app under test if unknown."""

        def read() -> str:
            try:
                if self.platform == "android":
                    return self._driver.current_package or ""
                if self.platform == "ios":
                    return self._driver.execute_script("mobile: activeAppInfo")["bundleId"]
            except _errors() as exc:
                if not _unsupported(exc):
                    raise
            return self._app_name() or ""

        return self._call("foreground", read)

    def foreground(self) -> str:
        app = self._current_app()
        if app in LAUNCHERS:
            return "launcher"
        names = {v: k for k, v in self.app_map.items()}
        return names.get(app, app)

    def apps(self) -> list[str]:
        names = list(self.app_map)
        app = self._app_name()
        if app and app not in self.app_map.values() and app not in names:
            names.append(app)
        return names

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "backend": "appium",
            "server": self.url,
            "session_id": getattr(self._driver, "session_id", None),
            "platform": self.platform,
            "source": self.page_source(),
            "package": self._current_app(),
            "activity": None,
        }
        if self.platform == "android":
            out["activity"] = self._call("current activity", lambda: self._driver.current_activity)
        return out

    # -- gestures ---------------------------------------------------------------------------

    def tap(self, x: float, y: float) -> None:
        self._actions("tap", lambda f: self._touch(f, x, y, 50))
        self._last_tap = (x, y)

    def double_tap(self, x: float, y: float) -> None:
        def build(f: Any) -> None:
            self._touch(f, x, y, 40)
            f.create_pause(0.08)
            self._touch(f, x, y, 40)

        self._actions("double_tap", build)
        self._last_tap = (x, y)

    def long_press(self, x: float, y: float, ms: float = 800) -> None:
        self._actions("long_press", lambda f: self._touch(f, x, y, ms))
        self._last_tap = (x, y)

    def swipe(self, x1: float, y1: float, x2: float, y2: float, ms: float = 300) -> None:
        def build(f: Any) -> None:
            ax, ay = self._to_driver(x1, y1)
            bx, by = self._to_driver(x2, y2)
            f.create_pointer_move(duration=0, x=ax, y=ay, origin="viewport")
            f.create_pointer_down(button=0)
            f.create_pointer_move(duration=max(int(ms), 1), x=bx, y=by, origin="viewport")
            f.create_pointer_up(button=0)

        self._actions("swipe", build)

    # -- keys and navigation ----------------------------------------------------------------

    def type_text(self, text: str) -> None:
        """Types into the focused field.

        Android first tries ``mobile: type`` (UiAutomator2 types any Unicode into the focused
        view). Otherwise the target is the editable element under the last tap, else the one
        the page source marks focused, found by its XPath and sent the keys; else the session's
        active element.
        """
        from appium.webdriver.common.appiumby import AppiumBy

        def run() -> None:
            if self.platform == "android":
                try:
                    self._driver.execute_script("mobile: type", {"text": text})
                    return
                except _errors() as exc:
                    if not _unsupported(exc):
                        raise
            elements, xpaths = self._parse()
            target = None
            if self._last_tap is not None:
                x, y = self._last_tap
                under = [
                    i
                    for i, e in enumerate(elements)
                    if e.is_editable and e.x_min <= x <= e.x_max and e.y_min <= y <= e.y_max
                ]
                target = under[-1] if under else None  # the innermost
            if target is None:
                focused = [i for i, e in enumerate(elements) if e.is_editable and e.is_focused]
                target = focused[0] if focused else None
            if target is not None:
                self._driver.find_element(AppiumBy.XPATH, xpaths[target]).send_keys(text)
                return
            self._driver.switch_to.active_element.send_keys(text)

        self._call("type_text", run)

    def enter(self) -> None:
        def run() -> None:
            if self.platform == "android":
                self._driver.press_keycode(66)  # KEYCODE_ENTER
                return
            from selenium.webdriver.common.action_chains import ActionChains
            from selenium.webdriver.common.keys import Keys

            ActionChains(self._driver).send_keys(Keys.ENTER).perform()

        self._call("enter", run)

    def back(self) -> None:
        self._call("back", lambda: self._driver.back())

    def home(self) -> None:
        def run() -> None:
            if self.platform != "ios":
                try:
                    self._driver.press_keycode(3)  # KEYCODE_HOME
                    return
                except _errors() as exc:
                    if self.platform == "android" or not _unsupported(exc):
                        raise
            self._driver.execute_script("mobile: pressButton", {"name": "home"})

        self._call("home", run)

    def open_app(self, name: str) -> None:
        app = self.app_map.get(name, name)
        self._call(f"open_app({name!r})", lambda: self._driver.activate_app(app))

    # -- lifecycle --------------------------------------------------------------------------

    def _app_id(self) -> str | None:
        """The package or bundle id of the app under test, if the capabilities name one."""
        c = self.capabilities
        for key in ("appium:appPackage", "appPackage", "appium:bundleId", "bundleId"):
            if c.get(key):
                return str(c[key])
        return None

    def _app_name(self) -> str | None:
        """The app under test's id, else the stem of its ``appium:app`` file (fake driver)."""
        app = self._app_id()
        if app is None and isinstance(self.capabilities.get("appium:app"), str):
            app = PurePosixPath(self.capabilities["appium:app"].split("?")[0]).stem or None
        return app

    def start(self, setup: dict[str, Any], seed: int) -> None:
        """Relaunches the app under test (``setup["app"]`` or the capabilities' package/bundle
        id) from a clean process; ``setup["reset"] == "session"`` or no known app id -> a new
        session. The seed is ignored: Appium cannot seed a device."""
        del seed
        app = setup.get("app")
        app = self.app_map.get(app, app) if app else self._app_id()
        if setup.get("reset") == "session" or app is None or self._driver is None:
            self.close()
            self._open_session()
        else:
            self._call("start", lambda: (self._driver.terminate_app(app), None)[1])
            self._call("start", lambda: self._driver.activate_app(app))
        self._last_tap = None

    def close(self) -> None:
        driver, self._driver = self._driver, None
        if driver is None:
            return
        try:
            driver.quit()
        except _errors():  # OSError among them covers TimeoutError
            pass  # the session or the server is already gone
