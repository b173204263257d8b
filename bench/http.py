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
from collections.abc import Callable
from typing import Any

from rich.table import Table

from palaestra import registry
from palaestra.bench import harness
from palaestra.bench.fixtures import ENV_ID
from palaestra.bench.harness import console
from palaestra.client import RemoteEnv
from palaestra.server.runner import gateway_process

ADD = {"name": "add", "args": {"n": 0}}
#: the counter never ends its episode during a measurement
OPTIONS = {"max_steps": 10**9}


def time_steps(env: Any, steps: int, warmup: int) -> list[float]:
    """Per-step latencies in seconds of a gymnasium env."""
    return harness.sample(lambda: env.step(ADD), steps, warmup)


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
        return harness.interleave(runners, rounds)


def report(results: dict[str, list[float]]) -> Table:
    base = harness.ms(results["in-process"])
    openenv = results.get("openenv-ws")
    oe = harness.ms(openenv) if openenv else None
    columns = ("transport", "p50 ms", "p99 ms", "p50 / in-process", "speed-up vs OpenEnv (p50)")
    rows = [
        (
            name,
            f"{harness.ms(values):.3f}",
            f"{harness.ms(values, 0.99):.3f}",
            harness.ratio(harness.ms(values), base, 0),
            harness.ratio(oe, harness.ms(values)),
        )
        for name, values in results.items()
    ]
    return harness.table(f"step latency, {ENV_ID}", columns, rows)


def main(steps: int = 5000, rounds: int = 5, openenv: bool = True) -> dict[str, list[float]]:
    results = measure(steps=steps, rounds=rounds, openenv=openenv)
    console.print(report(results))
    return results


if __name__ == "__main__":
    main()
