"""Tasks are data, not code, and suites are collections of them.

A suite is a directory of JSON/YAML task files or a Python loader (``"module:function"``)
returning tasks, so established benchmarks can be wrapped without copying their data. Suites can
also be found on disk through ``PALAESTRA_SUITE_PATH`` (see :func:`add_suite_path`), which is how
a synthesized suite becomes usable without a restart.

An agent (and any client) sees a task only as its :class:`TaskView` (:meth:`Task.view`): public
id, family, env, instruction, step budget and the task's :class:`PublicMetadata`, an explicit
allow-list (domain, app, difficulty). ``Task.metadata`` is the private store: anything derived
from the solution (feasible or not, grant or refuse, intent, fault class, tags, a benchmark's
native id, split) lives there and never leaves the trusted side, nor do the oracle, the verifier
and the validation report. The view is built by copying allow-listed fields, never by removing
known-bad ones, so a key added to ``metadata`` tomorrow cannot leak by default.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from palaestra.errors import InvalidRequest, TaskNotFound
from palaestra.registry import load_plugins, tasks_known
from palaestra.resolve import resolve

#: The public metadata keys, the allow-list: what an agent may know of a task beyond its
#: instruction. Nothing else of ``Task.metadata`` is ever shown.
PUBLIC_KEYS = ("domain", "app", "difficulty")


class PublicMetadata(BaseModel):
    """What an agent may know of a task besides its words: which world, which app, how hard.

    A tier, a domain and an app name say where the task is, never what its answer or category
    is; a suite whose difficulty is derived from the solution (e.g. the reference plan's length
    differs between grant and refuse) must not fill it in (the leak tests check)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    domain: str | None = None
    app: str | None = None
    difficulty: str | None = None


