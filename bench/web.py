"""Web env speed: palaestra/web-v0 through the gateway vs BrowserGym in-process, on MiniWoB.

Both sides run the same MiniWoB tasks in the same run, on the same system Chromium. A reset is
timed from the call to the first observation; a step is ``noop(wait_ms=0)`` plus the full
observation (screenshot and accessibility tree), which is the per-step cost an agent pays.
palaestra runs as deployed: a gateway process, one worker process, the WebSocket client.
BrowserGym runs in its own process and venv (it pins an older Playwright), measured by
:mod:`palaestra.bench.browsergym_baseline`.

Memory per session is the growth of the worker's proportional set size (its Chromium tree
included) per extra open session; the machine's capacity is 80% of its memory divided by it.

Observations: a step with the lean default observation, with only the text tree (observe.js in
the page) or only Chrome's AX tree (CDP), and with BrowserGym's full observation (screenshot,
``axtree_object``, ``dom_object``, ``extra_element_properties`` and the small keys), against
BrowserGym's own step with its default 0.5 s ``pre_observation_delay`` sleep and with none.

Run: ``palaestra bench web`` or ``python -m palaestra.bench.web``.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from typing import Any

from rich.progress import track

from palaestra.bench import harness
from palaestra.bench.harness import console
from palaestra.client import RemoteEnv
from palaestra.envs.web.env import BROWSERGYM_PARTS
from palaestra.server.runner import gateway_process

TASKS = ["click-button", "click-link", "enter-text", "click-checkboxes", "focus-text"]
NOOP = "noop(wait_ms=0)"
#: what one observation holds: the default, the two trees alone, BrowserGym's whole dict
OBSERVATIONS: dict[str, list[str] | None] = {
    "default (screenshot + text tree + small parts)": None,
    "text tree only (observe.js)": ["axtree"],
    "Chrome AX tree only (CDP axtree_object)": ["axtree_object"],
    "BrowserGym's full observation": ["screenshot", "url", "goal", *BROWSERGYM_PARTS],
}


def measure_palaestra(
    url: str, tasks: list[str], resets: int, steps: int, think_s: float = 0.0
) -> dict[str, list[float]]:
    """Calls back to back (``think_s=0``), or with an agent's thinking pause before each call,
    during which the next reset's page loads in the background."""
    out = harness.Timings("reset", "step")
    label = f"palaestra, think {think_s:g} s"
    for name in track(tasks, description=label, console=console):
        env = RemoteEnv(task=f"miniwob/{name}", base_url=url, transport="ws")
        env.reset(seed=0)  # the session's first page load is not a reset of a warm session
        for r in range(resets):
            time.sleep(think_s)
            with out.timed("reset"):
                env.reset(seed=r + 1)
            for _ in range(steps):
                time.sleep(think_s)
                with out.timed("step"):
                    env.step(NOOP)
        env.close()
    return out


def measure_observations(url: str, tasks: list[str], steps: int) -> dict[str, list[float]]:
    """Step latency (``noop`` plus the observation) per observation set of ``OBSERVATIONS``."""
    out = harness.Timings(*OBSERVATIONS)
    for label, parts in OBSERVATIONS.items():
        options = {"observe": parts} if parts else {}
        for name in tasks:
            env = RemoteEnv(task=f"miniwob/{name}", base_url=url, transport="ws", options=options)
            env.reset(seed=0)
            out[label] += harness.sample(functools.partial(env.step, NOOP), steps)
            env.close()
    return out


def observation_table(
    ours: dict[str, list[float]], tasks: list[str], resets: int, steps: int
) -> dict:
    """Print step p50 per observation set against BrowserGym with and without its sleep."""
    from palaestra.bench.browsergym_baseline import measure_browsergym

    theirs: dict[str, Any] = {}
    for label, delay in (("default 0.5 s delay", None), ("pre_observation_delay=0", 0.0)):
        try:
            with console.status(f"BrowserGym, {label} ..."):
                theirs[label] = measure_browsergym(
                    tasks, resets, steps, pre_observation_delay=delay
                )
        except RuntimeError as exc:
            console.print(f"[yellow]BrowserGym baseline unavailable:[/] {exc}")
            theirs[label] = None
    rows = []
    for label, times in ours.items():
        mine = harness.ms(times)
        cells = [label, f"{mine:.0f}"]
        for run in theirs.values():
            bg = harness.ms(run["step"]) if run else None
            cells += [f"{bg:.0f}" if bg else "n/a", harness.ratio(bg, mine, 1)]
        rows.append(tuple(cells))
    columns = ["palaestra observation", "palaestra step"]
    for label in theirs:
        columns += [f"BrowserGym step ({label})", "speed-up"]
    harness.print_table(
        f"MiniWoB step p50 in ms by observation ({', '.join(tasks)})", tuple(columns), rows
    )
    return theirs


