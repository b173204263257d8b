"""The embedded phone: Chromium with touch emulation, a launcher, system bars, synthesized apps.

No emulator image is needed. A session gets a mobile browser context (``is_mobile``,
``has_touch``, the device profile's size and pixel ratio) and its own copy of every installed
app, in their mobile layouts, each with its own database: when the task's app is a replica of a
real Android app (``synth_apps/replicas/``), the phone holds every replica, as AndroidWorld's
emulator holds its apps (a task may span two of them); otherwise the task's app plus the other
built-in synthesized domains. Rows a task plants (``setup["plant"]``, checked against the apps'
specs) are inserted after every restore, before the agent's first look. The screen is the page
framed by a status bar and a navigation bar (back, home) drawn around the page's screenshot;
taps on the bars act as Android's do. Gestures are real touch events sent through the Chrome
DevTools Protocol (``Input.dispatchTouchEvent``): a long press holds, a swipe moves in steps
over its duration, so pages scroll as a finger would scroll them. The app state lives in the
apps' databases, so a reset restores the files and shows the launcher again. The phone's apps
and launcher answer only this phone: they are opened with the phone's key, which its context
carries as an ``HttpOnly`` cookie (see :mod:`palaestra.synth_apps.app`), so another session's
phone holding their URLs is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from palaestra.envs.mobile.phone import PhoneError, UIElement
from palaestra.envs.runtimes.browser import origin_guard, runtime, when_loaded
from palaestra.synth_apps import data
from palaestra.synth_apps.app import AppSession, admit, host, new_key
from palaestra.synth_apps.driver import spec_for
from palaestra.synth_apps.spec import AppSpec, SpecError, domain_names, replica_names
from palaestra.synth_apps.variants import make_variant

log = logging.getLogger("palaestra.mobile")
HERE = Path(__file__).parent
SYSTEM_UI_JS = (HERE / "system_ui.js").read_text()
ELEMENTS_JS = (HERE / "elements.js").read_text()
STATUS_BAR, NAV_BAR = 24, 48  # CSS px, as on Android
FLING_TAP_S = 0.2
FOCUS_WAIT_MS = 500
FOCUSED_FIELD = """() => {
    const e = document.activeElement;
    return !!e && (e.tagName === "INPUT" || e.tagName === "TEXTAREA" || e.isContentEditable);
}"""


@dataclass(frozen=True)
class DeviceProfile:
    name: str
    width: int  # CSS px, the whole screen
    height: int
    pixel_ratio: float


PROFILES = {
    "phone": DeviceProfile("phone", 390, 844, 1.0),
    "pixel-7": DeviceProfile("pixel-7", 412, 915, 2.0),
    "small": DeviceProfile("small", 360, 740, 1.0),
}


def _package(spec: AppSpec) -> str:
    """An app's package name in ``ui_elements``: a replica's is the real app's (AndroidWorld's
    elements carry it, e.g. ``com.simplemobiletools.calendar.pro``); other apps show their
    title, as before."""
    return spec.replica_of.package if spec.replica_of else spec.title


def _loadable(names: list[str], wanted: str) -> list[str]:
    """The replicas whose spec loads: a broken file of another app (while its writer edits
    it) is logged and left off the phone; the task's own app must load."""
    out = []
    for name in names:
        try:
            spec_for(name)
        except SpecError as exc:
            if name == wanted:
                raise
            log.warning("replica %s left off the phone: %s", name, exc)
            continue
        out.append(name)
    return out


