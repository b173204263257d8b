"""What a synthesis run reports while it runs and when it ends: plain, picklable records.

Kept apart from the pipeline so that a reader of the events (the gateway, which receives them
from a child process) never imports the pipeline itself: browsers, the app server.
"""

from __future__ import annotations

from dataclasses import dataclass
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
