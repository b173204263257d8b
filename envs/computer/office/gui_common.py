"""The actions the office GUI solutions are written in, as ``{"name", "args"}`` dicts (the
computer family's action JSON): a key combination, typed text, a wait. The app modules'
recipes (:mod:`.calc_gui`, :mod:`.writer_gui`) are lists of these."""

from __future__ import annotations

from typing import Any

Action = dict[str, Any]


def key(combo: str) -> Action:
    return {"name": "key", "args": {"combo": combo}}


def type_text(text: str) -> Action:
    return {"name": "type_text", "args": {"text": text}}


def wait(seconds: float) -> Action:
    return {"name": "wait", "args": {"seconds": seconds}}
