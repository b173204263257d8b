"""The worker process: hosts many env sessions and serves the worker protocol on a Unix socket.

Every session has its own connection and its own thread, which reads a request, runs the env
and writes the answer with blocking socket calls. So env code that blocks, sleeps or hangs holds
up only its own session, calls to one session are never interleaved, a step costs no hop
between threads, and thread-bound libraries see one thread per session for its whole life. An
exception from env code fails that session alone with a clear message. When the gateway's
control connection closes (the gateway exited or was killed), the process closes its envs and
exits, so no worker outlives its gateway.

Run as ``python -m palaestra.workers.host --socket PATH --name NAME``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import resource
import signal
import socket
import threading
import traceback
from typing import Any

import numpy as np

from palaestra import codec
from palaestra.errors import EnvCrashed, InvalidRequest, PalaestraError
from palaestra.registry import EnvSpec, load_plugins
from palaestra.spaces import space_to_json
from palaestra.steps import ResetReply, StepReply, ended, step_reply
from palaestra.workers import snapshot
from palaestra.workers.protocol import recv_frame, send_frame

CLOSE_GRACE_S = 5.0


class HostedSession:
    """One env and what the worker needs to serve it."""

    def __init__(self, worker: str, msg: dict[str, Any]) -> None:
        spec = EnvSpec(**msg["spec"])
        options = dict(msg.get("options") or {})
        self.image_format = options.pop("image_format", "png")
        if self.image_format not in codec.FORMATS:
            raise InvalidRequest(
                f"image_format must be one of {list(codec.FORMATS)}", field="options.image_format"
            )
        if "task" in options:
            # a task is named by reference only: a client must not bring its own verifier
            raise InvalidRequest(
                "name the task in the 'task' field, not in options", field="options"
            )
        if msg.get("task") is not None:
            options["task"] = msg["task"]
        try:
            self.env = spec.make(**options)
        except TypeError as exc:
            raise InvalidRequest(
                f"bad options for {spec.id}: {exc}", field="options", env=spec.id
            ) from None
        self.sid = str(msg["sid"])
        self.worker = worker
        #: the gateway asks for end-state snapshots of recorded sessions only
        self.snapshot = bool(msg.get("snapshot"))
        self.failure: str | None = None

    def describe(self) -> dict[str, Any]:
        env = self.env
        action_set = getattr(env, "action_set", None)
        return {
            "spaces": {
                "observation": space_to_json(env.observation_space),
                "action": space_to_json(env.action_space),
            },
            "actions": action_set.describe() if action_set is not None else "",
        }

    def reset(self, msg: dict[str, Any]) -> ResetReply:
        options = msg.get("options")
        if options and not isinstance(options.get("task", ""), str):
            raise InvalidRequest(
                "options.task must be a task reference 'suite/task_id'", field="options.task"
            )
        seed = msg.get("seed")
        if seed is not None and (type(seed) is not int or not 0 <= seed < 2**32):
            # bad input, not a crash: refused before the env sees it, the session goes on
            raise InvalidRequest("seed must be an int, 0 <= seed < 2**32", field="seed")
        obs, info = self.env.reset(seed=seed, options=options)
        return {"observation": codec.encode(obs, self.image_format), "info": codec.encode(info)}

    def step(self, msg: dict[str, Any]) -> StepReply:
        obs, reward, terminated, truncated, info = self.env.step(msg["action"])
        observation = codec.encode(obs, self.image_format)
        out = step_reply(observation, float(reward), terminated, truncated, codec.encode(info))
        verification = getattr(self.env, "last_verification", None)
        if ended(out) and verification is not None:
            # privileged: the gateway records it and strips it before answering the agent
            out["privileged"] = {"verifier": verification.to_json()}
            if self.snapshot:  # what the verifier read, so the episode can be re-graded
                out["privileged"]["snapshot"] = snapshot.take(self.env)
        return out

    def render(self, msg: dict[str, Any]) -> dict[str, Any]:
        frame = self.env.render()
        if not isinstance(frame, np.ndarray):
            raise InvalidRequest("this env renders no image", field="render")
        return {"png": base64.b64encode(codec.image_to_bytes(frame)).decode()}

    def run(self, op: str, msg: dict[str, Any]) -> Any:
        fn = {"reset": self.reset, "step": self.step, "render": self.render}.get(op)
        if fn is None:
            raise InvalidRequest(f"unknown session op {op!r}", field="op")
        if self.failure:
            raise EnvCrashed(self.failure, worker=self.worker, session_id=self.sid)
        try:
            return fn(msg)
        except PalaestraError:
            raise
        except Exception as exc:
            self.failure = (
                f"the environment crashed in {op}: {type(exc).__name__}: {exc}; "
                "this session is failed, close it and create a new one"
            )
            raise EnvCrashed(
                self.failure,
                worker=self.worker,
                session_id=self.sid,
                trace=traceback.format_exc(limit=6),
            ) from None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.env.close()


def reply(worker: str, op: str, work: Any) -> dict[str, Any]:
    """Run one request; its protocol reply. Errors become problems: a PalaestraError as it is,
    anything else (a bug in a family's constructor, say) as EnvCrashed naming the worker."""
    try:
        return {"ok": True, "result": work()}
    except PalaestraError as exc:
        return {"ok": False, "error": exc.to_problem()}
    except Exception as exc:
        err = EnvCrashed(
            f"worker {worker} failed on {op}: {type(exc).__name__}: {exc}",
            worker=worker,
            trace=traceback.format_exc(limit=6),
        )
        return {"ok": False, "error": err.to_problem()}


class WorkerHost:
    def __init__(self, name: str) -> None:
        self.name = name
        self.sessions: dict[str, HostedSession] = {}
        self._lock = threading.Lock()
        self._exiting = False

    def serve_connection(self, conn: socket.socket) -> None:
        session: HostedSession | None = None
        control = False
        try:
            while True:
                msg = recv_frame(conn)
                op = msg.get("op")
                if op == "close":
                    send_frame(conn, {"ok": True, "result": {}})
                    break
                if op == "hello":
                    control = True

                def work(msg: dict[str, Any] = msg, op: Any = op) -> Any:
                    nonlocal session
                    if op == "hello":
                        return {"name": self.name, "pid": os.getpid()}
                    if op == "ping":
                        return {"name": self.name, "sessions": len(self.sessions)}
                    if op == "make":
                        if session is not None:
                            raise InvalidRequest("this connection already hosts a session")
                        session = self.open(msg)
                        return session.describe()
                    if session is None:
                        raise InvalidRequest(f"{op!r} before 'make' on this connection")
                    return session.run(str(op), msg)

                send_frame(conn, reply(self.name, str(op), work))
        except (EOFError, OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                conn.close()
            if session is not None:
                self.forget(session)
            if control:
                self.exit("the gateway's control connection closed")

    def open(self, msg: dict[str, Any]) -> HostedSession:
        session = HostedSession(self.name, msg)
        with self._lock:
            self.sessions[session.sid] = session
        return session

    def forget(self, session: HostedSession) -> None:
        with self._lock:
            self.sessions.pop(session.sid, None)
        session.close()

    def exit(self, reason: str) -> None:
        """Close every env (each gets a grace period in parallel), then leave at once."""
        if self._exiting:
            return
        self._exiting = True
        with self._lock:
            sessions = list(self.sessions.values())
        closers = [threading.Thread(target=s.close, daemon=True) for s in sessions]
        for t in closers:
            t.start()
        for t in closers:
            t.join(CLOSE_GRACE_S)
        os._exit(0)  # hung env threads must not keep the process alive


def raise_open_files_limit() -> int:
    """Lift the soft limit on open files to the hard one; returns the soft limit in force.

    A worker holds one Unix socket per session and the gateway one per session it routes, so
    the usual soft limit of 1,024 caps a process near 1,000 sessions long before memory does
    (``bench/scale.py`` holds 20,000 live sessions in one gateway). The hard limit is the
    administrator's; going past it needs privilege and is left to the deployment.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(ValueError, OSError):  # e.g. macOS refuses an infinite soft
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def serve(socket_path: str, name: str) -> None:
    load_plugins()
    raise_open_files_limit()
    host = WorkerHost(name)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(socket_path)
    server.bind(socket_path)
    os.chmod(socket_path, 0o600)
    server.listen(socket.SOMAXCONN)  # a pool opens all its members' connections at once
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: host.exit("signalled"))
    while True:
        conn, _ = server.accept()
        threading.Thread(target=host.serve_connection, args=(conn,), daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser(description="palaestra worker process")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--name", default="worker")
    args = parser.parse_args()
    serve(args.socket, args.name)


if __name__ == "__main__":
    main()
