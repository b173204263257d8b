""":func:`~palaestra.synthesis.pipeline.synthesize` in a process of its own, its events over a
pipe: how the gateway's synthesis jobs run the pipeline.

Why a process and not a thread of the gateway: synthesis drives browsers and validates tasks for
minutes; a crash in it (an exception, or the interpreter or a browser dying under it) must fail
that one job with a clear message, never the gateway; and cancelling a job must stop its
browsers at once, which no thread can be made to do.

The child is started as the workers layer starts its hosts (``python -m
palaestra.synthesis.process``): a fresh interpreter with the gateway's import path and without
its API keys (:func:`palaestra.workers.local._child_env`), in a session of its own (the child and
the browsers it starts are stopped as one process group), its output (log lines, a traceback)
in a file the gateway reads the tail of only when the run failed. Not multiprocessing's
``spawn``: that re-runs the parent's ``__main__`` in the child (a script that embeds the gateway
without a ``__main__`` guard would start again) and hands the child the parent's whole
environment.

Nothing travels as text to parse: the call's arguments go to the child pickled on its stdin, and
the child sends structured events (:mod:`.events`) as JSON messages on a pipe of their own,
decoded into known kinds only (the gateway never unpickles what the child sends):
each ``Progress`` as the pipeline reports it, then one ``Finished`` (the report) or ``Failed``.
The calls here block; the gateway makes them from a thread (``asyncio.to_thread``).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from palaestra.synthesis.events import Event, Failed, Finished, decode, encode
from palaestra.workers.local import _child_env

#: the largest event read from the child (a report lists every task it checked)
MAX_EVENT_BYTES = 64 << 20
#: how long a stopped child has to end before it is killed
STOP_GRACE_S = 10.0


class SynthesisProcess:
    """One run of :func:`~palaestra.synthesis.pipeline.synthesize` in a child process.

    ``kwargs`` are :func:`synthesize`'s (``domains``, ``variants``, ``tasks``, ``out``, ...),
    but ``on_progress``: progress arrives as events (:meth:`next_event`). Use it as a context
    manager, or call :meth:`close`: the child is stopped and its output file removed."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.process: subprocess.Popen[bytes] | None = None
        self._events: Connection | None = None
        fd, name = tempfile.mkstemp(prefix="palaestra-synth-", suffix=".log")
        os.close(fd)
        self.output = Path(name)

    def start(self) -> None:
        read_fd, write_fd = os.pipe()
        self._events = Connection(read_fd, writable=False)
        try:
            with self.output.open("wb") as output:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", __name__, str(write_fd)],
                    stdin=subprocess.PIPE,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    env=_child_env(),
                    pass_fds=(write_fd,),
                    start_new_session=True,  # its browsers are stopped with it, as one group
                )
        finally:
            os.close(write_fd)  # the child holds the only writer: its end is our end of file
        assert self.process.stdin is not None
        with self.process.stdin as stdin:
            pickle.dump(self.kwargs, stdin)

    def next_event(self) -> Event | None:
        """The child's next event, waiting for it; ``None`` once the child closed its end of
        the pipe (it ended, or died) or sent more than :data:`MAX_EVENT_BYTES` at once.

        The reader closes the pipe at its end (never :meth:`close`, which may run while a
        reader waits in another thread: its descriptor must not be closed under it)."""
        events = self._events
        assert events is not None, "start() first"
        if events.closed:
            return None
        try:
            data = events.recv_bytes(MAX_EVENT_BYTES)
        except (EOFError, OSError):
            events.close()
            return None
        try:
            return decode(data)
        except (ValueError, TypeError):  # not an event: the child is broken, end its stream
            events.close()
            return None

    def wait(self, timeout: float | None = None) -> int | None:
        """The child's exit status once it has ended (``None`` if still running at
        ``timeout``); negative: the signal that ended it."""
        assert self.process is not None, "start() first"
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout)
        return self.process.returncode

    def output_tail(self, lines: int = 40, limit: int = 64 << 10) -> str:
        """The end of the child's output (at most ``limit`` bytes read), for the operator's
        log: a traceback, a browser's last words."""
        with contextlib.suppress(OSError), self.output.open("rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - limit))
            tail = deque(f.read().decode(errors="replace").splitlines(), maxlen=lines)
            return "\n".join(tail).strip()
        return ""

    def stop(self, grace: float = STOP_GRACE_S) -> None:
        """Stop the child and what it started (its browsers, in its process group): SIGTERM,
        then SIGKILL after ``grace`` seconds."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            if self.wait(grace) is not None:
                return

    def close(self) -> None:
        self.stop()
        self.output.unlink(missing_ok=True)

    def __enter__(self) -> SynthesisProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _child(kwargs: dict[str, Any], events: Connection) -> int:
    """The child's body: run the pipeline, send its events, then the report or the error; the
    exit status is the command line's (2: a bad spec, 1: a crash)."""
    lock = threading.Lock()

    def send(event: Event) -> None:
        with lock:  # a pipeline may report from several threads; events never interleave
            events.send_bytes(encode(event))

    with events:
        # the module, not its function: a test stands a fake pipeline in for it
        from palaestra.synth_apps.spec import SpecError
        from palaestra.synthesis import pipeline

        try:
            report = pipeline.synthesize(on_progress=send, **kwargs)
        except SpecError as exc:
            send(Failed(str(exc)))
            return 2
        except Exception as exc:
            traceback.print_exc()
            send(Failed(f"{type(exc).__name__}: {exc}"))
            return 1
        send(Finished(report.to_json()))
        return 0


if __name__ == "__main__":
    _kwargs = pickle.load(sys.stdin.buffer)
    sys.exit(_child(_kwargs, Connection(int(sys.argv[1]), readable=False)))
