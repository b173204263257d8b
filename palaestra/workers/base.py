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
import itertools
from collections.abc import Callable
from typing import Any

from palaestra.errors import PalaestraError, StepTimeout, WorkerCrashed, from_problem
from palaestra.workers.protocol import pack, read_frame


class Worker(abc.ABC):
    """One process (or container, or actor) hosting many env sessions."""

    name: str

    def __init__(self, name: str) -> None:
        self.name = name
        self.sessions: set[str] = set()
        #: set by the backend; called once when the worker dies, with a sentence saying why
        self.on_death: Callable[[Worker, str], None] | None = None

    @property
    @abc.abstractmethod
    def alive(self) -> bool: ...

    @abc.abstractmethod
    async def start(self) -> None: ...

    @abc.abstractmethod
    async def call(self, op: str, sid: str | None, timeout: float, **payload: Any) -> Any:
        """Run one operation; raise the PalaestraError the worker reported, or WorkerCrashed."""

    @abc.abstractmethod
    async def stop(self) -> None: ...

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "alive": self.alive, "sessions": len(self.sessions)}


class SocketWorker(Worker):
    """A worker reached over a Unix socket; subclasses decide how the process is started."""

    def __init__(self, name: str, socket_path: str) -> None:
        super().__init__(name)
        self.socket_path = socket_path
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, tuple[asyncio.Future[Any], str | None]] = {}
        self._ids = itertools.count(1)
        self._reader_task: asyncio.Task[None] | None = None
        self._dead_reason: str | None = None

    @property
    def alive(self) -> bool:
        return self._writer is not None and self._dead_reason is None

    async def connect(self, deadline: float) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                self._reader, self._writer = await asyncio.open_unix_connection(self.socket_path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if loop.time() > deadline or not self._process_running():
                    raise WorkerCrashed(
                        f"worker {self.name} did not start: {self._exit_description()}",
                        worker=self.name,
                    ) from None
                await asyncio.sleep(0.02)
        self._reader_task = asyncio.create_task(self._read_loop())

    def _process_running(self) -> bool:
        return True

    def _exit_description(self) -> str:
        return "its socket never appeared"

    async def _read_loop(self) -> None:
        assert self._reader is not None
        try:
            while True:
                msg = await read_frame(self._reader)
                entry = self._pending.pop(msg.get("id"), None)
                if entry is None or entry[0].done():
                    continue
                if msg.get("ok"):
                    entry[0].set_result(msg.get("result"))
                else:
                    entry[0].set_exception(from_problem(msg.get("error") or {}))
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        await self._died(await self._death_reason())

    async def _death_reason(self) -> str:
        return "its connection closed"

    async def _died(self, reason: str) -> None:
        if self._dead_reason is not None:
            return
        self._dead_reason = reason
        for fut, sid in self._pending.values():
            if not fut.done():
                fut.set_exception(
                    WorkerCrashed(
                        f"worker {self.name} died ({reason}) while handling session {sid}",
                        worker=self.name,
                        session_id=sid,
                    )
                )
        self._pending.clear()
        if self._writer is not None:
            self._writer.close()
        if self.on_death is not None:
            self.on_death(self, reason)

    async def call(self, op: str, sid: str | None, timeout: float, **payload: Any) -> Any:
        if not self.alive or self._writer is None:
            raise WorkerCrashed(
                f"worker {self.name} is not running ({self._dead_reason or 'not started'})",
                worker=self.name,
                session_id=sid,
            )
        rid = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = (fut, sid)
        self._writer.write(pack({"id": rid, "op": op, "sid": sid, **payload}))
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            self._pending.pop(rid, None)
            raise StepTimeout(
                f"{op} on session {sid} took longer than {timeout:g} s on worker {self.name}",
                worker=self.name,
                session_id=sid,
                timeout_s=timeout,
            ) from None
        except PalaestraError as exc:
            exc.fields.setdefault("worker", self.name)
            raise

    async def close_connection(self) -> None:
        """Deliberate shutdown: not a death, so the backend does not replace the worker."""
        self._dead_reason = self._dead_reason or "stopped"
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
        if self._reader_task is not None:
            self._reader_task.cancel()
            with contextlib.suppress(BaseException):
                await self._reader_task


class Backend(abc.ABC):
    """Starts, watches and replaces workers. The gateway asks it for a worker per session."""

    name: str = "backend"

    def __init__(self) -> None:
        self.workers: list[Worker] = []
        #: called with (dead worker, reason); the session manager fails that worker's sessions
        self.on_worker_death: Callable[[Worker, str], None] | None = None
        self.restarts = 0

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
        await dead.stop()
        self.restarts += 1
        replacement = await self._spawn(index)
        if index < len(self.workers) and self.workers[index] is dead:
            self.workers[index] = replacement
        else:
            await replacement.stop()

    def pick(self) -> Worker:
        """The live worker with the fewest sessions."""
        live = [w for w in self.workers if w.alive]
        if not live:
            raise WorkerCrashed("no worker is running (they are being restarted); retry shortly")
        return min(live, key=lambda w: len(w.sessions))

    async def stop(self) -> None:
        workers, self.workers = self.workers, []
        await asyncio.gather(*(w.stop() for w in workers), return_exceptions=True)
