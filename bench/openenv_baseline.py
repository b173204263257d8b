"""OpenEnv baseline for the HTTP benchmark: the current ``openenv`` release, server and client.

Why this exists: to put our gateway's per-step latency next to a reference point measured in
the same run, on the same machine. The reference is Meta's OpenEnv (``openenv`` 0.10, which
ships ``openenv.core``) hosting an equivalent trivial "counter" env, built only from OpenEnv's
public pieces (``Environment``, ``Action``, ``Observation``, ``State``, the ``create_app``
server factory), and driven by OpenEnv's own ``GenericEnvClient``. The same client also drives
palaestra's own OpenEnv endpoint (``/openenv/<env>/``), so the two servers meet one client.

Facts about openenv 0.10 that shape this file:

* It pins ``fastmcp<4`` (palaestra's venv has 4) and pulls gradio, so it lives in its own venv,
  ``.venv-openenv``, built by ``scripts/setup-openenv.sh`` (``make setup`` runs it;
  :func:`ensure_openenv_venv` runs the same script). The server runs there (uvicorn
  with :func:`create_counter_app`), and the client runs there too: :func:`_drive`, a
  long-lived process that times steps when asked on stdin, so the benchmark can interleave it
  with palaestra's own transports round by round.
* ``import openenv.core`` eagerly imports gradio (4 s, far more on busy cores): both processes
  start once per benchmark, never per round.
* ``/ws`` is stateful (one server-side env per connection); the HTTP ``/reset`` and ``/step``
  routes build a fresh env per request, so they cannot run an episode and are not measured.
* The counter's goal is out of reach during a measurement (as palaestra's counter gets
  ``max_steps=10**9``): no resets inside the timed steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
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
except ImportError:  # served or run from this folder in .venv-openenv, without palaestra
    import harness  # type: ignore[no-redef]

GOAL = 10**9
ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-openenv"
SETUP = ROOT / "scripts" / "setup-openenv.sh"
HEALTH_TIMEOUT_S = 120.0
#: how the .venv-openenv processes import this file: its folder goes at the *end* of sys.path,
#: since it holds an ``http.py`` (palaestra's benchmark) that would shadow the standard library
_IMPORT = (
    f"import sys, asyncio; sys.path.append({str(Path(__file__).resolve().parent)!r}); "
    "import openenv_baseline as b"
)


def ensure_openenv_venv() -> Path:
    """``.venv-openenv``'s python, built by ``scripts/setup-openenv.sh`` if missing."""
    python = VENV / "bin" / "python"
    try:
        subprocess.run(["bash", str(SETUP)], check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        raise RuntimeError(f"cannot build {VENV}: {exc}\n{detail[-2000:]}") from exc
    return python


# ----- the counter env, in OpenEnv's own terms (imported in .venv-openenv only) ---------------
@functools.cache
def _openenv() -> SimpleNamespace:
    """Import OpenEnv and define the counter env and its models (done once)."""
    try:
        from openenv.core.env_server import Action, Environment, Observation, State, create_app
    except ImportError as exc:
        raise RuntimeError(f"openenv is not importable: {exc}") from exc

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

    return SimpleNamespace(
        create_app=create_app,
        Action=CounterAction,
        Observation=CounterObservation,
        Environment=CounterEnvironment,
    )


def create_counter_app() -> Any:
    """Uvicorn ``--factory`` target: the counter env behind OpenEnv's own FastAPI app."""
    oe = _openenv()
    return oe.create_app(oe.Environment, oe.Action, oe.Observation, env_name="counter")


# ----- the client side, as a script in .venv-openenv -------------------------------------------
async def _drive() -> None:
    """The client process: one JSON request a line on stdin, ``{"url", "action", "steps", "warmup",
    "headers"}``; answers the step latencies (seconds) as one JSON line. A client per URL is
    connected (and reset) once and kept across requests."""
    from openenv.core import GenericEnvClient

    clients: dict[str, Any] = {}
    loop = asyncio.get_running_loop()
    try:
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                return
            req = json.loads(line)
            client = clients.get(req["url"])
            if client is None:
                client = GenericEnvClient(base_url=req["url"], headers=req.get("headers"))
                await client.connect()
                await client.reset()
                clients[req["url"]] = client
            action, latencies = req["action"], []
            for i in range(req["warmup"] + req["steps"]):
                t0 = time.perf_counter()
                result = await client.step(action)
                if i >= req["warmup"]:
                    latencies.append(time.perf_counter() - t0)
                if result.done or result.observation is None:
                    raise RuntimeError(f"unexpected step result: {result!r}")
            sys.stdout.write(json.dumps(latencies) + "\n")
            sys.stdout.flush()
    finally:
        for client in clients.values():
            with contextlib.suppress(Exception):
                await client.close()


class OpenEnvClient:
    """OpenEnv's ``GenericEnvClient`` in a ``.venv-openenv`` process, timing steps on request."""

    def __init__(self, python: Path) -> None:
        self.proc = subprocess.Popen(
            [str(python), "-c", f"{_IMPORT}; asyncio.run(b._drive())"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "NO_PROXY": "127.0.0.1,localhost"},
        )

    def steps(
        self,
        url: str,
        action: dict[str, Any],
        n: int,
        warmup: int,
        headers: dict[str, str] | None = None,
    ) -> list[float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        req = {"url": url, "action": action, "steps": n, "warmup": warmup, "headers": headers}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the OpenEnv client exited with code {self.proc.wait()}")
        latencies: list[float] = json.loads(line)
        return latencies

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ----- the server side ------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_healthy(proc: subprocess.Popen, url: str, log: Path) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"OpenEnv server exited with code {proc.returncode}:\n{tail}")
        with contextlib.suppress(OSError), opener.open(f"{url}/health", timeout=1) as resp:
            if resp.status == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"OpenEnv server not healthy at {url} after {HEALTH_TIMEOUT_S:.0f}s")


@contextlib.contextmanager
def openenv_server(python: Path) -> Iterator[str]:
    """OpenEnv's own server hosting the counter env on 127.0.0.1 (free port), a uvicorn
    subprocess of ``python`` (.venv-openenv's); yields its URL once healthy and stops it (by
    its PID) afterwards. RuntimeError with the reason if it cannot serve."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    serve = (
        f"{_IMPORT}; import uvicorn; uvicorn.run(b.create_counter_app, factory=True, "
        f"host='127.0.0.1', port={port}, log_level='warning', access_log=False)"
    )
    cmd = [str(python), "-c", serve]
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


#: the counter's action, in OpenEnv's terms
COUNTER_ACTION = {"n": 1}


def measure_openenv(n_steps: int = 500, warmup: int = 50) -> dict[str, list[float]]:
    """Build the venv if needed, start OpenEnv's server and client, step, stop:
    ``{"openenv-ws": [...]}``."""
    python = ensure_openenv_venv()
    client = OpenEnvClient(python)
    try:
        with openenv_server(python) as url:
            return {"openenv-ws": client.steps(url, COUNTER_ACTION, n_steps, warmup)}
    finally:
        client.close()


if __name__ == "__main__":
    for name, values in measure_openenv().items():
        print(f"{name}: {harness.describe(values)}")
