"""The Ray backend: workers are Ray actors, so a pool can span the machines of a Ray cluster.

Each worker is one actor (a process on some node) hosting many sessions, exactly like a local
worker process: the same :class:`~palaestra.workers.host.HostedSession` runs the env and the
same :func:`~palaestra.workers.host.reply` turns its errors into problems. Inside the actor every
session has a thread of its own for its whole life (calls arrive on Ray's thread pool and are
handed over), so thread-bound env code behaves as it does locally, and a hung session holds up
only itself. The gateway awaits the actor's answers on its event loop.

A worker's death (its process or its node gone) shows on a call that never returns while the
actor lives (``wait_forever``): it raises as soon as Ray declares the actor dead, the sessions it
hosted fail with the reason, and the backend starts a replacement wherever the cluster has room.
Actors ask for resources (CPUs, memory, custom ones such as ``browser``) and are placed by
Ray's ``SPREAD`` strategy (one per node first) or its default packing.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import queue
import threading
from concurrent.futures import Future
from typing import Any

from palaestra.errors import WorkerCrashed, from_problem
from palaestra.workers.base import Backend, Worker, WorkerLost

#: Ray turns a loopback address into this machine's network address ("remotely reachable")
#: unless this is off; a one-machine cluster must stay on loopback, so it is set before Ray is
#: imported whenever the driver's address is a loopback one (see :func:`loopback_only`)
LOOPBACK_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: variables a worker must see as the gateway does (plugins, suites, where files go)
FORWARDED_ENV = (
    "PALAESTRA_PLUGINS",
    "PALAESTRA_SUITE_PATH",
    "PALAESTRA_HOME",
    "PYTHONPATH",
    LOOPBACK_VAR,
)
NAMESPACE = "palaestra"


def loopback_only() -> None:
    """Keep Ray (the driver here, and the nodes it starts) on 127.0.0.1."""
    os.environ[LOOPBACK_VAR] = "0"


class _SessionThread:
    """One session's own thread inside an actor; requests are run in arrival order."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self.session: Any = None
        self.jobs: queue.SimpleQueue[tuple[str, dict[str, Any], Future[Any]] | None] = (
            queue.SimpleQueue()
        )
        threading.Thread(target=self._loop, daemon=True).start()

    def submit(self, op: str, msg: dict[str, Any]) -> Future[Any]:
        done: Future[Any] = Future()
        self.jobs.put((op, msg, done))
        return done

    def _loop(self) -> None:
        from palaestra.workers.host import reply

        while (job := self.jobs.get()) is not None:
            op, msg, done = job
            done.set_result(reply(self.host.name, op, lambda op=op, msg=msg: self._run(op, msg)))
            if op == "close":
                break

    def _run(self, op: str, msg: dict[str, Any]) -> Any:
        if op == "make":
            self.session = self.host.open(msg)
            return self.session.describe()
        if op == "close":
            if self.session is not None:
                self.host.forget(self.session)
            return {}
        return self.session.run(op, msg)

    def stop(self) -> None:
        self.jobs.put(None)
        if self.session is not None:
            self.host.forget(self.session)


class WorkerActor:
    """The body of a worker actor (wrapped with ``ray.remote`` when the backend starts)."""

    def __init__(self, name: str) -> None:
        from palaestra.registry import load_plugins
        from palaestra.workers.host import WorkerHost

        load_plugins()
        self.host = WorkerHost(name)
        self.threads: dict[str, _SessionThread] = {}
        self._forever = threading.Event()

    def hello(self) -> dict[str, Any]:
        import ray

        ctx = ray.get_runtime_context()
        return {
            "name": self.host.name,
            "pid": os.getpid(),
            "node_id": ctx.get_node_id(),
            "node_ip": ray.util.get_node_ip_address(),
        }

    def call(self, op: str, sid: str, payload: dict[str, Any]) -> dict[str, Any]:
        from palaestra.errors import InvalidRequest, SessionNotFound

        thread = self.threads.get(sid)
        if op == "make":
            if thread is not None:
                return {"ok": False, "error": InvalidRequest(f"{sid} exists").to_problem()}
            thread = self.threads[sid] = _SessionThread(self.host)
        if thread is None:
            return {"ok": False, "error": SessionNotFound(f"no session {sid}").to_problem()}
        answer = thread.submit(op, {"sid": sid, **payload}).result()
        if op == "close" or (op == "make" and not answer["ok"]):
            self.threads.pop(sid, None)
        return answer

    def drop(self, sid: str) -> None:
        """Forget a session without waiting (it timed out or its owner left)."""
        thread = self.threads.pop(sid, None)
        if thread is not None:
            thread.stop()

    def wait_forever(self) -> None:
        """Never returns while the actor lives: the gateway's watch on this worker."""
        self._forever.wait()


