"""End-state snapshots: what a verifier read at an episode's end, kept so it can be re-graded.

Taken on the worker, generically, through the env's state probe (the same privileged channel
the verifier reads; the agent never sees it): the probe's state made JSON-ready, and every
file it names by absolute path (an app's SQLite database, say) copied in by content. Values
that are neither JSON nor files (a CAD kernel shape, the usersim gold function) are kept as
``{"__unrecorded__": "<type>"}``, so re-grading a check that needs them says so instead of
guessing. The recorder writes the snapshot beside the trajectory
(:mod:`palaestra.recording`), and :mod:`palaestra.data.regrade` reads it back as a probe.
"""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: files larger than this are not copied (the snapshot notes their size instead)
MAX_FILE_BYTES = 64 * 1024 * 1024
#: marks a value replaced by a copied file: ``{"__snapshot_file__": "<name>"}``
FILE_KEY = "__snapshot_file__"
UNRECORDED = "__unrecorded__"


def take(env: Any) -> dict[str, Any] | None:
    """The snapshot of ``env``'s verifier-visible state, or None when it has no probe."""
    try:
        state = env.state_probe().read()
    except Exception as exc:  # a family without a probe, or one that fails: not fatal
        return {"state": None, "files": {}, "error": f"{type(exc).__name__}: {exc}"}
    files: dict[str, str] = {}
    return {"state": _jsonable(state, files), "files": files}


def _jsonable(value: Any, files: dict[str, str]) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return _file(value, files) or value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, files) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v, files) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray) and value.size <= 1_000_000:
        return value.tolist()
    if isinstance(value, Path):
        return _file(str(value), files) or str(value)
    return {UNRECORDED: type(value).__name__}


def _file(value: str, files: dict[str, str]) -> dict[str, Any] | None:
    """An absolute path to a readable regular file becomes a copy of it in the snapshot."""
    if not value.startswith("/") or "\n" in value or len(value) > 4096:
        return None
    with contextlib.suppress(OSError):
        if os.path.isfile(value):
            size = os.path.getsize(value)
            if size > MAX_FILE_BYTES:
                return {UNRECORDED: f"file of {size} bytes", "path": value}
            name = f"{len(files):02d}_{os.path.basename(value)}"
            files[name] = base64.b64encode(Path(value).read_bytes()).decode()
            return {FILE_KEY: name, "path": value}
    return None


def restore(state: Any, folder: Path) -> Any:
    """The snapshot's state with each copied file back as a path (into ``folder``)."""
    if isinstance(state, dict):
        if FILE_KEY in state:
            return str(folder / state[FILE_KEY])
        return {k: restore(v, folder) for k, v in state.items()}
    if isinstance(state, list):
        return [restore(v, folder) for v in state]
    return state
