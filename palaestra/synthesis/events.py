"""What a synthesis run reports while it runs and when it ends: plain records, sent as JSON.

Kept apart from the pipeline so that a reader of the events (the gateway, which receives them
from a child process) never imports the pipeline itself: browsers, the app server.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Progress:
    """``done`` of ``total`` steps of ``phase`` (``generate``, ``reword``, ``validate``), with
    the tasks validated and dropped so far."""

    phase: str
    done: int
    total: int
    validated: int
    dropped: int


@dataclass(frozen=True)
class Finished:
    """The last event of a run that worked: the pipeline's report (``SynthReport.to_json()``)."""

    report: dict[str, Any]


@dataclass(frozen=True)
class Failed:
    """The last event of a run that raised: the message its requester reads (a bad spec's own
    words; otherwise the exception's type and message). A traceback goes to the run's output."""

    error: str


Event = Progress | Finished | Failed

KINDS: dict[str, type[Progress] | type[Finished] | type[Failed]] = {
    "progress": Progress,
    "finished": Finished,
    "failed": Failed,
}


def encode(event: Event) -> bytes:
    kind = next(k for k, cls in KINDS.items() if isinstance(event, cls))
    return json.dumps({"kind": kind, **asdict(event)}).encode()


def decode(data: bytes) -> Event:
    """An event from the child's bytes: JSON of a known kind with exactly its fields, never
    an object the bytes choose (the child drives browsers on generated pages; it is not
    trusted with the gateway's process)."""
    fields = json.loads(data)
    if not isinstance(fields, dict):
        raise ValueError("a synthesis event is a JSON object")
    cls = KINDS.get(fields.pop("kind", None))
    if cls is None:
        raise ValueError("a synthesis event of no known kind")
    return cls(**fields)
