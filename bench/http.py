"""Platform overhead per step: in-process vs the gateway (REST, WebSocket) vs OpenEnv.

All transports step ``palaestra-bench/Overhead-v0`` (a counter: the env itself costs
microseconds), so the differences are the platform: HTTP, JSON, the worker hop and the client.
The gateway runs as its own process with one worker process, as deployed; the OpenEnv baseline
hosts an equivalent counter in its own server process, driven by OpenEnv's own client. On two
cores, three processes ping-ponging are at the mercy of the scheduler, so the transports are
measured in interleaved rounds and each figure is the median over all rounds.

Run: ``palaestra bench http`` or ``python -m palaestra.bench.http``.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from palaestra import registry
from palaestra.bench.fixtures import ENV_ID
from palaestra.client import RemoteEnv
from palaestra.server.runner import gateway_process

console = Console()
ADD = {"name": "add", "args": {"n": 0}}
#: the counter never ends its episode during a measurement
OPTIONS = {"max_steps": 10**9}


def time_steps(env: Any, steps: int, warmup: int) -> list[float]:
    """Per-step latencies in seconds of a gymnasium env."""
    out: list[float] = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        env.step(ADD)
        dt = time.perf_counter() - t0
        if i >= warmup:
            out.append(dt)
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(steps: int = 2000, rounds: int = 5, openenv: bool = True) -> dict[str, list[float]]:
    per_round = max(1, steps // rounds)
    warmup = max(20, per_round // 10)
    runners: dict[str, Callable[[], list[float]]] = {}
    with contextlib.ExitStack() as stack:
        local = registry.make(ENV_ID, **OPTIONS)
        local.reset(seed=0)
        runners["in-process"] = lambda: time_steps(local, per_round, warmup)
        for record in (False, True):
            args = ["--workers", "1", "--log-level", "warning"]
            url, _ = stack.enter_context(
                gateway_process(*args, *([] if record else ["--no-record"]))
            )
            for transport in ("http", "ws") if not record else ("ws",):
                env = RemoteEnv(ENV_ID, base_url=url, transport=transport, options=OPTIONS)
                stack.callback(env.close)
                env.reset(seed=0)
                name = f"gateway-{transport}" + ("+record" if record else "")
                runners[name] = lambda env=env: time_steps(env, per_round, warmup)
        if openenv:
            try:
                from palaestra.bench.openenv_baseline import drive_openenv, openenv_server

                with console.status("starting the OpenEnv server (openenv-core) ..."):
                    oe_url = stack.enter_context(openenv_server())
                runners["openenv-ws"] = lambda: drive_openenv(oe_url, per_round, warmup)
            except RuntimeError as exc:
                console.print(f"[yellow]OpenEnv baseline unavailable:[/] {exc}")
        results: dict[str, list[float]] = {name: [] for name in runners}
        with Progress(console=console, transient=True) as progress:
            job = progress.add_task("interleaved rounds", total=rounds * len(runners))
            for _ in range(rounds):
                for name, run in runners.items():
                    results[name] += run()
                    progress.advance(job)
    return results


def report(results: dict[str, list[float]]) -> Table:
    base = statistics.median(results["in-process"])
    openenv = results.get("openenv-ws")
    oe = statistics.median(openenv) if openenv else None
    table = Table(title=f"step latency, {ENV_ID}")
    table.add_column("transport")
    table.add_column("p50 ms", justify="right")
    table.add_column("p99 ms", justify="right")
    table.add_column("p50 / in-process", justify="right")
    table.add_column("speed-up vs OpenEnv (p50)", justify="right")
    for name, values in results.items():
        p50 = statistics.median(values)
        table.add_row(
            name,
            f"{p50 * 1e3:.3f}",
            f"{_pct(values, 0.99) * 1e3:.3f}",
            f"{p50 / base:.0f}x",
            f"{oe / p50:.2f}x" if oe else "n/a",
        )
    return table


def main(steps: int = 5000, rounds: int = 5, openenv: bool = True) -> dict[str, list[float]]:
    results = measure(steps=steps, rounds=rounds, openenv=openenv)
    console.print(report(results))
    return results


if __name__ == "__main__":
    main()