class RayWorker(Worker):
    def __init__(self, name: str, actor: Any) -> None:
        super().__init__(name)
        self.actor = actor
        self.info: dict[str, Any] = {}
        self._watch_task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return bool(self.info) and self._dead_reason is None

    async def start(self) -> None:
        import ray

        try:
            self.info = await self.actor.hello.remote()
        except ray.exceptions.RayError as exc:
            raise WorkerCrashed(
                f"worker {self.name} did not start: {_first_line(exc)}", worker=self.name
            ) from None
        self._watch_task = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        import ray

        try:
            await self.actor.wait_forever.remote()
        except asyncio.CancelledError:
            return
        except ray.exceptions.RayError as exc:
            reason = f"its Ray actor died: {_first_line(exc)}"
        else:
            reason = "its Ray actor stopped"
        self._declare_dead(reason)

    async def _call(self, op: str, sid: str, payload: dict[str, Any]) -> Any:
        import ray

        try:
            answer = await self.actor.call.remote(op, sid, payload)
        except ray.exceptions.RayError as exc:
            raise WorkerLost(_first_line(exc)) from None
        if op == "close":
            self.sessions.discard(sid)
        if not answer["ok"]:
            raise from_problem(answer["error"])
        return answer["result"]

    def drop(self, sid: str) -> None:
        self.sessions.discard(sid)
        if self.alive:
            self.actor.drop.remote(sid)

    async def stop(self) -> None:
        import ray

        self._dead_reason = self._dead_reason or "stopped"
        if self._watch_task is not None:
            self._watch_task.cancel()
            with contextlib.suppress(BaseException):
                await self._watch_task
        with contextlib.suppress(Exception):
            ray.kill(self.actor)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "pid": self.info.get("pid"),
            "node_id": self.info.get("node_id"),
            "node_ip": self.info.get("node_ip"),
        }


class RayBackend(Backend):
    """Workers as actors on a Ray cluster (``address``), or on a local one started here."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        placement: str = "spread",
        num_cpus: float = 1.0,
        memory_mb: int | None = None,
        resources: dict[str, float] | None = None,
        node_ip: str = "127.0.0.1",
    ) -> None:
        super().__init__()
        if placement not in ("spread", "pack"):
            raise ValueError("placement must be 'spread' or 'pack'")
        self.address = address
        self.placement = placement
        self.num_cpus = num_cpus
        self.memory_mb = memory_mb
        self.resources = dict(resources or {})
        self.node_ip = node_ip
        self._actor_class: Any = None
        self._generation = 0
        self._connected_here = False

    async def start(self, count: int) -> None:
        await asyncio.to_thread(self._connect)
        await super().start(count)

    def _connect(self) -> None:
        if ipaddress.ip_address(self.node_ip).is_loopback:
            loopback_only()
        import ray

        env = {k: os.environ[k] for k in FORWARDED_ENV if os.environ.get(k)}
        if not ray.is_initialized():
            self._connected_here = True
            ray.init(
                address=self.address,
                namespace=NAMESPACE,
                runtime_env={"env_vars": env},
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                _node_ip_address=self.node_ip,
            )
        self._actor_class = ray.remote(WorkerActor)

    async def new_worker(self, index: int) -> Worker:
        self._generation += 1
        options: dict[str, Any] = {
            "name": f"palaestra-worker-{index}-{self._generation}-{os.getpid()}",
            "num_cpus": self.num_cpus,
            "resources": self.resources,
            "max_concurrency": 1024,  # one Ray thread per call in flight; sessions have their own
            "max_restarts": 0,  # the backend replaces a dead worker (its sessions are lost anyway)
        }
        if self.memory_mb:
            options["memory"] = self.memory_mb * 1024 * 1024
        if self.placement == "spread":
            options["scheduling_strategy"] = "SPREAD"
        name = f"ray-{index}"
        worker = RayWorker(name, self._actor_class.options(**options).remote(name))
        await worker.start()
        return worker

    async def stop(self) -> None:
        await super().stop()
        if self._connected_here:
            import ray

            await asyncio.to_thread(ray.shutdown)
            self._connected_here = False


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
