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

Each event is written with one ``write`` and flushed before the step's answer leaves the
gateway, so whatever an agent was told is on disk even if the gateway is then killed; a reader
skips a torn last line.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from palaestra.codec import IMAGE_KEY, decode, image_from_bytes
from palaestra.redaction import Redactor
from palaestra.steps import ResetReply, StepReply

FORMAT = "palaestra.trajectory/1"


class SessionRecorder:
    def __init__(
        self,
        run_dir: Path,
        session_id: str,
        meta: dict[str, Any],
        secrets: Iterable[str] = (),
    ) -> None:
        """``secrets``: values (the operator's credentials) replaced wherever they would be
        written; fields of ``meta`` named like a credential are replaced too."""
        self._redact = Redactor(secrets)
        meta = self._redact.data(meta)
        self.dir = run_dir / session_id
        self.images = self.dir / "images"
        self.images.mkdir(parents=True, exist_ok=True)
        run_meta = run_dir / "run.json"
        if not run_meta.exists():
            _write_json(
                run_meta, {"format": FORMAT, "run_id": run_dir.name, "created": time.time()}
            )
        _write_json(
            self.dir / "session.json",
            {"format": FORMAT, "session_id": session_id, "created": time.time(), **meta},
        )
        self._events = open(self.dir / "events.jsonl", "ab", buffering=0)  # noqa: SIM115
        self.episode = 0
        self.index = 0

    def _cut_images(self, value: Any, prefix: str) -> Any:
        if isinstance(value, dict):
            if IMAGE_KEY in value:
                name = f"{prefix}.{'jpg' if value[IMAGE_KEY] == 'jpeg' else 'png'}"
                (self.images / name).write_bytes(base64.b64decode(value["data"]))
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
    ) -> None:
        """One step as the agent saw it (``result``, already split by
        :func:`palaestra.steps.public`) and, at an episode's end, the privileged report."""
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
            event.update(privileged)
        self._write(event)

    def note(self, kind: str, **fields: Any) -> None:
        self._write({"type": kind, "episode": self.episode, **fields})

    def close(self) -> None:
        if not self._events.closed:
            self.note("close")
            self._events.close()


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    tmp.replace(path)


def read_events(session_dir: Path, load_images: bool = False) -> Iterator[dict[str, Any]]:
    """Events of one recorded session; a torn last line (a crash mid-write) is skipped."""
    with open(session_dir / "events.jsonl", "rb") as fh:
        for line in fh:
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
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


def list_runs(runs_dir: Path) -> list[dict[str, Any]]:
    out = []
    for meta in sorted(runs_dir.glob("*/run.json")):
        data = json.loads(meta.read_text())
        data["sessions"] = sorted(p.parent.name for p in meta.parent.glob("*/session.json"))
        out.append(data)
    return out
