"""End-state snapshots: what a verifier read at an episode's end, kept so it can be re-graded.

Taken on the worker, generically, through the env's state probe (the same privileged channel
the verifier reads; the agent never sees it): the probe's state made JSON-ready, and every
file it names by absolute path (an app's SQLite database, say) copied in by content. A CAD
shape is kept as STEP, a ``functools.partial`` of a family's function (usersim's gold replay)
as its name and arguments; anything else as ``{"__unrecorded__": "<type>"}``, so re-grading a
check that needs it says so instead of guessing. The recorder writes the snapshot beside the
trajectory (:mod:`palaestra.recording`), and :mod:`palaestra.data.regrade` reads it back.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from palaestra.resolve import resolve

#: files larger than this are not copied (the snapshot notes their size instead)
MAX_FILE_BYTES = 64 * 1024 * 1024
#: marks a value replaced by a copied file: ``{"__snapshot_file__": "<name>"}``
FILE_KEY = "__snapshot_file__"
UNRECORDED = "__unrecorded__"
#: marks a recorded ``functools.partial``: ``{"__snapshot_call__": "module:name", "args": []}``
CALL_KEY = "__snapshot_call__"
TUPLE_KEY = "__tuple__"
#: the only modules whose functions a snapshot may name
TRUSTED = "palaestra.envs."


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
    if isinstance(value, tuple):  # kept apart from lists: verifiers compare rows as tuples
        return {TUPLE_KEY: [_jsonable(v, files) for v in value]}
    if isinstance(value, list | set | frozenset):
        return [_jsonable(v, files) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray) and value.size <= 1_000_000:
        return value.tolist()
    if isinstance(value, Path):
        return _file(str(value), files) or str(value)
    if isinstance(value, functools.partial) and value.func.__module__.startswith(TRUSTED):
        # a family's function of recorded arguments (usersim's gold replay): rebuilt on restore
        fn = value.func
        return {
            CALL_KEY: f"{fn.__module__}:{fn.__qualname__}",
            "args": _jsonable(value.args, files),
        }
    if hasattr(value, "wrapped"):  # an OpenCascade shape (CAD): as STEP, when build123d is here
        return _step(value, files) or {UNRECORDED: type(value).__name__}
    return {UNRECORDED: type(value).__name__}


def _step(shape: Any, files: dict[str, str]) -> dict[str, Any] | None:
    try:
        from build123d import export_step
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "shape.step"
        try:
            export_step(shape, str(path))
        except Exception:
            return None
        name = f"{len(files):02d}_shape.step"
        files[name] = base64.b64encode(path.read_bytes()).decode()
    return {FILE_KEY: name, "kind": "step"}


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
    """The snapshot's state with each copied file back as a path (into ``folder``), each STEP
    file as a shape again and each recorded partial as the function."""
    if isinstance(state, dict):
        if FILE_KEY in state:
            path = folder / state[FILE_KEY]
            if state.get("kind") == "step":
                from build123d import import_step

                return import_step(str(path))
            return str(path)
        if TUPLE_KEY in state:
            return tuple(restore(v, folder) for v in state[TUPLE_KEY])
        if CALL_KEY in state:
            ref = str(state[CALL_KEY])
            if not ref.startswith(TRUSTED):  # a recording names only a family's function
                raise ValueError(f"snapshot names an untrusted function {ref!r}")
            return functools.partial(resolve(ref), *restore(state["args"], folder))
        return {k: restore(v, folder) for k, v in state.items()}
    if isinstance(state, list):
        return [restore(v, folder) for v in state]
    return state
