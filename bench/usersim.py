"""User-simulator speed: reset and rule-based steps, in-process and through the gateway.

Each domain's tasks are played by the competent scripted assistant (its moves are prepared
outside the timing): a reset (the world copied from its seeded template, the simulated user
built, its opening said) and every step (a message the user answers, or a tool call on SQLite).
Beside the reset path, the baseline a simple env pays: building the seeded world again at each
reset. Through the gateway the same episodes run over REST and over WebSocket. Memory per
session is the growth of one worker's proportional set size per extra open session, and from it
how many sessions one worker holds in 1 GiB.

Run: ``palaestra bench usersim`` or ``python -m palaestra.bench.usersim``.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from palaestra.bench.web import _pss_mb
from palaestra.client import RemoteEnv
from palaestra.envs.usersim import world
from palaestra.envs.usersim.assistants import ScriptedAssistant
from palaestra.envs.usersim.env import UserSimEnv
from palaestra.server.runner import gateway_process
from palaestra.tasks import get_suite

console = Console()


def _episodes(env: Any, tasks: list[Any], remote: bool) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"reset": [], "message": [], "tool": []}
    for task in tasks:
        policy = ScriptedAssistant(task, "competent", seed=0)
        t = time.perf_counter()
        obs, _ = env.reset(seed=0) if remote else env.reset(seed=0, options={"task": task})
        out["reset"].append(time.perf_counter() - t)
        done = False
        while not done:
            action = policy.act(obs)
            t = time.perf_counter()
            obs, _, terminated, truncated, _ = env.step(action)
            kind = "tool" if action["name"] == "call_tool" else "message"
            out[kind].append(time.perf_counter() - t)
            done = terminated or truncated
    return out


def _rebuild_resets(tasks: list[Any]) -> list[float]:
    """The baseline: seed the world from scratch at every reset."""
    out = []
    for task in tasks:
        t = time.perf_counter()
        conn = sqlite3.connect(":memory:")
        world.domain(task.setup["domain"]).build(conn, task.setup["seed"])
        conn.close()
        out.append(time.perf_counter() - t)
    return out


def _remote(url: str, tasks: list[Any], transport: str) -> dict[str, list[float]]:
    total: dict[str, list[float]] = {"reset": [], "message": [], "tool": []}
    for task in tasks:
        env = RemoteEnv(task=f"usersim/{task.id}", base_url=url, transport=transport)
        try:
            for key, values in _episodes(env, [task], remote=True).items():
                total[key] += values
        finally:
            env.close()
    return total


def _memory(url: str, worker: int, task: Any, sessions: int = 60) -> float:
    envs = [RemoteEnv(task=f"usersim/{task.id}", base_url=url, transport="http")]
    envs[0].reset(seed=0)
    base = _pss_mb(worker)
    for _ in range(sessions):
        env = RemoteEnv(task=f"usersim/{task.id}", base_url=url, transport="http")
        env.reset(seed=0)
        envs.append(env)
    grown = (_pss_mb(worker) - base) / sessions
    for env in envs:
        env.close()
    return grown


def main(episodes: int = 20) -> dict[str, Any]:
    suite = get_suite("usersim").tasks
    tasks = []
    for name in world.domain_names():
        tasks += [t for t in suite if t.setup["domain"] == name][:episodes]
    env = UserSimEnv(persona="terse")
    _episodes(env, tasks[:4], remote=False)  # warm the templates and imports
    local = _episodes(env, tasks, remote=False)
    env.close()
    rebuild = _rebuild_resets(tasks)
    sample = tasks[:: max(1, len(tasks) // 20)]
    with gateway_process("--workers", "1", "--no-record", "--log-level", "warning") as (url, _):
        _remote(url, sample[:2], "ws")  # the worker loads the suite outside the timing
        rest = _remote(url, sample, "http")
        ws = _remote(url, sample, "ws")
        worker = httpx.get(f"{url}/v1/health").json()["workers"][0]["pid"]
        memory = _memory(url, worker, sample[0])

    def p50(xs: list[float]) -> float:
        return statistics.median(xs) * 1e3

    table = Table(title=f"palaestra/usersim-v0, rule-based user, p50 in ms ({len(tasks)} episodes)")
    for col in ("operation", "in-process", "gateway REST", "gateway WS"):
        table.add_column(col, justify="right")
    rows = (("reset", "reset"), ("message", "step: message + reply"), ("tool", "step: tool call"))
    for kind, label in rows:
        table.add_row(
            label, f"{p50(local[kind]):.3f}", f"{p50(rest[kind]):.2f}", f"{p50(ws[kind]):.2f}"
        )
    console.print(table)
    steps = local["message"] + local["tool"]
    per_core = len(steps) / sum(steps)
    ws_steps = ws["message"] + ws["tool"]
    console.print(
        f"reset from the template: {p50(rebuild) / p50(local['reset']):.1f}x faster than "
        f"re-seeding the world ({p50(rebuild):.2f} ms)\n"
        f"WebSocket vs REST: {p50(rest['message']) / p50(ws['message']):.1f}x faster (message), "
        f"{p50(rest['tool']) / p50(ws['tool']):.1f}x (tool call)\n"
        f"steps/s on one core: {per_core:,.0f} in-process, {len(ws_steps) / sum(ws_steps):,.0f} "
        f"through the gateway (WS, one client)\n"
        f"memory per extra session: {memory * 1024:.0f} KB (worker PSS over 60 sessions): "
        f"one worker holds ~{1024 / max(memory, 1e-3):,.0f} sessions per GiB"
    )
    return {
        "local": local,
        "rest": rest,
        "ws": ws,
        "rebuild": rebuild,
        "memory_mb": memory,
        "steps_per_s": per_core,
    }


if __name__ == "__main__":
    main()
