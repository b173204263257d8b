"""The live dashboard's cost: its render time with 200 live sessions, and the gateway CPU it adds.

A gateway process (two local workers, recording on) holds a pool of 200 sessions of the
benchmark counter (``palaestra-bench/Overhead-v0`` with a 48x48 screenshot, so every step
writes an image and the dashboard has thumbnails to show). A driver steps the whole pool at a
fixed pace, so every session changes every tick, the dashboard's worst case. In interleaved
rounds the gateway's own CPU time (its process only, from ``/proc``) is read while the pool
steps with no dashboard open, then with the dashboard open in headless Chromium (the page, its
Server-Sent Events each second and the thumbnails it fetches), and with an events client instead
(a thread reading the same events and fetching the thumbnails a window shows): a browser on a
two-core machine also slows the gateway by competing for the cores and caches, which the
client variant leaves out. The cost is the extra CPU per
env step, as a share of the gateway's CPU per step without the dashboard: the median over the
rounds of each pair's ratio.

Render: ``GET /`` with the 200 sessions (server side, as the client receives it), and Chromium's
navigation to the page's ``load`` event.

Run: ``python -m palaestra.bench.dashboard``.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import orjson

from palaestra.bench import harness
from palaestra.bench.fixtures import ENV_ID, use_fixtures
from palaestra.bench.harness import console, ms
from palaestra.server import live
from palaestra.server.runner import gateway_process

SESSIONS = 200
#: pool steps a second (each steps all 200 sessions); None: as fast as the gateway goes
PACES = (2.0, None)
#: short phases in many pairs: other jobs on the machine come and go, and a pair (dashboard off,
#: then open) is close enough in time for both halves to share the same load
PHASE_S = 4.0
ROUNDS = 6


def gateway_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of one process so far."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Driver:
    """Steps the pool at ``pace`` in a thread; counts env steps."""

    def __init__(self, http: httpx.Client, pool: str, pace: float | None) -> None:
        self.http, self.pool, self.pace = http, pool, pace
        self.steps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        body = {"actions": ["add(1)"] * SESSIONS}
        next_at = time.monotonic()
        while not self._stop.is_set():
            r = self.http.post(f"/v1/pools/{self.pool}/step", json=body)
            r.raise_for_status()
            self.steps += SESSIONS
            if self.pace:
                next_at += 1 / self.pace
                self._stop.wait(max(0.0, next_at - time.monotonic()))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    from palaestra.envs.runtimes.browser import find_chromium

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), headless=True)
        try:
            yield browser.new_page(viewport={"width": 1200, "height": 900})
        finally:
            browser.close()


class EventsClient:
    """What the page makes the gateway do, without a browser on the machine: reads
    ``/dashboard/events`` and fetches each new thumbnail of the first rows (about what a
    1200x900 window shows; the page's images load lazily)."""

    VISIBLE = 7

    def __init__(self, url: str) -> None:
        self.url = url
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        srcs: dict[str, str] = {}
        with httpx.Client(base_url=self.url, timeout=30) as http:
            http.get("/")
            with http.stream("GET", "/dashboard/events") as events:
                for line in events.iter_lines():
                    if self._stop.is_set():
                        return
                    if not line.startswith("data:") or '"rows"' not in line:
                        continue
                    rows = orjson.loads(line[5:])["rows"]
                    for sid, html in list(rows.items())[: self.VISIBLE]:
                        src = _SRC.search(html)
                        if src and srcs.get(sid) != src.group(1):
                            srcs[sid] = src.group(1)
                            http.get(src.group(1))

    def stop(self) -> None:
        self._stop.set()


_SRC = re.compile(r'<img src="([^"]+)"')


def phase(pid: int, driver: Driver, page: Any, url: str | None, kind: str = "page") -> float:
    """Gateway CPU ms per 1,000 env steps over one phase, with the page open in Chromium
    (``kind="page"``), an :class:`EventsClient` (``"client"``) or neither (``url`` None)."""
    client = None
    if url and kind == "page":
        page.goto(url)
        page.wait_for_selector("#session-count")
    elif url:
        client = EventsClient(url.rstrip("/"))
    time.sleep(1.0)  # the page settles (first full event) before the reading starts
    cpu0, steps0 = gateway_cpu_s(pid), driver.steps
    time.sleep(PHASE_S)
    cpu, steps = gateway_cpu_s(pid) - cpu0, driver.steps - steps0
    if client:
        client.stop()
    elif url:
        page.goto("about:blank")
    return 1e6 * cpu / max(1, steps)


def main() -> dict[str, float]:
    runs = tempfile.mkdtemp(prefix="palaestra-bench-dash-")
    env = {
        "PALAESTRA_WORKERS": "2",
        "PALAESTRA_MAX_SESSIONS": str(SESSIONS + 16),
        "PALAESTRA_MAX_SESSIONS_PER_KEY": str(SESSIONS + 16),
        "PALAESTRA_RUNS_DIR": runs,
        "PALAESTRA_JOBS_DB": f"{runs}/jobs.sqlite3",
    }
    with (
        gateway_process("--log-level", "warning", env=env) as (url, proc),
        httpx.Client(base_url=url, timeout=120) as http,
        chromium() as page,
    ):
        pool = http.post(
            "/v1/pools",
            json={
                "env": ENV_ID,
                "size": SESSIONS,
                "options": {"image_size": 48, "max_steps": 10**9},
            },
        ).json()["pool_id"]
        http.post(f"/v1/pools/{pool}/reset", json={"seed": 0}).raise_for_status()
        http.post(f"/v1/pools/{pool}/step", json={"actions": ["add(1)"] * SESSIONS})

        render = harness.sample(lambda: http.get("/").raise_for_status(), 7, warmup=1)
        size_kb = len(http.get("/").content) / 1024

        def load() -> None:
            page.goto(url + "/", wait_until="load")
            page.wait_for_selector(f"#sessions tbody tr:nth-child({live.PAGE})")

        browser_load = harness.sample(load, 5, warmup=1)

        rows = [
            ("GET / (server render), p50", f"{ms(render):.1f} ms ({size_kb:.0f} KB)", "< 1000 ms"),
            ("Chromium: page to load event + rows, p50", f"{ms(browser_load):.1f} ms", "< 1000 ms"),
        ]
        shares = {}
        for pace in PACES:
            shares[pace], rate, line = cost_at(proc.pid, http, pool, page, url, pace)
            console.print(line)
            label = f"at {rate:.0f} steps/s" + (" (flat out)" if pace is None else "")
            in_chromium, client = line.split(" | ")[:2]
            rows.append((f"extra gateway CPU/step {label}, Chromium", in_chromium, "< 2%"))
            rows.append((f"extra gateway CPU/step {label}, events client", client, "< 2%"))
        http.delete(f"/v1/pools/{pool}")

    harness.print_table(
        f"dashboard with {SESSIONS} live sessions, all stepping",
        ["figure", "value", "target"],
        rows,
    )
    return {
        "render_ms": ms(render),
        "browser_load_ms": ms(browser_load),
        **{f"cpu_share_{pace or 'max'}": share for pace, share in shares.items()},
    }


def cost_at(
    pid: int, http: httpx.Client, pool: str, page: Any, url: str, pace: float | None
) -> tuple[float, float, str]:
    """The dashboard's extra gateway CPU per step while the pool steps at ``pace``: (share,
    steps per second, a line of figures)."""
    driver = Driver(http, pool, pace)
    t0 = time.monotonic()
    try:
        cost = harness.interleave(
            {
                "off": lambda: [phase(pid, driver, page, None)],
                "open": lambda: [phase(pid, driver, page, url + "/")],
                "client": lambda: [phase(pid, driver, page, url + "/", "client")],
            },
            ROUNDS,
            "gateway CPU with and without the dashboard",
        )
        rate = driver.steps / (time.monotonic() - t0)
    finally:
        driver.stop()
    base = harness.percentile(cost["off"], 0.5)
    # the median of the pairs' ratios: a burst of load elsewhere shifts both halves of a pair
    shares = {
        k: harness.percentile([o / f - 1 for f, o in zip(cost["off"], cost[k], strict=True)], 0.5)
        for k in ("open", "client")
    }
    share = shares["open"]
    rounds = "; ".join(f"{k}: {', '.join(f'{v:.0f}' for v in vs)}" for k, vs in cost.items())
    line = (
        f"{100 * share:+.2f}% | {100 * shares['client']:+.2f}% | gateway CPU ms per 1k steps "
        f"at {rate:.0f} steps/s with the dashboard off: {base:.1f} (rounds {rounds})"
    )
    return share, rate, line


if __name__ == "__main__":
    use_fixtures()  # the counter, here and in the gateway's workers
    main()
