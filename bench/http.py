"""Platform overhead per step: in-process vs the gateway (REST, WebSocket, its OpenEnv
endpoint) vs OpenEnv's own server.

All transports step ``palaestra-bench/Overhead-v0`` (a counter: the env itself costs
microseconds), so the differences are the platform: HTTP, JSON, the worker hop and the client.
The gateway runs as its own process with one worker process, as deployed. OpenEnv's side (the
current ``openenv`` release, in ``.venv-openenv``: see ``openenv_baseline.py``) hosts an
equivalent counter in its own server process; OpenEnv's own ``GenericEnvClient`` steps both it
(``openenv-ws``) and palaestra's ``/openenv/palaestra-bench/Overhead-v0/`` endpoint
(``gateway-openenv-ws``), so those two rows differ only by the server. On two cores, several
processes ping-ponging are at the mercy of the scheduler, so the transports are measured in
interleaved rounds and each figure is the median over all rounds.

Run: ``palaestra bench http`` or ``python -m palaestra.bench.http``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

import httpx
import orjson
from rich.table import Table

from palaestra import registry
from palaestra.bench import harness
from palaestra.bench.fixtures import ENV_ID, use_fixtures
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
        gateway_url = ""
        for record in (False, True):
            args = ["--workers", "1", "--log-level", "warning"]
            url, _ = stack.enter_context(
                gateway_process(*args, *([] if record else ["--no-record"]))
            )
            gateway_url = gateway_url or url
            for transport in ("http", "ws") if not record else ("ws",):
                env = RemoteEnv(ENV_ID, base_url=url, transport=transport, options=OPTIONS)
                stack.callback(env.close)
                env.reset(seed=0)
                name = f"gateway-{transport}" + ("+record" if record else "")
                runners[name] = functools.partial(time_steps, env, per_round, warmup)
        if openenv:
            runners.update(_raw_ws_runners(stack, gateway_url, per_round, warmup))
            try:
                runners.update(_openenv_runners(stack, gateway_url, per_round, warmup))
            except RuntimeError as exc:
                console.print(f"[yellow]OpenEnv baseline unavailable:[/] {exc}")
        return harness.interleave(runners, rounds)


def _raw_ws_runners(
    stack: contextlib.ExitStack, gateway_url: str, n: int, warmup: int
) -> dict[str, Callable[[], list[float]]]:
    """One bare client (websockets' sync client, JSON text frames) on palaestra's v1 socket and
    on its OpenEnv socket: the two ``/raw`` rows differ only by the server's side, where the
    other rows also differ by the client (RemoteEnv vs OpenEnv's GenericEnvClient)."""
    from websockets.sync.client import connect

    ws_base = gateway_url.replace("http://", "ws://", 1)
    made = httpx.post(f"{gateway_url}/v1/sessions", json={"env": ENV_ID, "options": OPTIONS})
    v1 = stack.enter_context(connect(f"{ws_base}/v1/sessions/{made.json()['session_id']}/ws"))
    headers = {"X-Palaestra-Options": orjson.dumps(OPTIONS).decode()}
    oe = stack.enter_context(connect(f"{ws_base}/openenv/{ENV_ID}/ws", additional_headers=headers))
    for sock, reset in ((v1, {"op": "reset"}), (oe, {"type": "reset"})):
        sock.send(orjson.dumps(reset).decode())
        sock.recv()

    def steps(sock: Any, message: dict[str, Any]) -> list[float]:
        text = orjson.dumps(message).decode()

        def one() -> None:
            sock.send(text)
            sock.recv()

        return harness.sample(one, n, warmup)

    return {
        "gateway-ws/raw": lambda: steps(v1, {"op": "step", "action": ADD}),
        "gateway-openenv-ws/raw": lambda: steps(oe, {"type": "step", "data": ADD}),
    }


def _openenv_runners(
    stack: contextlib.ExitStack, gateway_url: str, n: int, warmup: int
) -> dict[str, Callable[[], list[float]]]:
    """OpenEnv's own client (one .venv-openenv process) against palaestra's OpenEnv endpoint
    and against OpenEnv's own server hosting the counter."""
    from palaestra.bench import openenv_baseline as oeb

    with console.status("starting OpenEnv's server and client (.venv-openenv) ..."):
        python = oeb.ensure_openenv_venv()
        client = oeb.OpenEnvClient(python)
        stack.callback(client.close)
        oe_url = stack.enter_context(oeb.openenv_server(python))
    ours = f"{gateway_url}/openenv/{ENV_ID}"
    headers = {"X-Palaestra-Options": orjson.dumps(OPTIONS).decode()}
    return {
        "gateway-openenv-ws": lambda: client.steps(ours, ADD, n, warmup, headers),
        "openenv-ws": lambda: client.steps(oe_url, oeb.COUNTER_ACTION, n, warmup),
    }


def report(results: dict[str, list[float]]) -> Table:
    """p50/p99 per transport, against in-process, palaestra's v1 WebSocket (the target for the
    OpenEnv endpoint: within 1.2x, read on the ``/raw`` rows, one client for both) and OpenEnv's
    own server (target: 1.5x faster, read on ``gateway-openenv-ws``: OpenEnv's client on
    both)."""
    base = harness.ms(results["in-process"])
    ws = harness.ms(results["gateway-ws"]) if "gateway-ws" in results else None
    raw = results.get("gateway-ws/raw")
    raw_ws = harness.ms(raw) if raw else None
    openenv = results.get("openenv-ws")
    oe = harness.ms(openenv) if openenv else None
    columns = (
        "transport", "p50 ms", "p99 ms", "p50 / in-process", "p50 / gateway-ws",
        "speed-up vs OpenEnv (p50)",
    )  # fmt: skip
    rows = [
        (
            name,
            f"{harness.ms(values):.3f}",
            f"{harness.ms(values, 0.99):.3f}",
            harness.ratio(harness.ms(values), base, 0),
            harness.ratio(harness.ms(values), raw_ws if name.endswith("/raw") else ws),
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
    use_fixtures()  # the counter, here and in the gateway's workers
    main()
