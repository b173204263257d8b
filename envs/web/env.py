"""``palaestra/web-v0``: real Chromium through Playwright, BrowserGym's action names.

The env runs in a worker's session thread; every browser operation is a coroutine handed to the
worker's :class:`~palaestra.envs.runtimes.browser.BrowserRuntime`. A reset takes a fresh
context from the warm pool, installs the origin guard and opens the task's start page. The agent
acts only through the action set (no JavaScript of its own); element ids (``bid``) come from the
accessibility-tree text. Pages reach only the task's origins: other requests are refused and
reported in ``last_action_error``. Folders named in the task (``setup.sites``: name -> folder)
are served on loopback by :mod:`palaestra.envs.web.sites`; ``setup.start_url`` may name them
(``"{app}/index.html"``). While an episode runs, the next reset's context is already loading the
start page, so a reset mostly costs seeding the task and the first observation.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args
from urllib.parse import urlsplit

import numpy as np
from gymnasium import spaces

from palaestra.actions import Action, ActionSet, Param, primitive
from palaestra.chat import ANSWER, INFEASIBLE, USER
from palaestra.codec import EncodedImage
from palaestra.envs.base import PalaestraEnv
from palaestra.envs.runtimes.browser import BrowserRuntime, is_closed_error, runtime, when_loaded
from palaestra.envs.runtimes.simuser.bridge import asker, exchange
from palaestra.envs.web import cdp, sites
from palaestra.envs.web.drivers import TaskDriver, driver_for
from palaestra.envs.web.options import Part
from palaestra.errors import ActionError, EnvCrashed, ResetNeeded
from palaestra.spaces import FreeText, JSONText
from palaestra.tasks import Task

#: the lean default: what a text or vision agent needs, taken in one page evaluation
PARTS = ("screenshot", "axtree", "url", "title", "goal", "chat", "tabs")
#: BrowserGym's observation keys (``browsergym.core.env.BrowserEnv``), asked for by name:
#: the CDP objects cost a DOM snapshot and Chrome's AX tree (see :mod:`.cdp`)
CDP_PARTS = ("axtree_object", "dom_object", "extra_element_properties")
#: every part a client may name: the options model's ``Part`` is the one list of them
ALL_PARTS: tuple[str, ...] = get_args(Part)
BROWSERGYM_PARTS = ALL_PARTS[len(PARTS) :]
MAX_OBJECT = 20_000_000  # a CDP object as JSON text (a large page's DOM snapshot is MBs)
OBSERVE_JS = (Path(__file__).parent / "observe.js").read_text()
LISTEN_JS = (Path(__file__).parent / "listen.js").read_text()
MAX_AXTREE = 200_000
MAX_TEXT = 20_000
NOOP_MAX_MS = 10_000
_B = Param("bid", "id", "element id from the accessibility tree")
_BUTTON = Param("button", "str", choices=("left", "middle", "right"), default="left")

WEB_ACTIONS = ActionSet(
    [
        primitive("click", "Click an element.", _B, _BUTTON),
        primitive("dblclick", "Double-click an element.", _B, _BUTTON),
        primitive("fill", "Replace the text of an input.", _B, Param("value", "str")),
        primitive("select_option", "Select option(s) of a <select>.", _B, Param("options", "strs")),
        primitive("hover", "Move the mouse over an element.", _B),
        primitive("press", "Press a key combination on an element.", _B, Param("key_comb")),
        primitive("focus", "Focus an element.", _B),
        primitive("clear", "Clear an input.", _B),
        primitive(
            "scroll", "Scroll the page.", Param("delta_x", "float"), Param("delta_y", "float")
        ),
        primitive(
            "mouse_click",
            "Click at page coordinates.",
            Param("x", "float", minimum=0),
            Param("y", "float", minimum=0),
            _BUTTON,
        ),
        primitive("mouse_move", "Move the mouse.", Param("x", "float"), Param("y", "float")),
        primitive(
            "mouse_drag",
            "Drag from one point to another.",
            Param("from_x", "float"),
            Param("from_y", "float"),
            Param("to_x", "float"),
            Param("to_y", "float"),
        ),
        primitive("keyboard_type", "Type text into the focused element.", Param("text")),
        primitive("keyboard_press", "Press a key combination.", Param("key")),
        primitive("goto", "Open a URL (allowed origins only).", Param("url")),
        primitive("go_back", "Go back in history."),
        primitive("go_forward", "Go forward in history."),
        primitive("new_tab", "Open a new blank tab."),
        primitive("tab_focus", "Switch to a tab.", Param("index", "int", minimum=0)),
        primitive("tab_close", "Close the current tab."),
        primitive(
            "send_msg_to_user", "Send a message to the user (answers go here).", Param("text")
        ),
        primitive(
            "ask_user",
            "Ask the user for a detail the task leaves out; the answer appears in the chat.",
            Param("question", max_length=2000),
        ),
        primitive("report_infeasible", "Say the task cannot be done, and why.", Param("reason")),
        primitive("done", "Say the task is finished (ends the episode)."),
        primitive(
            "noop",
            "Do nothing, waiting wait_ms milliseconds.",
            Param("wait_ms", "float", minimum=0, maximum=NOOP_MAX_MS, default=1000.0),
        ),
    ],
    name="web",
)
#: BrowserGym's names for the same drag primitive
ALIASES = {"mouse_drag_and_drop": "mouse_drag"}


class Browsing:
    """One context's state: its active page, the chat and the notes for the agent.

    Event handlers write here rather than into the env, so a context prepared in the
    background for the next reset never touches the episode being played.
    """

    def __init__(self, context: Any, generation: int) -> None:
        self.context = context
        self.generation = generation
        self.page = context.pages[0]
        self.chat: list[str] = []
        self.stamps: list[float] = []  # when each chat line was first observed
        self.started = time.time()
        self.notes: list[str] = []
        self._tasks: set[asyncio.Future[Any]] = set()
        context.on("page", self._adopt)
        self._watch(self.page)

    def _watch(self, page: Any) -> None:
        page.on("dialog", self._dialog)
        page.on("requestfailed", self._failed)

    def _failed(self, request: Any) -> None:
        if "ERR_PROXY_CONNECTION_FAILED" in (request.failure or ""):
            parts = urlsplit(request.url)
            self.notes.append(
                f"blocked a request to {parts.scheme}://{parts.netloc} (not an allowed origin)"
            )

    def _adopt(self, page: Any) -> None:
        """A popup or new tab becomes the active page, as a user would see it."""
        self._watch(page)
        if page is not self.page:
            self.chat.append("[browser] a new tab opened and is now the active one")
        self.page = page

    def _dialog(self, dialog: Any) -> None:
        self.chat.append(f"[{dialog.type}] {dialog.message}")
        task = asyncio.ensure_future(_dismiss(dialog))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


class WebProbe:
    """Privileged reads for verifiers, through the worker's Playwright, not the agent."""

    def __init__(self, env: WebEnv) -> None:
        self.env = env

    def read(self) -> dict[str, Any]:
        return self.env._run(self.env._privileged_state())