class TaskView(BaseModel):
    """The one view of a task an agent or a client gets (REST, WebSocket, OpenEnv, MCP, gym
    ids, eval prompts, exports, observations' info)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    family: str
    env: str
    instruction: str
    max_steps: int
    metadata: PublicMetadata

    def as_json(self) -> dict[str, Any]:
        """The wire form: ``metadata`` holds only the public keys the task has."""
        out = self.model_dump(exclude={"metadata"})
        out["metadata"] = self.metadata.model_dump(exclude_none=True)
        return out


#: What an agent may see of a task (``metadata`` is the public part); everything else is
#: privileged.
AGENT_FIELDS = tuple(TaskView.model_fields)


class Oracle(BaseModel):
    """A task's reference solution: the name of a policy of the task's family and its data.

    One encoding for every family, so any runner can play any oracle through
    ``Family.policy("oracle")``: e.g. ``{"policy": "replay", "data": ["circle(5)", ...]}``
    (a fixed action list), ``{"policy": "plan", "data": [{"op": "click", ...}]}`` (a semantic
    plan resolved against each observation), ``{"policy": "miniwob", "data": "click-button"}``.
    """

    model_config = ConfigDict(extra="forbid")

    policy: str
    data: Any = None


def _legacy_oracle(value: Any) -> Any:
    """Suites written before the one encoding stored a bare list: semantic plans (dicts with an
    ``op``) or fixed action lists. Read them as what they meant."""
    if not isinstance(value, list):
        return value
    if value and all(isinstance(v, dict) and "op" in v for v in value):
        return {"policy": "plan", "data": value}
    return {"policy": "replay", "data": value}


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    family: str
    env: str = Field(description="Env id that hosts the task, e.g. palaestra/web-v0")
    instruction: str
    setup: dict[str, Any] = Field(default_factory=dict)
    verifier: dict[str, Any] = Field(default_factory=dict)
    max_steps: int = Field(default=50, ge=1)
    public: PublicMetadata = Field(
        default_factory=PublicMetadata,
        description="What an agent may know of the task (the allow-listed keys only)",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Private: never shown to an agent or a client"
    )
    oracle: Annotated[Oracle | None, BeforeValidator(_legacy_oracle)] = None
    validation: dict[str, Any] | None = None

    def view(self) -> TaskView:
        return TaskView(
            id=self.id,
            family=self.family,
            env=self.env,
            instruction=self.instruction,
            max_steps=self.max_steps,
            metadata=self.public,
        )

    def agent_view(self) -> dict[str, Any]:
        """:meth:`view` as JSON: the only form of a task that leaves the trusted side."""
        return self.view().as_json()


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    tasks: list[Task]

    def get(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise TaskNotFound(
            f"suite {self.name!r} has no task {task_id!r}", suite=self.name, task=task_id
        )


def task_from_file(item: Any, where: str) -> Task:
    """A task read from a file, which must say what is public: a ``public`` mapping of
    allow-listed keys beside the private ``metadata``. A missing split or an unknown public key
    is an error naming the task and the field, so no file can publish a key by accident."""
    name = item.get("id", "?") if isinstance(item, dict) else "?"
    if not isinstance(item, dict) or "public" not in item:
        raise InvalidRequest(
            f"{where}: task {name!r} has no 'public' field: a task file must split its "
            f"metadata into 'public' (only {list(PUBLIC_KEYS)}) and the private 'metadata'",
            task=name,
            field="public",
        )
    try:
        return Task.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        hint = f" (public keys are {list(PUBLIC_KEYS)})" if loc.startswith("public") else ""
        raise InvalidRequest(
            f"{where}: task {name!r}: {loc}: {first['msg']}{hint}", task=name, field=loc
        ) from None


def load_task_file(path: Path) -> list[Task]:
    text = path.read_text()
    data = yaml.safe_load(text) if path.suffix in {".yaml", ".yml"} else json.loads(text)
    items = data if isinstance(data, list) else data.get("tasks", [data])
    # named by its folder and name: a load error reaches clients, the server's paths must not
    return [task_from_file(item, f"{path.parent.name}/{path.name}") for item in items]


def load_suite_dir(name: str, folder: Path, description: str = "") -> Suite:
    tasks: list[Task] = []
    for path in sorted(folder.rglob("*")):
        if path.suffix in {".json", ".yaml", ".yml"}:
            tasks += load_task_file(path)
    return Suite(name=name, description=description, tasks=tasks)


SuiteSource = Path | str | Callable[[], Suite | Iterable[Task]]
_SUITES: dict[str, tuple[SuiteSource, str]] = {}
_LOADED: dict[str, Suite] = {}
_ENTRY_POINTS_READ = False


def register_suite(name: str, source: SuiteSource, description: str = "") -> None:
    """Register a suite lazily: a folder, a ``"module:function"`` string or a callable."""
    _SUITES[name] = (source, description)
    _LOADED.pop(name, None)


def _read_entry_points() -> None:
    global _ENTRY_POINTS_READ
    if not _ENTRY_POINTS_READ:
        _ENTRY_POINTS_READ = True
        load_plugins()


#: Folders (``os.pathsep``-separated) whose subfolders holding a ``suite.json`` are suites.
SUITE_PATH_VAR = "PALAESTRA_SUITE_PATH"


@dataclass(frozen=True)
class _Found:
    folder: Path
    description: str
    stamp: tuple[int, int]


#: Suites found on the suite path at the last scan, and the ones loaded since (with the stamp
#: they were loaded at, so a rewritten folder is read again).
_FOUND: dict[str, _Found] = {}
_SCANNED_PATH: str | None = None
_FOUND_LOADED: dict[str, tuple[_Found, Suite]] = {}


def add_suite_path(folder: Path | str) -> None:
    """Make sure ``folder`` is on ``PALAESTRA_SUITE_PATH`` of this process.

    The variable, not a module global, is the source of truth because worker processes inherit
    the environment: a gateway that calls this before starting its workers has them find the
    same suites. It is appended, so folders the user listed first keep winning a name clash.
    """
    entries = [e for e in os.environ.get(SUITE_PATH_VAR, "").split(os.pathsep) if e]
    folder = str(Path(folder).expanduser().resolve())
    if folder not in entries:
        os.environ[SUITE_PATH_VAR] = os.pathsep.join([*entries, folder])


def _stamp(folder: Path) -> tuple[int, int] | None:
    """Changes when ``suite.json`` is rewritten or a task file is added or removed."""
    try:
        meta = (folder / "suite.json").stat().st_mtime_ns
    except OSError:
        return None
    try:
        listing = (folder / "tasks").stat().st_mtime_ns
    except OSError:
        listing = 0
    return meta, listing


def _scan_suite_path() -> dict[str, _Found]:
    """Read the suite path now, not at import, so a suite written after start-up is found.

    Hidden folders are skipped: a writer can fill ``.name.partial`` and rename it into place,
    so readers never see half a suite. The first folder to claim a name wins, as on ``PATH``.
    """
    found: dict[str, _Found] = {}
    for entry in os.environ.get(SUITE_PATH_VAR, "").split(os.pathsep):
        if not entry:
            continue
        try:
            children = sorted(Path(entry).expanduser().iterdir())
        except OSError:
            continue  # a folder that does not exist (yet) is not an error
        for child in children:
            stamp = _stamp(child)
            if child.name.startswith(".") or stamp is None:
                continue
            try:
                meta = json.loads((child / "suite.json").read_text())
            except (OSError, ValueError):
                continue  # a suite.json being written, or not ours
            name = meta.get("name") if isinstance(meta, dict) else None
            if isinstance(name, str) and name and name not in found:
                description = str(meta.get("description") or "")
                found[name] = _Found(child, description, stamp)
    return found


def _rescan() -> dict[str, _Found]:
    global _FOUND, _SCANNED_PATH
    _SCANNED_PATH = os.environ.get(SUITE_PATH_VAR, "")
    _FOUND = _scan_suite_path()
    return _FOUND


def suite_names() -> list[str]:
    """Registered suites and, freshly scanned, the ones on ``PALAESTRA_SUITE_PATH``."""
    _read_entry_points()
    return sorted(set(_SUITES) | set(_rescan()))


def _get_found_suite(name: str) -> Suite | None:
    """A suite from the suite path, re-scanning when the name is unknown or its folder changed
    (registered suites win a name clash: they are what the installed packages promise)."""
    found = _FOUND.get(name)
    moved = os.environ.get(SUITE_PATH_VAR, "") != _SCANNED_PATH
    if found is None or moved or _stamp(found.folder) != found.stamp:
        found = _rescan().get(name)
    if found is None:
        _FOUND_LOADED.pop(name, None)
        return None
    cached = _FOUND_LOADED.get(name)
    if cached is not None and cached[0] == found:
        return cached[1]
    suite = load_suite_dir(name, found.folder / "tasks", found.description)
    _FOUND_LOADED[name] = (found, suite)
    return suite


def suite_folder(name: str) -> Path | None:
    """The folder of a suite found on ``PALAESTRA_SUITE_PATH`` (None for a registered one):
    where ``palaestra validate`` drops the task files that fail and writes its report."""
    _read_entry_points()
    if name in _SUITES:
        return None
    found = _FOUND.get(name) or _rescan().get(name)
    return found.folder if found is not None else None


def get_suite(name: str) -> Suite:
    _read_entry_points()
    if name not in _SUITES:
        found = _get_found_suite(name)
        if found is not None:
            tasks_known(name, [t.id for t in found.tasks])  # gymnasium's per-task ids
            return found
    if name in _LOADED:
        return _LOADED[name]
    if name not in _SUITES:
        raise TaskNotFound(f"unknown suite {name!r}; known: {suite_names()}", suite=name)
    source, description = _SUITES[name]
    if isinstance(source, Path):
        suite = load_suite_dir(name, source, description)
    else:
        loader = resolve(source) if isinstance(source, str) else source
        result = loader()
        suite = (
            result
            if isinstance(result, Suite)
            else Suite(name=name, description=description, tasks=list(result))
        )
    _LOADED[name] = suite
    tasks_known(name, [t.id for t in suite.tasks])  # gymnasium's per-task ids
    return suite


def get_task(ref: str) -> Task:
    """``"suite/task_id"`` -> Task. Task ids may themselves contain slashes."""
    if "/" not in ref:
        raise InvalidRequest(f"a task reference is 'suite/task_id', got {ref!r}", field="task")
    suite, task_id = ref.split("/", 1)
    return get_suite(suite).get(task_id)
