"""Running the gateway: in the foreground (``palaestra serve``), in a background thread (the
``check`` command, benchmarks, tests; or without its HTTP server, for ``palaestra eval``) or as
a child process (tests that kill it)."""

from __future__ import annotations

import asyncio
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
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from palaestra.server.app import build_gateway, create_app, running
from palaestra.server.evals import OwnSessions
from palaestra.server.settings import Settings
from palaestra.server.state import Gateway
from palaestra.workers.host import raise_open_files_limit


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HeaderDeadline(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """uvicorn's HTTP protocol, with a deadline on a request's headers.

    uvicorn waits for ever on a connection that sends nothing, or trickles its headers a byte
    at a time (keep-alive and body timeouts start only later), so a few hundred slow clients
    held a few hundred sockets. Here a connection must have sent a request's complete headers
    ``header_timeout_s`` after it opened, or after the first byte of its next request; else it
    is closed. An idle keep-alive connection is uvicorn's (``keep_alive_s``), a slow body the
    app's (``body_timeout_s``), a WebSocket the ping's.
    """

    header_timeout_s = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:
        self._deadline: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        idle = self.cycle is None or self.cycle.response_complete
        if self._deadline is None and idle:
            self._arm()
        super().data_received(data)
        upgraded = self.transport.get_protocol() is not self
        if self._deadline is not None and (self.cycle is not self._waiting or upgraded):
            self._disarm()  # the headers are in (a new request), or it is a WebSocket now

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._waiting = self.cycle
        self._deadline = self.loop.call_later(self.header_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing() and self.transport.get_protocol() is self:
            self.transport.close()


def uvicorn_config(settings: Settings, **extra: Any) -> uvicorn.Config:
    protocol = type(
        "GatewayHTTP", (HeaderDeadline,), {"header_timeout_s": settings.header_timeout_s}
    )
    return uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=extra.pop("log_level", "warning"),
        access_log=False,
        http=protocol,
        ws_max_size=settings.max_body_bytes,
        timeout_keep_alive=settings.keep_alive_s,
        # X-Forwarded-* is the app's to weigh (Settings.trusted_proxies), not uvicorn's, which
        # would believe any loopback peer's and rewrite the scheme and client before the app
        proxy_headers=False,
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
def gateway_in_thread(
    settings: Settings | None = None,
) -> Iterator[tuple[Gateway, asyncio.AbstractEventLoop]]:
    """The gateway without its HTTP server, running in a background thread's event loop
    (workers, sessions, recordings, jobs as ``palaestra serve`` has them); yields its state and
    loop. ``palaestra eval`` plays on it through :class:`~palaestra.server.evals.OwnSessions`,
    as the gateway's own eval jobs do: no HTTP round trip to itself."""
    gw = build_gateway(settings or Settings())
    loop = asyncio.new_event_loop()
    up = threading.Event()
    failed: list[BaseException] = []
    stop: list[asyncio.Event] = []

    async def live() -> None:
        stop.append(asyncio.Event())
        try:
            async with running(gw):
                up.set()
                await stop[0].wait()
        except BaseException as exc:  # said in the caller's thread
            failed.append(exc)
        finally:
            up.set()

    thread = threading.Thread(
        target=loop.run_until_complete, args=(live(),), name="palaestra-gateway", daemon=True
    )
    thread.start()
    up.wait()
    try:
        if failed:
            raise failed[0]
        yield gw, loop
    finally:
        if thread.is_alive():
            loop.call_soon_threadsafe(stop[0].set)
            thread.join(30)
        if not thread.is_alive():
            loop.close()


@contextlib.contextmanager
def local_sessions(
    settings: Settings | None = None,
    *,
    api_key: str | None = None,
    run: str | None = None,
    tags: dict[str, str] | None = None,
) -> Iterator[OwnSessions]:
    """An evaluation's sessions (:class:`~palaestra.evals.sessions.SessionFactory`) on a
    gateway in this process (:func:`gateway_in_thread`), owned as a client with ``api_key``
    would own them, recorded in ``run`` with ``tags``."""
    with gateway_in_thread(settings) as (gw, loop):
        yield OwnSessions(gw.eval_jobs, gw.authenticate(api_key), loop, run, tags)


@contextlib.contextmanager
def gateway_process(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, Any]]:
    """The gateway program (``python -m palaestra.server``, :mod:`palaestra.server.program`) as
    a child process with ``args``; yields (base URL, Popen). It loads the envs this process
    names in ``PALAESTRA_PLUGINS`` (the benchmark fixtures where they were asked for)."""
    port = free_port()
    cmd = [sys.executable, "-m", "palaestra.server", "--port", str(port), *args]
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
