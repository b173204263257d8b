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

import tempfile
from pathlib import Path
from typing import Any

from palaestra.bench import harness
from palaestra.bench.harness import console
from palaestra.client import RemoteEnv
from palaestra.envs.mobile.env import MobileEnv
from palaestra.server.runner import gateway_process

SNAPSHOT_LOAD_MS = 600  # an Android emulator snapshot load on this class of machine (issue 8)
STEPS = [
    {"action_type": "open_app", "app_name": "RailWay"},
    {"action_type": "navigate_home"},
    {"action_type": "scroll", "direction": "down"},
    {"action_type": "wait", "seconds": 0},
]


def _time(env: Any, resets: int) -> dict[str, list[float]]:
    out = harness.Timings("reset", "step")
    for i in range(resets):
        with out.timed("reset"):
            env.reset(seed=i)
        for action in STEPS:
            with out.timed("step"):
                env.step(action)
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
            tap = {"action_type": "click", "index": 0}
            return {"step": harness.sample(lambda: env.step(tap), resets * len(STEPS))}
        finally:
            env.close()


def measure_memory(url: str, worker_pid: int, sessions: int = 4) -> float:
    def open_session(_: int) -> RemoteEnv:
        env = RemoteEnv("palaestra/mobile-v0", base_url=url, transport="ws")
        env.reset(seed=0)
        return env

    return harness.SessionMemory(open_session, sessions, worker_pid).mb_per_session()


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
        memory = measure_memory(url, harness.worker_pid(url))
    appium = measure_appium(resets)

    p50 = harness.ms
    against = "n/a"
    if appium:
        ratio = harness.ratio(p50(appium["step"]), p50(gateway["step"]), 1)
        against = f"Appium fake driver step {p50(appium['step']):.0f} ms: {ratio}"
    harness.print_table(
        "palaestra/mobile-v0, p50 in ms (step = action + screenshot + elements)",
        ("operation", "embedded, in-process", "embedded, gateway (ws)", "against"),
        [
            (
                "reset",
                f"{p50(ours['reset']):.0f}",
                f"{p50(gateway['reset']):.0f}",
                f"emulator snapshot load ~{SNAPSHOT_LOAD_MS} ms (quoted, not measured): "
                + harness.ratio(SNAPSHOT_LOAD_MS, p50(gateway["reset"]), 1),
            ),
            ("step", f"{p50(ours['step']):.0f}", f"{p50(gateway['step']):.0f}", against),
        ],
    )
    console.print(
        f"memory per extra phone session: {memory:.0f} MB (worker PSS, Chromium included)"
    )
    return {"embedded": ours, "gateway": gateway, "appium": appium, "memory_mb": memory}


if __name__ == "__main__":
    main()
