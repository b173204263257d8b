"""Mobile env speed: the embedded phone (in-process and through the gateway) beside Appium.

The embedded phone is timed on a synthesized train task: a reset (apps restored, the launcher
shown, the first observation: screenshot and element list) and steps that tap the app open,
tap its navigation and come back home, each with its full observation. Side by side, the same
env on the Appium backend with Appium's fake driver on loopback: its step is a tap plus a
screenshot and a page source over Appium's HTTP protocol, the floor of what any real device
costs before the device itself does anything. Memory per session is the growth of the worker's
proportional set size (its Chromium included) per extra open phone session.

Run: ``palaestra bench mobile`` or ``python -m palaestra.bench.mobile``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from palaestra.bench.web import _pss_mb
from palaestra.client import RemoteEnv
from palaestra.envs.mobile.env import MobileEnv
from palaestra.server.runner import gateway_process

console = Console()
SNAPSHOT_LOAD_MS = 600  # an Android emulator snapshot load on this class of machine (issue 8)
STEPS = [
    {"action_type": "open_app", "app_name": "RailWay"},
    {"action_type": "navigate_home"},
    {"action_type": "scroll", "direction": "down"},
    {"action_type": "wait", "seconds": 0},
]


def _time(env: Any, resets: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"reset": [], "step": []}
    for i in range(resets):
        t = time.perf_counter()
        env.reset(seed=i)
        out["reset"].append(time.perf_counter() - t)
        for action in STEPS:
            t = time.perf_counter()
            env.step(action)
            out["step"].append(time.perf_counter() - t)
    return out


def measure_appium(resets: int) -> dict[str, list[float]] | None:
    from palaestra.envs.mobile.appium_server import FAKE_CAPS, installed, local_appium

    if not installed():
        console.print("[yellow]Appium is not installed (scripts/setup-appium.sh): no baseline")
        return None
    with tempfile.TemporaryDirectory() as tmp, local_appium(Path(tmp) / "appium.log") as (url, _):
        env = MobileEnv(backend="appium", appium_url=url, capabilities=FAKE_CAPS)
        try:
            env.reset(seed=0)
            out: dict[str, list[float]] = {"step": []}
            for _ in range(resets * len(STEPS)):
                t = time.perf_counter()
                env.step({"action_type": "click", "index": 0})
                out["step"].append(time.perf_counter() - t)
        finally:
            env.close()
    return out


def measure_memory(url: str, worker_pid: int, sessions: int = 4) -> float:
    base = _pss_mb(worker_pid)
    envs = []
    for _ in range(sessions):
        env = RemoteEnv("palaestra/mobile-v0", base_url=url, transport="ws")
        env.reset(seed=0)
        envs.append(env)
    grown = (_pss_mb(worker_pid) - base) / sessions
    for env in envs:
        env.close()
    return grown


def main(resets: int = 10) -> dict[str, Any]:
    local = MobileEnv()
    try:
        local.reset(seed=0)  # the browser starts outside the timing
        ours = _time(local, resets)
    finally:
        local.close()
    with gateway_process("--workers", "1", "--no-record", "--log-level", "warning") as (url, _):
        remote = RemoteEnv("palaestra/mobile-v0", base_url=url, transport="ws")
        remote.reset(seed=0)
        gateway = _time(remote, resets)
        remote.close()
        worker = httpx.get(f"{url}/v1/health").json()["workers"][0]["pid"]
        memory = measure_memory(url, worker)
    appium = measure_appium(resets)

    def p50(xs: list[float]) -> float:
        return statistics.median(xs) * 1e3

    table = Table(title="palaestra/mobile-v0, p50 in ms (step = action + screenshot + elements)")
    for col in ("operation", "embedded, in-process", "embedded, gateway (ws)", "against"):
        table.add_column(col, justify="right")
    table.add_row(
        "reset",
        f"{p50(ours['reset']):.0f}",
        f"{p50(gateway['reset']):.0f}",
        f"emulator snapshot load ~{SNAPSHOT_LOAD_MS} ms (quoted, not measured): "
        f"{SNAPSHOT_LOAD_MS / p50(gateway['reset']):.1f}x",
    )
    against = "n/a"
    if appium:
        ratio = p50(appium["step"]) / p50(gateway["step"])
        against = f"Appium fake driver step {p50(appium['step']):.0f} ms: {ratio:.1f}x"
    table.add_row("step", f"{p50(ours['step']):.0f}", f"{p50(gateway['step']):.0f}", against)
    console.print(table)
    console.print(
        f"memory per extra phone session: {memory:.0f} MB (worker PSS, Chromium included)"
    )
    return {"embedded": ours, "gateway": gateway, "appium": appium, "memory_mb": memory}


if __name__ == "__main__":
    main()
