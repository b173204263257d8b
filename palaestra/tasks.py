"""Tasks are data, not code, and suites are collections of them.

A suite is a directory of JSON/YAML task files or a Python loader (``"module:function"``)
returning tasks, so established benchmarks can be wrapped without copying their data. The agent
sees :meth:`Task.agent_view` only: the oracle, the verifier and the validation report stay on the
worker that scores the episode.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from palaestra.errors import InvalidRequest, TaskNotFound

#: What an agent may see of a task; everything else is privileged.
AGENT_FIELDS = ("id", "family", "env", "instruction", "max_steps", "metadata")


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    family: str
    env: str = Field(description="Env id that hosts the task, e.g. palaestra/web-v0")
    instruction: str
    setup: dict[str, Any] = Field(default_factory=dict)
    verifier: dict[str, Any] = Field(default_factory=dict)
    max_steps: int = Field(default=50, ge=1)
    metadata: dict[str, Any] = Field(default_factory=dict)
    oracle: list[Any] | None = None
    validation: dict[str, Any] | None = None

    def agent_view(self) -> dict[str, Any]:
        return self.model_dump(include=set(AGENT_FIELDS))


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


def load_task_file(path: Path) -> list[Task]:
    text = path.read_text()
    data = yaml.safe_load(text) if path.suffix in {".yaml", ".yml"} else json.loads(text)
    items = data if isinstance(data, list) else data.get("tasks", [data])
    return [Task.model_validate(item) for item in items]


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
        from palaestra.registry import load_plugins

        load_plugins()


def suite_names() -> list[str]:
    _read_entry_points()
    return sorted(_SUITES)


def get_suite(name: str) -> Suite:
    _read_entry_points()
    if name in _LOADED:
        return _LOADED[name]
    if name not in _SUITES:
        raise TaskNotFound(f"unknown suite {name!r}; known: {suite_names()}", suite=name)
    source, description = _SUITES[name]
    if isinstance(source, Path):
        suite = load_suite_dir(name, source, description)
    else:
        loader = _import(source) if isinstance(source, str) else source
        result = loader()
        suite = (
            result
            if isinstance(result, Suite)
            else Suite(name=name, description=description, tasks=list(result))
        )
    _LOADED[name] = suite
    return suite


def get_task(ref: str) -> Task:
    """``"suite/task_id"`` -> Task. Task ids may themselves contain slashes."""
    if "/" not in ref:
        raise InvalidRequest(f"a task reference is 'suite/task_id', got {ref!r}", field="task")
    suite, task_id = ref.split("/", 1)
    return get_suite(suite).get(task_id)


def _import(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else []:
        obj = getattr(obj, part)
    return obj
