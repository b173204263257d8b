"""The gateway's side of a worker, and the backend interface.

A :class:`Worker` is anything that answers the worker protocol's operations for the sessions it
hosts; the gateway knows nothing more about it. :class:`SocketWorker` speaks the protocol over a
Unix socket with many requests in flight at once (replies are matched by id), which serves a
local subprocess today and a container with a bind-mounted socket folder later. When the
connection drops, every pending call fails with :class:`WorkerCrashed` naming the worker and the
session, and the backend is told so it can fail those sessions and start a replacement.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from palaestra.errors import (
    PalaestraError,
    StepTimeout,
    WorkerCrashed,
    conceal,
    from_problem,
)
from palaestra.workers.protocol import pack, read_frame

log = logging.getLogger("palaestra.workers")

#: the longest pause between attempts to replace a dead worker
REPLACE_PAUSE_MAX_S = 5.0
#: a worker that answers no heartbeat for this long is hung: it is stopped and replaced
HEARTBEAT_S = 15.0


class WorkerLost(Exception):
    """Raised by a worker's ``_call`` when the worker went away during the call."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Worker(abc.ABC):
    """One process (or container, or actor) hosting many env sessions.

    :meth:`call` is the same for every kind of worker: refuse when the worker is dead, bound
    the call by its timeout, and turn a lost worker into WorkerCrashed naming worker, session
    and reason. A kind only says how one call travels (``_call``).
    """

    name: str

    def __init__(self, name: str) -> None:
        self.name = name
        self.sessions: set[str] = set()
        #: set by the backend; called once when the worker dies, with a sentence saying why
        self.on_death: Callable[[Worker, str], None] | None = None
        #: why the worker is gone (or "stopped"); None while it runs
        self._dead_reason: str | None = None

    @property
    @abc.abstractmethod
    def alive(self) -> bool: ...

    @abc.abstractmethod
    async def start(self) -> None: ...

    async def call(self, op: str, sid: str | None, timeout: float, **payload: Any) -> Any:
        """Run one operation; raise the PalaestraError the worker reported, or WorkerCrashed."""
        if not self.alive or sid is None:
            raise WorkerCrashed(
                f"worker {self.name} is not running ({self._dead_reason or 'not started'})",
                worker=self.name,
                session_id=sid,
            )
        try:
            async with asyncio.timeout(timeout):  # no extra task, unlike wait_for
                return await self._call(op, sid, payload)
        except TimeoutError:
            self.drop(sid)
            raise StepTimeout(
                f"{op} on session {sid} took longer than {timeout:g} s on worker {self.name}",
                worker=self.name,
                session_id=sid,
                timeout_s=timeout,
            ) from None
        except WorkerLost as lost:
            self.drop(sid)
            raise WorkerCrashed(
                f"worker {self.name} died ({self._dead_reason or lost.reason}) while handling "
                f"{op} on session {sid}; the session is lost, close it and create a new one",
                worker=self.name,
                session_id=sid,
            ) from None
        except PalaestraError as exc:
            exc.fields.setdefault("worker", self.name)
            raise conceal(exc, log) from None  # its traceback stays in the gateway's log

    @abc.abstractmethod
    async def _call(self, op: str, sid: str, payload: dict[str, Any]) -> Any:
        """Carry one operation to the worker; raise WorkerLost if the worker went away."""

    def _declare_dead(self, reason: str) -> None:
        """Record why the worker is gone and tell the backend, once."""
        if self._dead_reason is None:
            self._dead_reason = reason
            if self.on_death is not None:
                self.on_death(self, reason)

    @abc.abstractmethod
    def drop(self, sid: str) -> None:
        """Forget a session at once (it timed out or its owner left); never blocks."""

    @abc.abstractmethod
    async def stop(self) -> None: ...

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "alive": self.alive, "sessions": len(self.sessions)}


