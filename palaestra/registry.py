"""The env registry: versioned, declarative, lazy.

An :class:`EnvSpec` names its class by a ``"module:Class"`` string, so listing envs imports no
browser or CAD kernel. Families register from their packages through the entry-point group
``palaestra.envs`` (each entry point is a callable run once); code outside any package can be
named in ``PALAESTRA_PLUGINS`` (comma-separated ``module`` or ``module:function``). Worker
processes call :func:`load_plugins` too, and the gateway sends the full spec with each new
session, so a worker builds exactly the env the gateway resolved.

The registry also hears which suite task ids exist as suites are loaded or listed
(:func:`tasks_known`) and tells its listeners (:func:`listen`) of every spec and every such
list: that is how gymnasium's ids are kept (``palaestra.gymnasium_ids``, which sits above the
registry, the tasks and the HTTP client). The registry itself knows nothing of gymnasium's
ids, of sessions on a gateway or of HTTP.
"""

from __future__ import annotations

import difflib
import functools
import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Any

import gymnasium as gym

from palaestra.errors import EnvNotFound
from palaestra.resolve import resolve

_log = logging.getLogger(__name__)
ENTRY_POINT_GROUP = "palaestra.envs"
PLUGINS_ENV_VAR = "PALAESTRA_PLUGINS"
_ID_RE = re.compile(r"^[\w.-]+/[\w.-]+-v\d+$")


@dataclass(frozen=True)
class EnvSpec:
    id: str
    entry_point: str
    family: str
    description: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: Marks envs that exist to measure or test the platform, never product families.
    fixture: bool = False
    #: ``"module:Model"``: client options of this env, overriding its family's (see
    #: ``palaestra.options``); for envs registered without a ``Family``
    options: str = ""

    def __post_init__(self) -> None:
        if not _ID_RE.match(self.id):
            raise ValueError(f"env id {self.id!r} must look like 'namespace/name-v0'")

    def load(self) -> type:
        return resolve(self.entry_point)

    def make(self, **kwargs: Any) -> gym.Env:
        return self.load()(**{**self.kwargs, **kwargs})

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_REGISTRY: dict[str, EnvSpec] = {}
_PLUGINS_LOADED: set[str] = set()
#: refs whose install finished (``_PLUGINS_LOADED`` also holds the ones under way)
_PLUGINS_INSTALLED: set[str] = set()
_PLUGINS_LOCK = threading.RLock()
#: told of each spec as it is registered
_SPEC_LISTENERS: list[Callable[[EnvSpec], None]] = []
#: told of each suite's task ids as they become known: (suite, task ids)
_TASK_LISTENERS: list[Callable[[str, list[str]], object]] = []


def register(spec: EnvSpec) -> EnvSpec:
    _REGISTRY[spec.id] = spec
    for listener in _SPEC_LISTENERS:
        listener(spec)
    return spec


def listen(
    on_spec: Callable[[EnvSpec], None], on_tasks: Callable[[str, list[str]], object]
) -> None:
    """Tell ``on_spec`` of every spec (those registered so far at once) and ``on_tasks`` of
    every suite's task ids named to :func:`tasks_known` from now on. A layer above the
    registry (gymnasium's ids) keeps its own view this way, so the registry imports none of
    it."""
    if on_spec not in _SPEC_LISTENERS:
        _SPEC_LISTENERS.append(on_spec)
        for spec in list(_REGISTRY.values()):
            on_spec(spec)
    if on_tasks not in _TASK_LISTENERS:
        _TASK_LISTENERS.append(on_tasks)


def tasks_known(suite: str, task_ids: list[str]) -> None:
    """A suite's task ids became known in this process (the suite was loaded here, or listed
    by a gateway): tell the listeners."""
    for listener in _TASK_LISTENERS:
        listener(suite, task_ids)


def load_plugins() -> None:
    """Install every ``palaestra.envs`` entry point and PALAESTRA_PLUGINS module, once each.

    An entry point names a :class:`palaestra.family.Family` (installed) or a function (run);
    a bare module is imported for what it registers on import."""
    refs = [*_entry_point_refs()]
    refs += [ref.strip() for ref in os.environ.get(PLUGINS_ENV_VAR, "").split(",") if ref.strip()]
    if _PLUGINS_INSTALLED.issuperset(refs):
        return  # the path of every spec() and reset: no lock, no metadata scan
    # Threads (validation workers, the gateway's loader thread) look specs up at once: the one
    # that installs a family holds the others back until it is registered, not just claimed.
    with _PLUGINS_LOCK:
        _install(refs)


@functools.cache
def _entry_point_refs() -> tuple[str, ...]:
    """The ``palaestra.envs`` entry points, read once per process (a scan of every installed
    distribution's metadata, milliseconds: too slow for each ``spec()``)."""
    return tuple(ep.value for ep in metadata.entry_points(group=ENTRY_POINT_GROUP))


def _install(refs: list[str]) -> None:
    for ref in refs:
        if ref in _PLUGINS_LOADED:
            continue
        _PLUGINS_LOADED.add(ref)  # claimed first: a plugin that looks specs up does not recurse
        obj = resolve(ref)
        install = getattr(obj, "install", None)
        if callable(install):  # a palaestra.family.Family
            install()
        elif ":" in ref and callable(obj):  # a registration function
            obj()
        _PLUGINS_INSTALLED.add(ref)


def specs() -> dict[str, EnvSpec]:
    load_plugins()
    return dict(sorted(_REGISTRY.items()))


def spec(env_id: str) -> EnvSpec:
    load_plugins()
    try:
        return _REGISTRY[env_id]
    except KeyError:
        close = difflib.get_close_matches(env_id, list(_REGISTRY), n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise EnvNotFound(
            f"unknown env {env_id!r}{hint} (see GET /v1/envs)",
            env=env_id,
            close_matches=close,
        ) from None


def make(env_id: str, **kwargs: Any) -> gym.Env:
    """Build a registered env in this process (no gateway involved)."""
    return spec(env_id).make(**kwargs)
