"""Running the gateway: in the foreground (``palaestra serve``), in a background thread (the
``check`` command, benchmarks, tests) or as a child process (tests that kill it)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import uvicorn

from palaestra.server.app import create_app
from palaestra.server.settings import Settings
from palaestra.workers.host import raise_open_files_limit


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def uvicorn_config(settings: Settings, **extra: Any) -> uvicorn.Config:
    return uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=extra.pop("log_level", "warning"),
        access_log=False,
        ws_max_size=settings.max_body_bytes,
        timeout_keep_alive=60,
        ws="websockets-sansio",
        ws_per_message_deflate=False,  # observations carry PNG/JPEG already
        **extra,
    )


def serve(settings: Settings, log_level: str = "info") -> None:
    settings.check_bind()
    raise_open_files_limit()  # one socket per session to its worker; local workers inherit it
    uvicorn.Server(uvicorn_config(settings, log_level=log_level)).run()


def wait_healthy(base_url: str, timeout: float = 60.0, proc: Any = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the gateway exited with status {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base_url}/v1/health", timeout=2).status_code == 200:
                return
        time.sleep(0.05)
    raise RuntimeError(f"the gateway at {base_url} did not become healthy in {timeout:g} s")


@contextlib.contextmanager
def gateway_thread(settings: Settings | None = None, **overrides: Any) -> Iterator[str]:
    """A real gateway on 127.0.0.1 (free port) in a background thread; yields its base URL."""
    settings = (settings or Settings()).model_copy(
        update={"host": "127.0.0.1", "port": free_port(), **overrides}
    )
    server = uvicorn.Server(uvicorn_config(settings))
    thread = threading.Thread(target=server.run, name="palaestra-gateway", daemon=True)
    thread.start()
    base_url = f"http://127.0.0.1:{settings.port}"
    try:
        wait_healthy(base_url)
        yield base_url
    finally:
        server.should_exit = True
        thread.join(30)


@contextlib.contextmanager
def gateway_process(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, Any]]:
    """``palaestra serve`` as a child process; yields (base URL, Popen)."""
    port = free_port()
    cmd = [sys.executable, "-m", "palaestra.cli", "serve", "--port", str(port), *args]
    proc = subprocess.Popen(cmd, env={**os.environ, **(env or {})})
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base_url, proc=proc)
        yield base_url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
