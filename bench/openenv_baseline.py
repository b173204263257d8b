"""OpenEnv baseline for the HTTP benchmark.

Why this exists: to put our gateway's per-step latency next to a reference point measured in
the same run, on the same machine. The reference is Meta's OpenEnv (``openenv-core``) hosting an
equivalent trivial "counter" env, built only from OpenEnv's public pieces (``Environment``,
``Action``, ``Observation``, ``State``, the ``create_app`` server factory) and driven by
OpenEnv's own ``EnvClient``, the way an OpenEnv user would.

Facts about openenv-core 0.3.0 that shape this file:

* ``EnvClient`` speaks WebSocket only (``/ws``: one server-side env per connection). There is
  no HTTP client class, so only ``"openenv-ws"`` is measured.
* The server's HTTP ``/reset`` and ``/step`` routes are stateless: each request builds a fresh
  env and closes it, so they cannot run an episode and are not measured.
* ``import openenv.core`` eagerly imports gradio (about 3 s), so OpenEnv is imported lazily.

The server runs as ``python -m uvicorn --factory openenv_baseline:create_counter_app`` with
this file's folder as ``--app-dir``, so it works whether or not palaestra is installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

try:
    from palaestra.bench import harness
except ImportError:  # served from this folder (``--app-dir``) without palaestra installed
    import harness  # type: ignore[no-redef]

GOAL = 10
TRANSPORT = "openenv-ws"
HEALTH_TIMEOUT_S = 60.0


@functools.cache
def _openenv() -> SimpleNamespace:
    """Import OpenEnv and define the counter env, its models and its client (done once)."""
    try:
        from openenv.core import EnvClient
        from openenv.core.client_types import StepResult
        from openenv.core.env_server import Action, Environment, Observation, State, create_app
    except ImportError as exc:
        raise RuntimeError(f"openenv-core is not importable: {exc}") from exc

    class CounterAction(Action):
        n: int = 1

    class CounterObservation(Observation):
        count: int = 0
        goal: str = f"reach {GOAL}"

    class CounterEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._state = State(step_count=0)
            self._count = 0

        def reset(self, seed=None, episode_id=None, **kwargs) -> CounterObservation:
            self._state = State(episode_id=episode_id, step_count=0)
            self._count = 0
            return CounterObservation(count=0)

        def step(self, action, timeout_s=None, **kwargs) -> CounterObservation:
            self._state.step_count += 1
            self._count += action.n
            done = self._count >= GOAL
            return CounterObservation(count=self._count, done=done, reward=1.0 if done else 0.0)

        @property
        def state(self) -> State:
            return self._state

    class CounterClient(EnvClient[CounterAction, CounterObservation, State]):
        def _step_payload(self, action: CounterAction) -> dict[str, Any]:
            return {"n": action.n}

        def _parse_result(self, payload: dict[str, Any]) -> StepResult[CounterObservation]:
            obs = CounterObservation(
                **payload.get("observation", {}),
                done=payload.get("done", False),
                reward=payload.get("reward"),
            )
            return StepResult(observation=obs, reward=obs.reward, done=obs.done)

        def _parse_state(self, payload: dict[str, Any]) -> State:
            return State(**payload)

    return SimpleNamespace(
        create_app=create_app,
        Action=CounterAction,
        Observation=CounterObservation,
        Environment=CounterEnvironment,
        Client=CounterClient,
    )


def create_counter_app() -> Any:
    """Uvicorn ``--factory`` target: the counter env behind OpenEnv's own FastAPI app."""
    oe = _openenv()
    return oe.create_app(oe.Environment, oe.Action, oe.Observation, env_name="counter")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(proc: subprocess.Popen, url: str, log: Path) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"OpenEnv server exited with code {proc.returncode}:\n{tail}")
        try:
            with opener.open(f"{url}/health", timeout=1) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"OpenEnv server not healthy at {url} after {HEALTH_TIMEOUT_S:.0f}s")


async def _drive_ws(url: str, n_steps: int, warmup: int) -> list[float]:
    oe = _openenv()
    action = oe.Action(n=1)
    latencies = harness.Timings("step")
    async with oe.Client(base_url=url) as client:
        first = await client.reset(seed=0)
        if first.observation.count != 0 or first.observation.goal != f"reach {GOAL}":
            raise RuntimeError(f"unexpected reset observation: {first.observation!r}")
        for _ in range(warmup + n_steps):
            with latencies.timed("step"):
                result = await client.step(action)
            if result.done:
                if result.reward != 1.0 or result.observation.count < GOAL:
                    raise RuntimeError(f"unexpected terminal step: {result!r}")
                await client.reset(seed=0)
    return latencies["step"][warmup:]


@contextlib.contextmanager
def openenv_server() -> Iterator[str]:
    """An OpenEnv server hosting the counter env on 127.0.0.1 (free port) in a uvicorn
    subprocess; yields its URL once healthy and stops it (by its PID) afterwards.

    Raises RuntimeError with the reason if openenv-core cannot be imported or cannot serve.
    """
    _openenv()  # fail fast, with a clear message, if openenv-core is missing
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable, "-m", "uvicorn", "--factory", "openenv_baseline:create_counter_app",
        "--app-dir", str(Path(__file__).resolve().parent),
        "--host", "127.0.0.1", "--port", str(port),
        "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    env = {**os.environ, "ENABLE_WEB_INTERFACE": "false"}  # plain API app, no gradio UI
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        with log.open("wb") as log_file:
            proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, env=env)
        try:
            _wait_healthy(proc, url, log)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def drive_openenv(url: str, n_steps: int, warmup: int) -> list[float]:
    """Per-step latencies (seconds) of OpenEnv's own client; resets are not timed."""
    return asyncio.run(_drive_ws(url, n_steps, warmup))


def measure_openenv(n_steps: int = 500, warmup: int = 50) -> dict[str, list[float]]:
    """Start a server, step it, stop it: ``{"openenv-ws": [...]}``."""
    with openenv_server() as url:
        return {TRANSPORT: drive_openenv(url, n_steps, warmup)}


if __name__ == "__main__":
    for name, values in measure_openenv().items():
        print(f"{name}: {harness.describe(values)}")