class WebEnv(PalaestraEnv):
    family = "web"
    action_set = WEB_ACTIONS

    def __init__(
        self,
        task: Any = None,
        *,
        viewport: Sequence[int] | None = None,
        observe: Sequence[str] = PARTS,
        action_timeout_s: float = 5.0,
        navigation_timeout_s: float = 10.0,
        axtree_max_chars: int = 100_000,
        **kwargs: Any,
    ) -> None:
        super().__init__(task, **kwargs)
        if isinstance(observe, str):
            raise TypeError(f"observe must be a list of parts from {ALL_PARTS}, not a string")
        unknown = set(observe) - set(ALL_PARTS)
        if unknown:
            raise TypeError(f"observe: unknown part(s) {sorted(unknown)}; choose from {ALL_PARTS}")
        self.parts = tuple(p for p in ALL_PARTS if p in observe)
        setup = self.task.setup if self.task else {}
        self.viewport = tuple(viewport or setup.get("viewport") or (1280, 720))
        self.action_timeout_ms = action_timeout_s * 1000
        self.navigation_timeout_ms = navigation_timeout_s * 1000
        self.axtree_max_chars = min(axtree_max_chars, MAX_AXTREE)
        # a hung page is told from a slow action only after the longest legitimate one
        self._guard_s = max(action_timeout_s + navigation_timeout_s, NOOP_MAX_MS / 1000) + 5
        space: dict[str, spaces.Space] = {}
        if "screenshot" in self.parts:
            w, h = self.viewport
            space["screenshot"] = spaces.Box(0, 255, (h, w, 3), np.uint8)
        if "axtree" in self.parts:
            space["axtree"] = FreeText(MAX_AXTREE + 100)
        for part in ("url", "title", "goal", "chat", "tabs"):
            if part in self.parts:
                space[part] = FreeText(MAX_TEXT)
        space.update({k: v for k, v in _browsergym_spaces().items() if k in self.parts})
        space["last_action_error"] = FreeText(2000)
        self.observation_space = spaces.Dict(space)
        self.rt: BrowserRuntime = runtime()
        # the browser starts with the session (under its creation timeout), not in a reset
        self.rt.call(self.rt.browser, 60)
        self._b: Browsing | None = None
        self._next_bid = 1
        self._driver: TaskDriver | None = None
        self._drivers: dict[str, TaskDriver] = {}  # a driver lives as long as the session
        self._user: Any = None  # answers ask_user from the task's hidden details
        self._prepared: tuple[Any, asyncio.Future[Any]] | None = None
        self._prefetch: tuple[frozenset[str], str | None] | None = None
        self._plan_of_b: tuple[frozenset[str], str | None] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self._goal = ""
        self._last_action: tuple[int, list[str]] = (0, [])  # (step, the step's actions)
        self._started = time.monotonic()

    # ----- plumbing ---------------------------------------------------------------------
    def _run(self, coro: Any) -> Any:
        """Run on the browser loop; a browser that is gone or hung fails the session."""
        try:
            return self.rt.call(lambda: coro, self._guard_s)
        except TimeoutError:
            self._discard_context()
            raise EnvCrashed(
                f"the page stopped responding for {self._guard_s:g} s (a script in the page "
                "may be looping); the session's browser context was closed"
            ) from None
        except ActionError:
            raise
        except Exception as exc:
            if is_closed_error(exc) or self._context_dead():
                raise EnvCrashed(
                    "Chromium crashed or closed this session's page; the session is failed "
                    "(new sessions get a new browser)"
                ) from None
            raise

    @property
    def _open(self) -> Browsing:
        """The open browsing session: acting or looking needs one, and reset opens it."""
        if self._b is None:
            raise ResetNeeded("no page is open: call reset() first")
        return self._b

    def _context_dead(self) -> bool:
        return self._b is not None and self._b.generation != self.rt.generation

    def _discard_context(self) -> None:
        browsing, self._b = self._b, None
        prepared, self._prepared = self._prepared, None
        if browsing is not None:
            asyncio.run_coroutine_threadsafe(_close_quietly(browsing.context), self.rt.loop)
        if prepared is not None:
            asyncio.run_coroutine_threadsafe(_close_prepared(prepared[1]), self.rt.loop)

    # ----- lifecycle hooks -------------------------------------------------------------
    def _setup(self, task: Task | None) -> None:
        self._started = time.monotonic()
        seed = int(self.np_random.integers(2**31 - 1))
        self._user = asker(task, seed)
        self._run(self._async_setup(task, seed))

    def _apply(self, action: Action) -> bool:
        step, calls = self._last_action
        self._last_action = (
            self._steps,
            [*calls, action.to_call()] if step == self._steps else [action.to_call()],
        )
        return bool(self._run(self._async_apply(action)))

    def _observe(self) -> dict[str, Any]:
        obs = self._run(self._async_observe())
        if "last_action" in self.parts:
            step, calls = self._last_action
            obs["last_action"] = "\n".join(calls)[:MAX_TEXT] if step == self._steps else ""
        if "elapsed_time" in self.parts:
            obs["elapsed_time"] = np.array([time.monotonic() - self._started])
        return obs

    def state_probe(self) -> WebProbe:
        return WebProbe(self)

    def render(self) -> np.ndarray:
        return self._run(self._screenshot())

    def close(self) -> None:
        self._discard_context()
        for driver in self._drivers.values():
            if hasattr(driver, "close"):
                driver.close()
        self._drivers.clear()

    # ----- async side ------------------------------------------------------------------
    def _plan(self, task: Task | None) -> tuple[Any, ...]:
        """What a reset needs: driver, allowed origins, start URL and the setup."""
        setup = dict(task.setup) if task else {}
        driver = driver_for(setup, self._drivers)
        folders = {**driver.sites(setup), **setup.get("sites", {})}
        origins = {
            name: where if str(where).startswith("http://") else sites.origin(where)
            for name, where in folders.items()
        }
        allowed = frozenset([*origins.values(), *setup.get("allowed_origins", [])])
        return driver, allowed, driver.start_url(setup, origins), setup

    async def _prepare(
        self, allowed: frozenset[str], start: str | None, admit: Any = None
    ) -> Browsing:
        """A fresh context showing the start page, ready for the episode to begin. ``admit``
        (a driver's, e.g. a synthesized app's credential) runs on the context before any load."""
        context = await self.rt.context(self.viewport, allowed)
        context.set_default_timeout(self.action_timeout_ms)
        context.set_default_navigation_timeout(self.navigation_timeout_ms)
        await context.add_init_script(LISTEN_JS)  # before any page script binds a listener
        if admit is not None:
            await admit(context)
        browsing = Browsing(context, self.rt.generation)
        if start:
            await browsing.page.goto(start, wait_until="load")
        return browsing

    async def _async_setup(self, task: Task | None, seed: int) -> None:
        driver, allowed, start, setup = self._plan(task)
        old = self._b
        reuse = getattr(driver, "reuse_context", False)
        if reuse and old is not None and await self._reuse(old, (allowed, start)):
            self._driver = driver
            self._next_bid = 1
            self._goal = await driver.begin(old.page, setup, seed) or (
                task.instruction if task else ""
            )
            return
        prepared, self._prepared = self._prepared, None
        ready = None
        if prepared is not None and prepared[0] == (allowed, start):
            with contextlib.suppress(Exception):
                ready = await prepared[1]
        elif prepared is not None:
            self._background(_close_prepared(prepared[1]))
        if ready is None or ready.generation != self.rt.generation:
            ready = await self._prepare(allowed, start, getattr(driver, "admit", None))
        self._b = ready
        self._driver = driver
        self._next_bid = 1  # ids are unique within an episode; a new episode starts over
        if old is not None:
            self._background(_close_quietly(old.context))
        self._goal = await driver.begin(ready.page, setup, seed) or (
            task.instruction if task else ""
        )
        self._prefetch = None if getattr(driver, "reuse_context", False) else (allowed, start)
        self._plan_of_b = (allowed, start)

    async def _reuse(self, old: Browsing, plan: tuple[Any, ...]) -> bool:
        """Start the next episode in the same context: for tasks whose state lives on a server
        (a synthesized app's database), a new context would only cost the CPU of a new renderer
        process. Extra tabs close, the chat clears, the start page loads again."""
        if old.generation != self.rt.generation or self._plan_of_b != plan:
            return False
        try:
            for extra in old.context.pages[1:]:
                await extra.close()
            old.page = old.context.pages[0]
            old.chat.clear()
            old.stamps.clear()
            old.started = time.time()
            old.notes.clear()
            if plan[1]:
                await old.page.goto(plan[1], wait_until="load")
        except Exception:
            return False
        return True

    def _background(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _locator(self, bid: str) -> Any:
        return self._open.page.locator(f'[data-bid="{_css(bid)}"]')

    async def _element(self, bid: str) -> Any:
        loc = self._locator(bid)
        if await loc.count() == 0:
            raise ActionError(
                f"no element with bid {bid!r} on the page (ids come from the latest "
                "accessibility tree; the element may have gone after a navigation)",
                bid=bid,
            )
        return loc.first

    async def _async_apply(self, action: Action) -> bool:
        b = self._open
        a, page = action.args, b.page
        name = ALIASES.get(action.name, action.name)
        try:
            if name in (
                "click",
                "dblclick",
                "fill",
                "select_option",
                "hover",
                "press",
                "focus",
                "clear",
            ):
                el = await self._element(a["bid"])
                if name == "click":
                    await el.click(button=a["button"])
                elif name == "dblclick":
                    await el.dblclick(button=a["button"])
                elif name == "fill":
                    await el.fill(a["value"])
                elif name == "select_option":
                    await el.select_option(a["options"])
                elif name == "hover":
                    await el.hover()
                elif name == "press":
                    await el.press(a["key_comb"])
                elif name == "focus":
                    await el.focus()
                else:
                    await el.clear()
            elif name == "scroll":
                await page.mouse.wheel(a["delta_x"], a["delta_y"])
            elif name == "mouse_click":
                await page.mouse.click(a["x"], a["y"], button=a["button"])
            elif name == "mouse_move":
                await page.mouse.move(a["x"], a["y"])
            elif name == "mouse_drag":
                await page.mouse.move(a["from_x"], a["from_y"])
                await page.mouse.down()
                await page.mouse.move(a["to_x"], a["to_y"], steps=5)
                await page.mouse.up()
            elif name == "keyboard_type":
                await page.keyboard.type(a["text"])
            elif name == "keyboard_press":
                await page.keyboard.press(a["key"])
            elif name == "goto":
                if urlsplit(a["url"]).scheme not in ("http", "https", "about"):
                    raise ActionError(f"goto: only http(s) URLs can be opened, not {a['url']!r}")
                await page.goto(a["url"], wait_until="load")
            elif name == "go_back":
                await page.go_back(wait_until="load")
            elif name == "go_forward":
                await page.go_forward(wait_until="load")
            elif name == "new_tab":
                b.page = await b.context.new_page()
            elif name == "tab_focus":
                pages = b.context.pages
                if a["index"] >= len(pages):
                    raise ActionError(f"there is no tab {a['index']}; {len(pages)} open")
                b.page = pages[a["index"]]
                await b.page.bring_to_front()
            elif name == "tab_close":
                if len(b.context.pages) == 1:
                    raise ActionError("cannot close the last tab")
                await page.close()
                b.page = b.context.pages[-1]
            elif name == "send_msg_to_user":
                b.chat.append(f"{ANSWER}{a['text']}")
            elif name == "ask_user":
                b.chat += exchange(self._user, a["question"])
            elif name == "report_infeasible":
                b.chat.append(f"{INFEASIBLE}{a['reason']}")
                return True
            elif name == "done":
                return True
            elif name == "noop":
                await asyncio.sleep(a["wait_ms"] / 1000)
        except ActionError:
            raise
        except Exception as exc:
            if is_closed_error(exc):
                raise
            raise ActionError(_playwright_message(exc, name, b.notes)) from None
        finally:
            await self._undo_refused_navigation(b)
        return await self._driver.done(b.page) if self._driver else False

    async def _undo_refused_navigation(self, b: Browsing) -> None:
        """A refused navigation leaves Chromium's error page; the agent stays where it was."""
        if b.page.url.startswith("chrome-error://"):
            with contextlib.suppress(Exception):
                await b.page.go_back(wait_until="load")

    async def _screenshot(self) -> np.ndarray:
        """The page as PNG; a page that keeps changing shows a blank frame and says so (a
        screenshot never fails the session)."""
        page = self._open.page
        try:
            png = await when_loaded(
                page,
                lambda: page.screenshot(type="png", timeout=self.action_timeout_ms),
                self.action_timeout_ms,
            )
            return EncodedImage.from_bytes(png)
        except Exception as exc:
            if is_closed_error(exc):
                raise
        self._open.notes.append("the screenshot could not be taken (the page was changing)")
        w, h = self.viewport
        return np.zeros((h, w, 3), np.uint8)

    async def _async_observe(self) -> dict[str, Any]:
        b = self._open
        page = b.page
        obs: dict[str, Any] = {}
        # an action that started a navigation leaves a document still loading: the agent sees
        # the page once it has loaded (or as far as it got), never a half-parsed one
        with contextlib.suppress(Exception):
            await page.wait_for_load_state("load", timeout=self.navigation_timeout_ms)
        # the screenshot and the tree are requested together: the browser works on both at once
        shot = asyncio.ensure_future(self._screenshot()) if "screenshot" in self.parts else None
        # the CDP objects name elements by the ids observe.js marks, so it runs for them too
        if "axtree" in self.parts or any(p in self.parts for p in CDP_PARTS):
            try:
                tree, self._next_bid, title = await page.evaluate(
                    OBSERVE_JS, [self.axtree_max_chars, self._next_bid]
                )
                if "axtree" in self.parts:
                    obs["axtree"] = tree
                if "title" in self.parts:
                    obs["title"] = title[:MAX_TEXT]
            except Exception as exc:
                if is_closed_error(exc):
                    if shot is not None:
                        shot.cancel()
                    raise
                if "axtree" in self.parts:
                    obs["axtree"] = ""  # mid-navigation: the next observation will have it
        if any(p in self.parts for p in BROWSERGYM_PARTS):
            obs.update(await self._browsergym_parts(b))
        if shot is not None:
            obs["screenshot"] = await shot
        if "url" in self.parts:
            obs["url"] = page.url[:MAX_TEXT]
        if "title" in self.parts and "title" not in obs:
            with contextlib.suppress(Exception):
                obs["title"] = (await page.title())[:MAX_TEXT]
            obs.setdefault("title", "")
        if "goal" in self.parts:
            obs["goal"] = self._goal[:MAX_TEXT]
        if "chat" in self.parts:
            obs["chat"] = "\n".join(b.chat)[-MAX_TEXT:]
        if "tabs" in self.parts:
            pages = b.context.pages
            obs["tabs"] = "\n".join(
                f"[{i}] {p.url}{' (active)' if p is page else ''}" for i, p in enumerate(pages)
            )[:MAX_TEXT]
        if b.notes:
            self.last_action_error = "; ".join([self.last_action_error, *b.notes]).strip("; ")
            b.notes.clear()
        if self._prefetch is not None:
            # the next reset of this task finds its page loaded in a fresh context; started
            # only now, so the loading happens while the agent thinks, not during this reset
            plan, self._prefetch = self._prefetch, None
            admit = getattr(self._driver, "admit", None)
            self._prepared = (plan, asyncio.ensure_future(self._prepare(*plan, admit)))
        return obs

    async def _browsergym_parts(self, b: Browsing) -> dict[str, Any]:
        """BrowserGym's observation keys that were asked for (JSON text for objects and
        lists: a client asking ``structured`` gets the values)."""
        page, parts = b.page, self.parts
        out: dict[str, Any] = {}
        if any(p in parts for p in CDP_PARTS):
            try:
                objects = await cdp.capture(page, self.viewport)
            except Exception as exc:
                if is_closed_error(exc):
                    raise
                objects = {"axtree_object": {"nodes": []}, "dom_object": {"documents": [],
                           "strings": []}, "extra_element_properties": {}}  # fmt: skip
            out.update({k: json.dumps(v) for k, v in objects.items() if k in parts})
        if "chat_messages" in parts:
            out["chat_messages"] = json.dumps(_chat_messages(self._goal, b))
        if "goal_object" in parts:
            out["goal_object"] = json.dumps([{"type": "text", "text": self._goal}])
        pages = b.context.pages
        if "open_pages_urls" in parts:
            out["open_pages_urls"] = json.dumps([p.url for p in pages])
        if "open_pages_titles" in parts:
            titles = []
            for p in pages:
                try:
                    titles.append(await p.title())
                except Exception:
                    titles.append("")
            out["open_pages_titles"] = json.dumps(titles)
        if "active_page_index" in parts:
            out["active_page_index"] = np.array([pages.index(page) if page in pages else 0])
        if "focused_element_bid" in parts:
            try:
                out["focused_element_bid"] = await cdp.focused_bid(page)
            except Exception as exc:
                if is_closed_error(exc):
                    raise
                out["focused_element_bid"] = ""
        return out

    async def _privileged_state(self) -> dict[str, Any]:
        b = self._open
        # the goal: an answer may repeat what the question named (verifiers/answers.py)
        state = {"url": b.page.url, "chat": list(b.chat), "goal": self._goal}
        if self._driver is not None:
            state.update(await self._driver.state(b.page))
        return state


def _browsergym_spaces() -> dict[str, spaces.Space]:
    """The spaces of BrowserGym's keys; objects and lists are JSON text."""
    return {
        **{k: JSONText(MAX_OBJECT) for k in CDP_PARTS},
        "chat_messages": JSONText(MAX_OBJECT),
        "goal_object": JSONText(MAX_TEXT * 2),
        "open_pages_urls": JSONText(MAX_TEXT * 2),
        "open_pages_titles": JSONText(MAX_TEXT * 2),
        "active_page_index": spaces.Box(0, 255, (1,), np.int64),
        "focused_element_bid": FreeText(100),
        "last_action": FreeText(MAX_TEXT),
        "elapsed_time": spaces.Box(0, np.inf, (1,), np.float64),
    }


def _chat_messages(goal: str, b: Browsing) -> list[dict[str, Any]]:
    """The chat as BrowserGym's ``chat_messages``: the goal as the user's first message, the
    agent's messages as ``assistant``, browser notices (dialogs, new tabs) as ``info``."""
    messages = [{"role": "user", "timestamp": b.started, "message": goal}] if goal else []
    while len(b.stamps) < len(b.chat):
        b.stamps.append(time.time())
    for line, stamp in zip(b.chat, b.stamps, strict=False):
        if line.startswith(USER):
            role, text = "user", line.removeprefix(USER)
        elif line.startswith("assistant"):  # an answer, a question, an infeasibility report
            role, text = "assistant", line.split(": ", 1)[-1]
        else:
            role, text = "info", line
        messages.append({"role": role, "timestamp": stamp, "message": text})
    return messages


def _css(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _playwright_message(exc: Exception, action: str, notes: list[str]) -> str:
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    first = lines[0]
    blocked = [line.strip() for line in lines if "intercepts pointer events" in line]
    if blocked:  # say what covers the element, not only that the click timed out
        first = f"{first} ({blocked[-1]})"
    if "ERR_PROXY_CONNECTION_FAILED" in first:
        notes.clear()
        url = first.rsplit(" at ", 1)[-1]
        first = f"{url} is outside the origins this task allows; the request was refused"
    if "Timeout" in type(exc).__name__ or "Timeout" in first:
        first = f"timed out: {first}"
    return f"{action} failed: {first}"[:1500]


async def _dismiss(dialog: Any) -> None:
    with contextlib.suppress(Exception):
        await dialog.dismiss()


async def _close_prepared(future: asyncio.Future[Any]) -> None:
    with contextlib.suppress(BaseException):
        await (await future).context.close()


async def _close_quietly(context: Any) -> None:
    with contextlib.suppress(Exception):
        await context.close()