class EmbeddedPhone:
    def __init__(self, profile: str = "phone", timeout_s: float = 15.0) -> None:
        if profile not in PROFILES:
            raise PhoneError(f"unknown device profile {profile!r}; known: {sorted(PROFILES)}")
        self.profile = PROFILES[profile]
        p = self.profile
        self.page_size = (p.width, p.height - STATUS_BAR - NAV_BAR)
        self.size = (round(p.width * p.pixel_ratio), round(p.height * p.pixel_ratio))
        self.top = round(STATUS_BAR * p.pixel_ratio)
        self.bottom = self.size[1] - round(NAV_BAR * p.pixel_ratio)
        self.rt = runtime()
        self.timeout_s = timeout_s
        self._ms = timeout_s * 1000
        self._context: Any = None
        self._page: Any = None
        self._cdp: Any = None
        self._apps: dict[str, AppSession] = {}
        self._main: AppSession | None = None
        self._launcher = ""
        self._key: tuple[Any, ...] | None = None
        self._credential = new_key()  # the phone's apps and launcher answer this key only
        self._navigating = False

    # ----- plumbing --------------------------------------------------------------------------
    def _call(self, coro: Any) -> Any:
        try:
            return self.rt.call(lambda: coro, self.timeout_s)
        except TimeoutError:
            raise PhoneError(f"the phone did not answer within {self.timeout_s:g} s") from None

    async def _ensure_page(self) -> None:
        if self._context is not None and self._page is not None and not self._page.is_closed():
            return
        browser = await self.rt.browser()
        p = self.profile
        self._context = await browser.new_context(
            viewport={"width": self.page_size[0], "height": self.page_size[1]},
            device_scale_factor=p.pixel_ratio,
            is_mobile=True,
            has_touch=True,
            service_workers="block",
            proxy=origin_guard(frozenset([host().origin])),
        )
        await admit(self._context, self._credential)
        await self._context.add_init_script(SYSTEM_UI_JS)
        self._page = await self._context.new_page()
        self._page.on("request", self._on_request)
        self._page.on("dialog", lambda d: asyncio.ensure_future(d.dismiss()))
        self._cdp = await self._context.new_cdp_session(self._page)

    def _on_request(self, request: Any) -> None:
        if request.is_navigation_request() and request.frame == self._page.main_frame:
            self._navigating = True

    async def _settle(self) -> None:
        """After a gesture: if it started a page load, wait for the new page."""
        for _ in range(5):
            if self._navigating:
                break
            await asyncio.sleep(0.01)
        if self._navigating:
            self._navigating = False
            with contextlib.suppress(Exception):
                await self._page.wait_for_load_state("load", timeout=self.timeout_s * 1000)

    def _page_point(self, x: float, y: float) -> tuple[float, float]:
        r = self.profile.pixel_ratio
        return x / r, (y - self.top) / r

    async def _touch(self, kind: str, points: list[tuple[float, float]]) -> None:
        await self._cdp.send(
            "Input.dispatchTouchEvent",
            {"type": kind, "touchPoints": [{"x": x, "y": y} for x, y in points]},
        )

    # ----- Phone -----------------------------------------------------------------------------
    def start(self, setup: dict[str, Any], seed: int) -> None:
        key = (setup.get("app"), setup.get("variant", 0), setup.get("data_seed", 0))
        if key != self._key:
            self._close_apps()
            self._open_apps(setup)
            self._key = key
        installed = {app.spec.name: app for app in self._apps.values()}
        main = self._main.spec.name if self._main else None
        rows = data.check_plant(
            setup.get("plant", []), {n: a.spec for n, a in installed.items()}, main
        )  # checked before anything changes: a bad plant leaves the phone as it was
        for app in self._apps.values():
            app.restore()
        if rows:
            with contextlib.ExitStack() as locks:
                for app in installed.values():
                    locks.enter_context(app.lock)
                data.plant_rows(rows, {n: a.db for n, a in installed.items()})
        self._call(self._start())

    def _open_apps(self, setup: dict[str, Any]) -> None:
        wanted = setup.get("app")
        if wanted in replica_names():  # the replica set, in a fixed order (a real launcher's)
            names = sorted(
                _loadable(replica_names(), wanted), key=lambda n: spec_for(n).title.casefold()
            )
        else:  # the task's app first, then the other built-in domains
            names = [wanted] if wanted else []
            names += [d for d in domain_names() if d != wanted and spec_for(d).name != wanted]
        for name in names:
            spec = spec_for(name)
            variant = int(setup.get("variant", 0)) if name == wanted else 0
            seed = int(setup.get("data_seed", 0)) if name == wanted else 0
            session = host().open(
                spec, make_variant(spec, variant, "mobile"), seed, key=self._credential
            )
            self._apps[spec.title] = session
            if name == wanted:
                self._main = session
        self._launcher = host().open_launcher(list(self._apps.values()), self._credential)

    def _close_apps(self) -> None:
        for app in self._apps.values():
            host().close(app.token)
        self._apps.clear()
        self._main = None
        if self._launcher:
            host().close_launcher(self._launcher)
            self._launcher = ""

    async def _start(self) -> None:
        await self._ensure_page()
        for attempt in range(2):  # a navigation the last episode started may still be landing
            try:
                await self._page.goto(self._launcher, wait_until="load")
                break
            except Exception as exc:
                if attempt or "interrupted by another navigation" not in str(exc):
                    raise
                with contextlib.suppress(Exception):
                    await self._page.wait_for_load_state("load")
        self._navigating = False

    def screenshot(self) -> np.ndarray:
        png = self._call(
            when_loaded(self._page, lambda: self._page.screenshot(type="png"), self._ms)
        )
        page = Image.open(io.BytesIO(png)).convert("RGB")
        screen = Image.new("RGB", self.size, "#111827")
        screen.paste(page, (0, self.top))
        draw = ImageDraw.Draw(screen)
        r = self.profile.pixel_ratio
        draw.text((12 * r, 5 * r), "9:41", fill="white")
        draw.text((self.size[0] - 44 * r, 5 * r), "5G 87%", fill="white")
        mid = (self.bottom + self.size[1]) / 2
        for cx, glyph in ((self.size[0] / 6, "back"), (self.size[0] / 2, "home")):
            if glyph == "home":
                draw.ellipse((cx - 9 * r, mid - 9 * r, cx + 9 * r, mid + 9 * r), outline="white")
            else:
                draw.polygon(
                    [(cx + 7 * r, mid - 9 * r), (cx + 7 * r, mid + 9 * r), (cx - 8 * r, mid)],
                    outline="white",
                )
        return np.asarray(screen)

    async def _read(self, script: str, arg: Any) -> Any:
        return await when_loaded(self._page, lambda: self._page.evaluate(script, arg), self._ms)

    def elements(self) -> list[UIElement]:
        raw = self._call(self._read(ELEMENTS_JS, [self.top, self.profile.pixel_ratio]))
        title = self.foreground()
        app = self._apps.get(title)
        package = _package(app.spec) if app is not None else title
        out = [UIElement(index=i, package_name=package, **item) for i, item in enumerate(raw)]
        w = self.size[0]
        for label, x0, x1 in (("Back", 0, w // 3), ("Home", w // 3, 2 * w // 3)):
            out.append(
                UIElement(
                    index=len(out),
                    content_description=label,
                    class_name="android.widget.ImageButton",
                    resource_id=f"com.android.systemui:id/{label.lower()}",
                    package_name="com.android.systemui",
                    x_min=x0,
                    y_min=self.bottom,
                    x_max=x1,
                    y_max=self.size[1],
                    is_clickable=True,
                )
            )
        return out

    def foreground(self) -> str:
        url = self._page.url if self._page is not None else ""
        if url.startswith(self._launcher) and self._launcher:
            return "launcher"
        for title, app in self._apps.items():
            if f"/s/{app.token}/" in url:
                return title
        return "launcher" if not url or url == "about:blank" else url

    def tap(self, x: float, y: float) -> None:
        if y >= self.bottom:
            return (
                self.back()
                if x < self.size[0] / 3
                else (self.home() if x < 2 * self.size[0] / 3 else None)
            )
        if y < self.top:
            return None  # the status bar does nothing
        self._call(self._tap(*self._page_point(x, y)))

    async def _tap(self, x: float, y: float, count: int = 1) -> None:
        for _ in range(count):
            await self._touch("touchStart", [(x, y)])
            await self._touch("touchEnd", [])
        await self._settle()

    def double_tap(self, x: float, y: float) -> None:
        self._call(self._tap(*self._page_point(x, y), count=2))

    def long_press(self, x: float, y: float, ms: float = 800) -> None:
        self._call(self._long_press(*self._page_point(x, y), ms))

    async def _long_press(self, x: float, y: float, ms: float) -> None:
        await self._touch("touchStart", [(x, y)])
        await asyncio.sleep(ms / 1000)
        await self._touch("touchEnd", [])
        await self._settle()

    def swipe(self, x1: float, y1: float, x2: float, y2: float, ms: float = 300) -> None:
        self._call(self._swipe(self._page_point(x1, y1), self._page_point(x2, y2), ms))

    async def _swipe(self, a: tuple[float, float], b: tuple[float, float], ms: float) -> None:
        steps = max(4, int(ms / 16))  # one move per frame: the speed is the finger's
        before = await self._scrolled()
        await self._touch("touchStart", [a])
        for i in range(1, steps + 1):
            t = i / steps
            await self._touch("touchMove", [(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)])
            await asyncio.sleep(ms / 1000 / steps)
        await self._touch("touchEnd", [])
        await self._settle()
        # a swipe flings: wait for the content to come to rest, as a user would before tapping
        await self._page.wait_for_function(
            """() => new Promise((done) => {
                let last = -1, still = 0;
                const look = () => {
                    const y = window.scrollY + window.scrollX * 1e6;
                    still = y === last ? still + 1 : 0;
                    last = y;
                    if (still >= 3) done(true); else requestAnimationFrame(look);
                };
                look();
            })""",
            timeout=2000,
        )
        if before is not None and before == await self._scrolled():
            # a fling that moved nothing (a row swiped sideways) still swallows a tap that
            # comes within Chrome's tap-suppression window (~180 ms); a finger takes that long
            await asyncio.sleep(FLING_TAP_S)

    async def _scrolled(self) -> list[float] | None:
        """The page's scroll position (None while a new page loads)."""
        with contextlib.suppress(Exception):
            return await self._page.evaluate("() => [window.scrollX, window.scrollY]")
        return None

    def type_text(self, text: str) -> None:
        self._call(self._type(text))

    async def _type(self, text: str) -> None:
        # the click a tap makes (and the focus it gives a field) lands a moment after the touch
        # events return, later still on a loaded machine: typing before it would go nowhere
        with contextlib.suppress(Exception):
            await self._page.wait_for_function(FOCUSED_FIELD, timeout=FOCUS_WAIT_MS)
        # a date or time field takes its value as a phone's picker would set it
        picked = await self._read(
            """(text) => {
                const e = document.activeElement;
                if (!e || !["date", "time", "datetime-local"].includes(e.type)) return false;
                e.value = text;
                e.dispatchEvent(new Event("input", {bubbles: true}));
                e.dispatchEvent(new Event("change", {bubbles: true}));
                return true;
            }""",
            text,
        )
        if not picked:  # replaces what the field holds; insert_text takes any Unicode
            await self._page.keyboard.press("ControlOrMeta+a")
            await self._page.keyboard.insert_text(text)

    def enter(self) -> None:
        self._call(self._enter())

    async def _enter(self) -> None:
        await self._page.keyboard.press("Enter")
        await self._settle()

    def back(self) -> None:
        self._call(self._back())

    async def _back(self) -> None:
        picker = await self._page.query_selector("#__palaestra_picker")
        if picker is not None:  # back closes a dialog first, as on Android
            await picker.evaluate("e => e.remove()")
            return
        menu = await self._page.query_selector("[data-back-closes]:not([hidden])")
        if menu is not None:  # an app's dialog (a row's context menu)
            await menu.evaluate("e => { e.hidden = true; }")
            return
        if self.foreground() == "launcher":
            return
        response = await self._page.go_back(wait_until="load")
        if response is None and self._page.url.startswith("about:"):
            await self._page.goto(self._launcher, wait_until="load")

    def home(self) -> None:
        self._call(self._page.goto(self._launcher, wait_until="load"))

    def apps(self) -> list[str]:
        return list(self._apps)

    def open_app(self, name: str) -> None:
        match = next((t for t in self._apps if t.casefold() == name.strip().casefold()), None)
        if match is None:
            raise PhoneError(f"no app named {name!r} on this phone; installed: {self.apps()}")
        self._call(self._page.goto(host().url(self._apps[match]), wait_until="load"))

    def state(self) -> dict[str, Any]:
        shown = self.foreground()
        return {
            "app_db": str(self._main.db) if self._main else "",
            # every app's database by spec name: a task spanning two apps is checked in both
            "app_dbs": {app.spec.name: str(app.db) for app in self._apps.values()},
            "foreground": shown,
            # the app on screen by spec name ("launcher" on the home screen): a task that ends
            # in an app is checked by its name, never by a title a variant may change
            "foreground_app": self._apps[shown].spec.name if shown in self._apps else shown,
        }

    def close(self) -> None:
        context, self._context = self._context, None
        if context is not None:
            with contextlib.suppress(Exception):
                self._call(context.close())
        self._close_apps()