def measure_capacity(url: str, sessions: int = 6) -> dict[str, float]:
    """Memory per extra session, and step throughput with sessions stepping at once."""

    def open_session(i: int) -> RemoteEnv:
        env = RemoteEnv(task="miniwob/click-button", base_url=url, transport="ws")
        env.reset(seed=i)
        return env

    pid = harness.worker_pid(url)
    memory = harness.SessionMemory(open_session, sessions - 1, pid, warm=1, settle_s=1.0)
    with memory.opened() as grown:
        envs = grown.sessions
        counts = [0] * sessions
        stop = time.monotonic() + 5

        def run(i: int) -> None:
            while time.monotonic() < stop:
                _, _, terminated, truncated, _ = envs[i].step(NOOP)
                counts[i] += 1
                if terminated or truncated:
                    envs[i].reset()

        threads = [threading.Thread(target=run, args=(i,)) for i in range(sessions)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return {
        "memory_mb_per_session": grown.mb_per_session,
        "sessions_by_memory": 0.8 * harness.machine_mb() / grown.mb_per_session,
        "steps_per_s": sum(counts) / 5,
        "concurrent_sessions": sessions,
    }


def main(tasks: list[str] | None = None, resets: int = 3, steps: int = 3) -> dict[str, Any]:
    tasks = tasks or TASKS
    with gateway_process("--workers", "1", "--no-record", "--log-level", "warning") as (url, _):
        ours = measure_palaestra(url, tasks, resets, steps)
        thinking = measure_palaestra(url, tasks, resets, steps, think_s=0.5)
        capacity = measure_capacity(url)
        observations = measure_observations(url, tasks, steps * resets)
    baseline: dict[str, Any] | None = None
    try:
        from palaestra.bench.browsergym_baseline import measure_browsergym

        with console.status("BrowserGym (browsergym-miniwob) on the same tasks ..."):
            baseline = measure_browsergym(tasks, resets_per_task=resets, steps_per_reset=steps)
    except RuntimeError as exc:
        console.print(f"[yellow]BrowserGym baseline unavailable:[/] {exc}")
    rows = []
    for suffix, runs in (("", ours), (", agent thinks 0.5 s", thinking)):
        for op in ("reset", "step"):
            mine = harness.ms(runs[op])
            theirs = harness.ms(baseline[op]) if baseline else None
            rows.append(
                (
                    op + suffix,
                    f"{mine:.0f}",
                    f"{theirs:.0f}" if theirs else "n/a",
                    harness.ratio(theirs, mine, 1),
                )
            )
    columns = ("operation", "palaestra (gateway, ws)", "BrowserGym (in-process)", "speed-up")
    harness.print_table(f"MiniWoB ({', '.join(tasks)}), p50 in ms", columns, rows)
    bg_mem = baseline.get("memory_mb_per_env") if baseline else None
    console.print(
        f"memory per session: palaestra {capacity['memory_mb_per_session']:.0f} MB"
        + (f", BrowserGym {bg_mem:.0f} MB per env" if bg_mem else "")
        + f"; this machine holds about {capacity['sessions_by_memory']:.0f} palaestra sessions "
        f"by memory; {capacity['concurrent_sessions']} sessions stepping at once made "
        f"{capacity['steps_per_s']:.1f} steps/s on {os.cpu_count()} cores"
    )
    bg_by_delay = observation_table(observations, tasks, resets, steps)
    return {
        "palaestra": ours,
        "thinking": thinking,
        "browsergym": baseline,
        "capacity": capacity,
        "observations": observations,
        "browsergym_by_delay": bg_by_delay,
    }


if __name__ == "__main__":
    main()
