"""Trajectory recording: every reset and step of a session, append-only, on disk as it happens.

Layout of a run directory (format ``palaestra.trajectory/1``)::

    <runs>/<run_id>/run.json                  {"format", "run_id", "created"}
    <runs>/<run_id>/<session_id>/session.json {"format", "session_id", "env", "task", ...}
    <runs>/<run_id>/<session_id>/events.jsonl one JSON object per line (see below)
    <runs>/<run_id>/<session_id>/images/      images cut out of observations, as PNG/JPEG files

An event is ``{"type": "reset"|"step"|"close"|"error", "t": unix time, "episode": n, ...}``;
steps carry ``index``, ``action``, ``reward``, ``terminated``, ``truncated``, ``info``,
``observation``, ``timing_ms`` and, at episode end, the full (privileged) ``verifier`` report.
Images in observations are replaced by ``{"__file__": "images/<name>", "shape": [...]}``.
At an episode's end the worker's snapshot of what the verifier read (see
:func:`palaestra.workers.snapshot.take`) goes to ``snapshots/e<n>/state.json`` (files it names,
e.g. an app's SQLite database, beside it) and the step event names that folder in ``snapshot``.

Each event is written with one ``write`` and flushed before the step's answer leaves the
gateway, so whatever an agent was told is on disk even if the gateway is then killed; a reader
skips a torn last line. Image files are written by a writer thread, off the step's path, and
are all on disk at each episode's end; a gateway killed mid-episode may leave an event naming
an image that was never written, which readers skip.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from palaestra import __version__
from palaestra.codec import IMAGE_KEY, decode, image_from_bytes
from palaestra.redaction import Redactor
from palaestra.steps import ResetReply, StepReply

FORMAT = "palaestra.trajectory/1"
#: run names: a folder name, never a path
RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class SessionRecorder:
    def __init__(
        self,
        run_dir: Path,
        session_id: str,
        meta: dict[str, Any],
        secrets: Iterable[str] = (),
        tags: dict[str, str] | None = None,
    ) -> None:
        """``secrets``: values (the operator's credentials) replaced wherever they would be
        written; fields of ``meta`` named like a credential are replaced too. ``tags`` (agent,
        experiment, config) label the run when this session is its first."""
        self._redact = Redactor(secrets)
        meta = self._redact.data(meta)
        self.run_id = run_dir.name
        self.dir = run_dir / session_id
        self.images = self.dir / "images"
        self.images.mkdir(parents=True, exist_ok=True)
        ensure_run(run_dir, meta.get("owner"), tags)
        self.meta = {
            "format": FORMAT,
            "session_id": session_id,
            "created": time.time(),
            "versions": {"palaestra": __version__, "env": meta.get("env")},
            "tags": dict(tags or {}),
            **meta,
        }
        _write_json(self.dir / "session.json", self.meta)
        self._events = open(self.dir / "events.jsonl", "ab", buffering=0)  # noqa: SIM115
        self.episode = 0
        self.index = 0
        self._started = 0.0
        self._seed: int | None = None
        self._pending: list[Future[None]] = []

    def _cut_images(self, value: Any, prefix: str) -> Any:
        if isinstance(value, dict):
            if IMAGE_KEY in value:
                name = f"{prefix}.{'jpg' if value[IMAGE_KEY] == 'jpeg' else 'png'}"
                self._save(self.images / name, value["data"])
                return {"__file__": f"images/{name}", "shape": value["shape"]}
            return {k: self._cut_images(v, f"{prefix}_{k}") for k, v in value.items()}
        return value

    def _write(self, event: dict[str, Any]) -> None:
        event["t"] = time.time()
        data = orjson.dumps(event, option=orjson.OPT_SERIALIZE_NUMPY)
        self._events.write((self._redact.bytes(data) if self._redact else data) + b"\n")

    def reset(self, seed: int | None, result: ResetReply) -> None:
        self.episode += 1
        self.index = 0
        self._started, self._seed = time.time(), seed
        tag = f"e{self.episode:04d}_s0000"
        self._write(
            {
                "type": "reset",
                "episode": self.episode,
                "seed": seed,
                "observation": self._cut_images(result["observation"], tag),
                "info": result.get("info", {}),
            }
        )

    def step(
        self, action: Any, result: StepReply, privileged: dict[str, Any] | None, ms: float
    ) -> dict[str, Any] | None:
        """One step as the agent saw it (``result``, already split by
        :func:`palaestra.steps.public`) and, at an episode's end, the privileged report and
        snapshot. Returns the episode's summary (:func:`summary`) when the step ended it."""
        self.index += 1
        tag = f"e{self.episode:04d}_s{self.index:04d}"
        event = {
            "type": "step",
            "episode": self.episode,
            "index": self.index,
            "action": action,
            "reward": result["reward"],
            "terminated": result["terminated"],
            "truncated": result["truncated"],
            "info": result.get("info", {}),
            "observation": self._cut_images(result["observation"], tag),
            "timing_ms": round(ms, 3),
        }
        if privileged:
            privileged = dict(privileged)
            snap = privileged.pop("snapshot", None)
            if snap is not None:
                event["snapshot"] = self._snapshot(snap)
            event.update(privileged)
        self._write(event)
        if not (result["terminated"] or result["truncated"]):
            return None
        self.settle()
        return summary(self.run_id, self.meta, self._seed, self._started, event)

    def _snapshot(self, snap: dict[str, Any]) -> str:
        """Write the worker's end-state snapshot; the folder's name, relative to the session."""
        rel = f"snapshots/e{self.episode:04d}"
        folder = self.dir / rel
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in (snap.get("files") or {}).items():
            if "/" not in name and not name.startswith("."):
                (folder / name).write_bytes(base64.b64decode(data))
        state = orjson.dumps(snap.get("state"), option=orjson.OPT_SERIALIZE_NUMPY)
        (folder / "state.json").write_bytes(self._redact.bytes(state) if self._redact else state)
        return rel

    def note(self, kind: str, **fields: Any) -> None:
        self._write({"type": kind, "episode": self.episode, **fields})

    def _save(self, path: Path, data: str) -> None:
        """An image file is written by the shared writer thread, off the step's path (creating
        a file costs more than the rest of recording a step); the event that names it is
        written at once. :meth:`settle` waits for the writes (at every episode end and close),
        so a finished episode's images are on disk before anything indexes or reads it."""
        self._pending.append(_WRITER.submit(_write_image, path, data))

    def settle(self) -> None:
        pending, self._pending = self._pending, []
        for done in pending:
            done.result()

    def close(self) -> None:
        self.settle()
        if not self._events.closed:
            self.note("close")
            self._events.close()


#: one thread writes every recorder's image files, in order
_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="palaestra-images")


