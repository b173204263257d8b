"""The env registry: versioned, declarative, lazy.

An :class:`EnvSpec` names its class by a ``"module:Class"`` string, so listing envs imports no
browser or CAD kernel. Families register from their packages through the entry-point group
``palaestra.envs`` (each entry point is a callable run once); code outside any package can be
named in ``PALAESTRA_PLUGINS`` (comma-separated ``module`` or ``module:function``). Worker
processes call :func:`load_plugins` too, and the gateway sends the full spec with each new
session, so a worker builds exactly the env the gateway resolved.

Gymnasium sees the same envs: ``gymnasium.make("palaestra/web-v0")`` (every registered spec,
mirrored by :func:`register`) and one id per suite task, ``palaestra/<suite>.<task>-v0``, local
or, given ``url=``, on a gateway. Gymnasium 1.x has no hook for unknown ids (``make`` reads its
registry dict) and loading every suite costs tens of seconds (generated suites more), so task ids
are registered lazily, a suite's at once, when that suite is first loaded here
(``palaestra.tasks.get_suite``), listed through ``Client.tasks`` or named to
:func:`register_suite_ids`.
"""

from __future__ import annotations

import difflib
import functools
import logging
import os
import re
import threading
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


def register(spec: EnvSpec) -> EnvSpec:
    _REGISTRY[spec.id] = spec
    _gym_register(spec.id, f"{__name__}:_make_env", {"env_id": spec.id})
    return spec


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


def register_gymnasium() -> None:
    """``gymnasium.make("palaestra/Remote-v0", ...)`` for the remote client and a gymnasium id
    for every registered env (``palaestra/web-v0``, ...); task ids come per suite (see the
    module's docstring). A plugin that fails to load is logged, never an import error."""
    if "palaestra/Remote-v0" not in gym.registry:
        gym.register("palaestra/Remote-v0", entry_point="palaestra.client:RemoteEnv")
    try:
        load_plugins()  # each spec registers its gymnasium id (see register)
    except Exception as exc:
        _log.warning("palaestra: env plugins failed to load, no gymnasium ids: %s", exc)


#: a task id gymnasium accepts inside ``palaestra/<suite>.<task>-v0``
_TASK_NAME_RE = re.compile(r"^[\w.-]+$")


def task_env_id(suite: str, task_id: str) -> str | None:
    """The gymnasium id of a suite task, or None if its name cannot be one (a ``/``)."""
    name = f"{suite}.{task_id}"
    return f"palaestra/{name}-v0" if _TASK_NAME_RE.match(name) else None


def register_suite_ids(suite: str, task_ids: list[str] | None = None) -> list[str]:
    """Register ``palaestra/<suite>.<task>-v0`` for the suite's tasks (loading the suite when
    ``task_ids`` is not given) and return the ids. Each id builds the task's env in process,
    or its session on a gateway when ``gymnasium.make`` gets ``url=``."""
    if task_ids is None:
        from palaestra.tasks import get_suite  # palaestra.tasks imports this module

        task_ids = [t.id for t in get_suite(suite).tasks]
    out = []
    for task_id in task_ids:
        env_id = task_env_id(suite, task_id)
        if env_id is not None:
            _gym_register(env_id, f"{__name__}:_make_task_env", {"task": f"{suite}/{task_id}"})
            out.append(env_id)
    return out


def _gym_register(env_id: str, entry_point: str, kwargs: dict[str, Any]) -> None:
    """Straight into gymnasium's registry: ``gym.register`` checks each new id against every
    registered one, quadratic over a suite of thousands of tasks."""
    if env_id not in gym.registry:
        gym.registry[env_id] = gym.envs.registration.EnvSpec(
            env_id, entry_point=entry_point, kwargs=kwargs
        )


def _make_env(env_id: str, url: str | None = None, **kwargs: Any) -> gym.Env:
    """A gymnasium entry point: the env in this process, or a session on the gateway ``url``."""
    if url is not None:
        from palaestra.client import RemoteEnv

        return RemoteEnv(env_id, base_url=url, **kwargs)
    return make(env_id, **kwargs)


def _make_task_env(task: str, url: str | None = None, **kwargs: Any) -> gym.Env:
    """A suite task's gymnasium entry point (see :func:`_make_env`)."""
    if url is not None:
        from palaestra.client import RemoteEnv

        return RemoteEnv(task=task, base_url=url, **kwargs)
    from palaestra.tasks import get_task

    found = get_task(task)
    return make(found.env, task=found, **kwargs)
