"""Structured observation fields: step p50 with JSON values (``?structured=true``) against the
same fields as JSON text, through the gateway.

The env is ``palaestra/usersim-v0`` observing its tool schemas (``tools``, about 5 KB of JSON),
the last tool result and the user's message; every step is one domain tool call written as an
OpenAI tool call (a lookup on SQLite, microseconds), so the differences are the fields' trip:
the gateway parsing the JSON text and the client keeping the values instead of strings. Each
round resets its session so the conversation does not grow during a measurement; rounds are
interleaved (two cores are at the mercy of the scheduler) and each figure is the median over
all of them. In-process is the floor.

Run: ``python -m palaestra.bench.fidelity``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

from rich.table import Table

from palaestra import registry
from palaestra.bench import harness
from palaestra.bench.harness import console
from palaestra.client import RemoteEnv
from palaestra.server.runner import gateway_process

ENV_ID = "palaestra/usersim-v0"
OPTIONS: dict[str, Any] = {
    "max_steps": 10_000,  # the most a client may ask for; each round resets
    "observe": ["user_message", "tools", "last_tool_result"],
}
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_user_details", "arguments": json.dumps({"user_id": "nobody"})},
}


def _runner(env: Any, steps: int, warmup: int) -> Callable[[], list[float]]:
    def run() -> list[float]:
        env.reset(seed=0)
        return harness.sample(lambda: env.step(CALL), steps, warmup)

    return run


def measure(steps: int = 2000, rounds: int = 5) -> dict[str, list[float]]:
    per_round = max(1, steps // rounds)
    warmup = max(10, per_round // 10)
    runners: dict[str, Callable[[], list[float]]] = {}
    with contextlib.ExitStack() as stack:
        local = registry.make(ENV_ID, **OPTIONS)
        stack.callback(local.close)
        runners["in-process (text)"] = _runner(local, per_round, warmup)
        url, _ = stack.enter_context(
            gateway_process("--workers", "1", "--log-level", "warning", "--no-record")
        )
        for transport in ("http", "ws"):
            for structured in (False, True):
                env = RemoteEnv(
                    ENV_ID,
                    base_url=url,
                    transport=transport,
                    options=OPTIONS,
                    structured=structured,
                )
                stack.callback(env.close)
                name = f"gateway-{transport} " + ("structured" if structured else "text")
                runners[name] = _runner(env, per_round, warmup)
        return harness.interleave(runners, rounds)


def report(results: dict[str, list[float]]) -> Table:
    """p50/p99 per row, the structured rows against the text row of the same transport."""
    base = harness.ms(results["in-process (text)"])
    rows = []
    for name, values in results.items():
        text = results.get(name.replace("structured", "text"))
        rows.append(
            (
                name,
                f"{harness.ms(values):.3f}",
                f"{harness.ms(values, 0.99):.3f}",
                harness.ratio(harness.ms(values), base),
                harness.ratio(harness.ms(values), harness.ms(text)) if text else "n/a",
            )
        )
    columns = ("fields", "p50 ms", "p99 ms", "p50 / in-process", "p50 / text")
    return harness.table(f"structured fields, {ENV_ID} tool-call step", columns, rows)


def main(steps: int = 2000, rounds: int = 5) -> dict[str, list[float]]:
    results = measure(steps=steps, rounds=rounds)
    console.print(report(results))
    return results


if __name__ == "__main__":
    main()
