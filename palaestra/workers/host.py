"""The worker process: hosts many env sessions and serves the worker protocol on a Unix socket.

Each session gets its own thread (a one-thread executor), so env code that blocks, sleeps or
hangs holds up only its own session, and calls to one session are never interleaved. An
exception from env code fails that session alone with a clear message. The process exits when
the gateway that connected to it goes away, so a crashed gateway leaves no orphan workers.

Run as ``python -m palaestra.workers.host --socket PATH --name NAME``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import signal
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from palaestra import codec
from palaestra.errors import EnvCrashed, InvalidRequest, PalaestraError, SessionNotFound
from palaestra.registry import EnvSpec, load_plugins
from palaestra.spaces import space_to_json
from palaestra.workers.protocol import pack, read_frame


class HostedSession:
    def __init__(self, sid: str, env: Any, image_format: str) -> None:
        self.sid = sid
        self.env = env
        self.image_format = image_format
        self.executor = ThreadPoolExecutor(1, thread_name_prefix=f"session-{sid[:8]}")
        self.failure: str | None = None

    def close(self, wait: bool) -> None:
        with contextlib.suppress(Exception):
            if wait:
                self.env.close()
        self.executor.shutdown(wait=False, cancel_futures=True)


class WorkerHost:
    def __init__(self, name: str) -> None:
        self.name = name
        self.sessions: dict[str, HostedSession] = {}
        self.connections = 0
        self.done = asyncio.Event()

    # ----- operations (run in the session's thread) --------------------------------------
    def _make(self, msg: dict[str, Any]) -> tuple[HostedSession, dict[str, Any]]:
        spec = EnvSpec(**msg["spec"])
        options = dict(msg.get("options") or {})
        image_format = options.pop("image_format", "png")
        if image_format not in codec.FORMATS:
            raise InvalidRequest(
                f"image_format must be one of {list(codec.FORMATS)}", field="options.image_format"
            )
        if msg.get("task") is not None:
            options["task"] = msg["task"]
        try:
            env = spec.make(**options)
        except TypeError as exc:
            raise InvalidRequest(
                f"bad options for {spec.id}: {exc}", field="options", env=spec.id
            ) from None
        session = HostedSession(msg["sid"], env, image_format)
        spaces = {
            "observation": space_to_json(env.observation_space),
            "action": space_to_json(env.action_space),
        }
        describe = getattr(getattr(env, "action_set", None), "describe", None)
        return session, {"spaces": spaces, "actions": describe() if describe else ""}

    @staticmethod
    def _reset(s: HostedSession, msg: dict[str, Any]) -> dict[str, Any]:
        obs, info = s.env.reset(seed=msg.get("seed"), options=msg.get("options"))
        return {"observation": codec.encode(obs, s.image_format), "info": codec.encode(info)}

    @staticmethod
    def _step(s: HostedSession, msg: dict[str, Any]) -> dict[str, Any]:
        obs, reward, terminated, truncated, info = s.env.step(msg["action"])
        out = {
            "observation": codec.encode(obs, s.image_format),
            "reward": float(reward),
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "info": codec.encode(info),
        }
        verification = getattr(s.env, "last_verification", None)
        if (terminated or truncated) and verification is not None:
            # privileged: the gateway records it and strips it before answering the agent
            out["privileged"] = {"verifier": verification.to_json()}
        return out

    @staticmethod
    def _render(s: HostedSession, msg: dict[str, Any]) -> dict[str, Any]:
        frame = s.env.render()
        if frame is None:
            raise InvalidRequest("this env renders no image", field="render")
        return {"png": base64.b64encode(codec.image_to_bytes(frame)).decode()}

    # ----- dispatch ------------------------------------------------------------------------
    async def handle(self, msg: dict[str, Any]) -> Any:
        op = msg.get("op")
        loop = asyncio.get_running_loop()
        if op == "ping":
            return {"name": self.name, "pid": os.getpid(), "sessions": len(self.sessions)}
        if op == "make":
            executor = ThreadPoolExecutor(1)
            try:
                session, result = await loop.run_in_executor(executor, self._make, msg)
            finally:
                executor.shutdown(wait=False)
            self.sessions[session.sid] = session
            return result
        sid = msg.get("sid", "")
        session = self.sessions.get(sid)
        if session is None:
            raise SessionNotFound(f"worker {self.name} hosts no session {sid!r}", session_id=sid)
        if op in ("close", "abandon"):
            self.sessions.pop(sid, None)
            if op == "close":
                await loop.run_in_executor(session.executor, session.close, True)
            else:
                session.close(wait=False)
            return {}
        fn: Callable[[HostedSession, dict[str, Any]], dict[str, Any]] | None = {
            "reset": self._reset,
            "step": self._step,
            "render": self._render,
        }.get(op)
        if fn is None:
            raise InvalidRequest(f"unknown worker op {op!r}", field="op")
        if session.failure:
            raise EnvCrashed(session.failure, worker=self.name, session_id=sid)
        try:
            return await loop.run_in_executor(session.executor, fn, session, msg)
        except PalaestraError:
            raise
        except Exception as exc:
            session.failure = (
                f"the environment crashed in {op}: {type(exc).__name__}: {exc}; "
                "this session is failed, close it and create a new one"
            )
            tb = traceback.format_exc(limit=6)
            raise EnvCrashed(session.failure, worker=self.name, session_id=sid, trace=tb) from None

    async def _answer(self, msg: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        try:
            reply = {"id": msg.get("id"), "ok": True, "result": await self.handle(msg)}
        except PalaestraError as exc:
            reply = {"id": msg.get("id"), "ok": False, "error": exc.to_problem()}
        except Exception as exc:
            err = EnvCrashed(f"worker {self.name} failed: {type(exc).__name__}: {exc}")
            reply = {"id": msg.get("id"), "ok": False, "error": err.to_problem()}
        if not writer.is_closing():
            writer.write(pack(reply))

    async def serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.connections += 1
        tasks: set[asyncio.Task[None]] = set()
        try:
            while True:
                msg = await read_frame(reader)
                task = asyncio.create_task(self._answer(msg, writer))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.connections -= 1
            writer.close()
            if self.connections == 0:
                self.done.set()


async def serve(socket_path: str, name: str) -> None:
    load_plugins()
    host = WorkerHost(name)
    server = await asyncio.start_unix_server(host.serve_connection, path=socket_path)
    os.chmod(socket_path, 0o600)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, host.done.set)
    async with server:
        await host.done.wait()
    for session in list(host.sessions.values()):
        session.close(wait=False)
    # threads of hung sessions must not keep the process alive
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--name", default="worker")
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(serve(args.socket, args.name))


if __name__ == "__main__":
    main()