def _write_image(path: Path, data: str) -> None:
    path.write_bytes(base64.b64decode(data))


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    tmp.replace(path)


def ensure_run(run_dir: Path, owner: str | None, tags: dict[str, str] | None = None) -> dict:
    """The run's ``run.json``, written by its first session: the owner and the tags."""
    path = run_dir / "run.json"
    if path.exists():
        return dict(json.loads(path.read_text()))
    run_dir.mkdir(parents=True, exist_ok=True)
    data = {
        "format": FORMAT,
        "run_id": run_dir.name,
        "created": time.time(),
        "owner": owner,
        "tags": dict(tags or {}),
    }
    _write_json(path, data)
    return data


def summary(
    run_id: str, meta: dict[str, Any], seed: Any, started: float, end: dict[str, Any]
) -> dict[str, Any]:
    """One ended episode as the catalog indexes it, from its session's meta and last event."""
    found = end.get("verifier")
    verifier: dict[str, Any] = found if isinstance(found, dict) else {}
    info_v = (end.get("info") or {}).get("verifier") or {}
    score = verifier.get("score", info_v.get("score", end.get("reward")))
    return {
        "run_id": run_id,
        "session_id": meta.get("session_id"),
        "episode": end.get("episode"),
        "owner": meta.get("owner"),
        "env": meta.get("env"),
        "task": meta.get("task"),
        "seed": seed,
        "agent": (meta.get("tags") or {}).get("agent"),
        "score": float(score or 0.0),
        "success": bool(verifier.get("success", info_v.get("success", False))),
        "steps": end.get("index", 0),
        "duration_s": round(max(0.0, end.get("t", started) - started), 3) if started else None,
        "error": verifier.get("error", info_v.get("error")),
        "version": (meta.get("versions") or {}).get("palaestra"),
        "ended": end.get("t"),
    }


class Corrupt(list[int]):
    """Line numbers of events that could not be read; ``torn_tail``: the last line was cut
    short (the session is still being written, or its writer died mid-line)."""

    torn_tail = False


def read_events(
    session_dir: Path, load_images: bool = False, corrupt: Corrupt | None = None
) -> Iterator[dict[str, Any]]:
    """Events of one recorded session. A line that is not JSON (a crash mid-write) is skipped,
    never fatal; its number goes to ``corrupt`` when given."""
    with open(session_dir / "events.jsonl", "rb") as fh:
        for n, line in enumerate(fh, 1):
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                if corrupt is not None:
                    corrupt.append(n)
                    corrupt.torn_tail = not line.endswith(b"\n")
                continue
            if load_images and "observation" in event:
                event["observation"] = _load_images(session_dir, event["observation"])
            yield event


def _load_images(session_dir: Path, value: Any) -> Any:
    if isinstance(value, dict):
        if "__file__" in value:
            return image_from_bytes((session_dir / value["__file__"]).read_bytes(), value["shape"])
        return {k: _load_images(session_dir, v) for k, v in value.items()}
    return decode(value)


def episodes(session_dir: Path, corrupt: Corrupt | None = None) -> list[dict[str, Any]]:
    """The ended episodes of a recorded session, summarised (see :func:`summary`)."""
    meta = dict(orjson.loads((session_dir / "session.json").read_bytes()))
    run = session_dir.parent
    with contextlib.suppress(OSError, ValueError):
        meta.setdefault("tags", json.loads((run / "run.json").read_text()).get("tags"))
    out, seed, started = [], None, 0.0
    for event in read_events(session_dir, corrupt=corrupt):
        if event.get("type") == "reset":
            seed, started = event.get("seed"), float(event.get("t", 0.0))
        elif event.get("type") == "step" and (event.get("terminated") or event.get("truncated")):
            out.append(summary(run.name, meta, seed, started, event))
    return out


def list_runs(runs_dir: Path) -> list[dict[str, Any]]:
    out = []
    for meta in sorted(runs_dir.glob("*/run.json")):
        data = json.loads(meta.read_text())
        data["sessions"] = sorted(p.parent.name for p in meta.parent.glob("*/session.json"))
        out.append(data)
    return out
