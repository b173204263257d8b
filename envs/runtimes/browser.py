"""One Chromium per worker process, driven by Playwright's async API on a loop of its own.

Shared by the families that drive a browser: the web family's pages and the mobile family's
embedded phone (a touch-emulating context) run in the same worker's Chromium.

Session threads (see :mod:`palaestra.workers.host`) call :meth:`BrowserRuntime.call` with a
coroutine; it runs on the runtime's event loop, so one browser serves every session of the
worker concurrently. Contexts are created ahead of need (a warm pool per viewport), so a reset
swaps in a fresh context (new cookies, storage and cache) instead of launching anything.

If Chromium dies, every context it hosted is gone: the sessions using them fail with a clear
error, and the next request launches a new browser, so later sessions go on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import shutil
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from palaestra.envs.runtimes.lazy import process_wide
from palaestra.errors import EnvCrashed

T = TypeVar("T")

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
]
WARM_CONTEXTS = 2


ContextKey = tuple[tuple[int, int], frozenset[str]]
#: A closed loopback port: requests sent to this "proxy" fail at once, so they never leave.
DEAD_PROXY = "http://127.0.0.1:9"


def origin_guard(allowed: frozenset[str]) -> dict[str, str]:
    """Per-context proxy settings that let through only ``allowed`` origins.

    Every other request goes to a proxy that does not exist and fails with
    ``ERR_PROXY_CONNECTION_FAILED``; ``<-loopback>`` stops Chromium's habit of never proxying
    loopback, so other local ports are refused too. Unlike request interception, this costs
    nothing per request.
    """
    hosts = [o.split("://", 1)[-1].rstrip("/") for o in sorted(allowed)]
    return {"server": DEAD_PROXY, "bypass": ",".join(["<-loopback>", *hosts])}


DEBIAN_HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"


def find_chromium() -> str | None:
    """``PALAESTRA_CHROMIUM``, then Playwright's own download, then a system Chromium.

    Debian's ``chromium-headless-shell`` comes first among system builds: it is the lean
    headless browser Playwright itself uses for headless runs, and a fresh context costs less
    than half of what the full browser's costs (about 90 vs 240 ms here).
    """
    explicit = os.environ.get("PALAESTRA_CHROMIUM")
    if explicit:
        return explicit
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache/ms-playwright"))
    if any(cache.glob("chromium-*/chrome-linux*/chrome")):
        return None  # Playwright finds its own download
    # Debian's /usr/bin/chromium-headless-shell is a shell script that runs the binary as its
    # child without exec: Playwright would then kill the script, not the browser
    if os.access(DEBIAN_HEADLESS_SHELL, os.X_OK):
        return DEBIAN_HEADLESS_SHELL
    for name in ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise EnvCrashed(
        "no Chromium found: install Debian's chromium package (make setup does) or set "
        "PALAESTRA_CHROMIUM to a Chromium binary"
    )


class BrowserRuntime:
    """The worker's browser. Use :func:`runtime` to get the process-wide instance."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="browser", daemon=True)
        self._thread.start()
        self._playwright: Any = None
        self._browser: Any = None
        self._generation = 0
        self._warm: dict[ContextKey, list[asyncio.Task[Any]]] = {}
        self._executable = find_chromium()

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, fn: Callable[[], Awaitable[T]], timeout: float) -> T:
        """Run ``fn()`` on the browser loop from a session thread; TimeoutError past ``timeout``."""
        future = asyncio.run_coroutine_threadsafe(_as_coro(fn), self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"the browser did not answer within {timeout:g} s") from None

    async def browser(self) -> Any:
        if self._browser is None or not self._browser.is_connected():
            await self._launch()
        return self._browser

    @property
    def generation(self) -> int:
        """Increases with every launch; a context from an older generation is dead."""
        return self._generation

    async def _launch(self) -> None:
        if self._playwright is None:
            from playwright.async_api import async_playwright

            self._playwright = await async_playwright().start()
        kwargs: dict[str, Any] = {"headless": True, "args": CHROMIUM_ARGS}
        if self._executable:
            kwargs["executable_path"] = self._executable
        self._browser = await self._playwright.chromium.launch(**kwargs)
        self._generation += 1
        self._warm.clear()

    async def _new_context(self, key: ContextKey) -> Any:
        viewport, allowed = key
        browser = await self.browser()
        context = await browser.new_context(
            viewport={"width": viewport[0], "height": viewport[1]},
            device_scale_factor=1,
            service_workers="block",
            accept_downloads=False,
            proxy=origin_guard(allowed),
        )
        await context.new_page()
        return context

    async def context(self, viewport: tuple[int, int], allowed: frozenset[str]) -> Any:
        """A fresh context with one blank page that reaches only ``allowed`` origins.

        Contexts come from a warm pool per (viewport, origins), refilled in the background.
        """
        await self.browser()
        key = (viewport, allowed)
        pool = self._warm.setdefault(key, [])
        context = None
        while pool and context is None:
            task = pool.pop(0)
            with contextlib.suppress(Exception):
                candidate = await task
                if candidate.browser and candidate.browser.is_connected():
                    context = candidate
        if context is None:
            context = await self._new_context(key)
        while len(pool) < WARM_CONTEXTS:
            pool.append(asyncio.ensure_future(self._new_context(key)))
        return context


async def _as_coro(fn: Callable[[], Awaitable[T]]) -> T:
    return await fn()


@process_wide
def runtime() -> BrowserRuntime:
    """The worker's browser runtime (its loop starts now, Chromium at the first request)."""
    return BrowserRuntime()


def is_closed_error(exc: Exception) -> bool:
    """The page, its context or the browser is gone (retrying cannot help)."""
    text = str(exc)
    return "has been closed" in text or "Target crashed" in text or "Browser closed" in text


#: reads of a page caught mid-navigation: a page that redirects or navigates twice in a row (a
#: form post, then its redirect) can destroy the context of a second read too
READ_ATTEMPTS = 3


async def when_loaded(page: Any, read: Callable[[], Awaitable[T]], timeout_ms: float) -> T:
    """``read()`` on the page once it has loaded. A page caught mid-navigation (the load began
    after we looked) cannot be captured or evaluated: wait for the new page and read again."""
    for attempt in range(READ_ATTEMPTS):
        with contextlib.suppress(Exception):
            await page.wait_for_load_state("load", timeout=timeout_ms)
        try:
            return await read()
        except Exception as exc:
            if is_closed_error(exc) or attempt == READ_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