class _Channel:
    """One Unix-socket connection to a worker; requests on it are answered in order."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def request(self, message: dict[str, Any]) -> Any:
        self.writer.write(pack(message))
        reply = await read_frame(self.reader)
        if reply.get("ok"):
            return reply.get("result")
        raise from_problem(reply.get("error") or {})

    def close(self) -> None:
        self.writer.close()


class SocketWorker(Worker):
    """A worker reached over a Unix socket; subclasses decide how the process is started.

    A control connection watches the worker: its EOF means the worker died, and a heartbeat on
    it (a ``ping`` every third of ``heartbeat_s``) finds a worker that is alive but no longer
    answers (stopped, deadlocked, swapping), which is then treated as dead and replaced. Each
    session gets a connection of its own, so a hung session is abandoned by closing it.
    """

    def __init__(self, name: str, socket_path: str, heartbeat_s: float = HEARTBEAT_S) -> None:
        super().__init__(name)
        self.socket_path = socket_path
        self.heartbeat_s = heartbeat_s
        self._control: _Channel | None = None
        self._channels: dict[str, _Channel] = {}
        self._watch_task: asyncio.Task[None] | None = None
        self._heartbeat_task: asyncio.Task[None] | None = None
        self._pong = asyncio.Event()
        self.info: dict[str, Any] = {}

    @property
    def alive(self) -> bool:
        return self._control is not None and self._dead_reason is None

    async def _open(self, deadline: float) -> _Channel:
        loop = asyncio.get_running_loop()
        while True:
            try:
                return _Channel(*await asyncio.open_unix_connection(self.socket_path))
            except (FileNotFoundError, ConnectionRefusedError, BlockingIOError):  # full backlog
                if loop.time() > deadline or not self._process_running():
                    raise WorkerCrashed(
                        f"worker {self.name} did not start: {self._exit_description()}",
                        worker=self.name,
                    ) from None
                await asyncio.sleep(0.02)

    async def connect(self, deadline: float) -> None:
        control = await self._open(deadline)
        self.info = await control.request({"op": "hello"})
        self._control = control
        self._watch_task = asyncio.create_task(self._watch())
        self._heartbeat_task = asyncio.create_task(self._heartbeat())

    def _process_running(self) -> bool:
        return True

    def _exit_description(self) -> str:
        return "its socket never appeared"

    async def _watch(self) -> None:
        """Read the control connection's answers (heartbeats) until EOF: the worker died."""
        assert self._control is not None
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, ValueError):
            while True:
                await read_frame(self._control.reader)
                self._pong.set()
        if self._dead_reason is None:
            self._declare_dead(await self._death_reason())

    async def _heartbeat(self) -> None:
        assert self._control is not None
        while self._dead_reason is None:
            await asyncio.sleep(self.heartbeat_s / 3)
            self._pong.clear()
            self._control.writer.write(pack({"op": "ping"}))
            try:
                async with asyncio.timeout(self.heartbeat_s):
                    await self._pong.wait()
            except TimeoutError:
                self._declare_dead(
                    f"it answered no heartbeat for {self.heartbeat_s:g} s (hung); it is stopped"
                )

    def _declare_dead(self, reason: str) -> None:
        if self._dead_reason is None:
            for channel in self._channels.values():
                channel.close()
        super()._declare_dead(reason)

    async def _death_reason(self) -> str:
        return "its connection closed"

    async def _call(self, op: str, sid: str, payload: dict[str, Any]) -> Any:
        try:
            return await self._request(op, sid, payload)
        except (asyncio.IncompleteReadError, ConnectionError):
            if self._watch_task is not None:  # a worker death shows on the control connection
                await asyncio.wait({self._watch_task}, timeout=1.0)
            raise WorkerLost("the session's connection closed") from None

    async def _request(self, op: str, sid: str, payload: dict[str, Any]) -> Any:
        if op == "make":
            channel = await self._open(asyncio.get_running_loop().time() + 5)
            self._channels[sid] = channel
            try:
                return await channel.request({"op": "make", "sid": sid, **payload})
            except BaseException:
                self.drop(sid)
                raise
        found = self._channels.get(sid)
        if found is None:
            raise WorkerCrashed(
                f"session {sid} has no connection to worker {self.name}",
                worker=self.name,
                session_id=sid,
            )
        result = await found.request({"op": op, **payload})
        if op == "close":
            self.drop(sid)
        return result

    def drop(self, sid: str) -> None:
        """Forget a session without waiting for it: its worker thread ends when it can."""
        channel = self._channels.pop(sid, None)
        if channel is not None:
            channel.close()
        self.sessions.discard(sid)

    async def close_connection(self) -> None:
        """Deliberate shutdown: not a death, so the backend does not replace the worker."""
        self._dead_reason = self._dead_reason or "stopped"
        for sid in list(self._channels):
            self.drop(sid)
        if self._control is not None:
            self._control.close()
        for task in (self._watch_task, self._heartbeat_task):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task


class Backend(abc.ABC):
    """Starts, watches and replaces workers. The gateway asks it for a worker per session."""

    name: str = "backend"

    def __init__(self) -> None:
        self.workers: list[Worker] = []
        #: called with (dead worker, reason); the session manager fails that worker's sessions
        self.on_worker_death: Callable[[Worker, str], None] | None = None
        self.restarts = 0
        #: how long a socket worker may leave a heartbeat unanswered before it counts as hung
        self.heartbeat_s = HEARTBEAT_S

    @abc.abstractmethod
    async def new_worker(self, index: int) -> Worker: ...

    async def start(self, count: int) -> None:
        self.workers = list(await asyncio.gather(*(self._spawn(i) for i in range(count))))

    async def _spawn(self, index: int) -> Worker:
        worker = await self.new_worker(index)
        worker.on_death = self._handle_death
        return worker

    def _handle_death(self, worker: Worker, reason: str) -> None:
        if self.on_worker_death is not None:
            self.on_worker_death(worker, reason)
        if worker in self.workers:
            index = self.workers.index(worker)
            asyncio.get_running_loop().create_task(self._replace(index, worker))

    async def _replace(self, index: int, dead: Worker) -> None:
        """Start a worker in the dead one's place, retrying with a growing pause for as long as
        the slot is still this dead worker's (the backend was not stopped meanwhile): a cluster
        may still be placing work on the node that just went away, an engine may be restarting.
        """
        await dead.stop()
        self.restarts += 1
        attempt = 0
        while index < len(self.workers) and self.workers[index] is dead:
            try:
                replacement = await self._spawn(index)
            except WorkerCrashed:
                await asyncio.sleep(min(0.5 * 2**attempt, REPLACE_PAUSE_MAX_S))
                attempt += 1
                continue
            if index < len(self.workers) and self.workers[index] is dead:
                self.workers[index] = replacement
            else:
                await replacement.stop()
            return

    def pick(self) -> Worker:
        """The live worker with the fewest sessions."""
        live = [w for w in self.workers if w.alive]
        if not live:
            raise WorkerCrashed("no worker is running (they are being restarted); retry shortly")
        return min(live, key=lambda w: len(w.sessions))

    async def stop(self) -> None:
        workers, self.workers = self.workers, []
        await asyncio.gather(*(w.stop() for w in workers), return_exceptions=True)
