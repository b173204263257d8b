"""Gymnasium's ids for palaestra's envs and suite tasks, in this process or on a gateway.

``gymnasium.make("palaestra/web-v0")`` (every registered spec) and one id per suite task,
``palaestra/<suite>.<task>-v0``, run the env in this process or, given ``url=``, as a session on
a gateway (``palaestra.client.RemoteEnv``); ``palaestra/Remote-v0`` is the remote client
itself. Gymnasium 1.x has no hook for unknown ids (``make`` reads its registry dict) and
loading every suite costs tens of seconds (generated suites more), so task ids are registered
lazily, a suite's at once, when that suite is first loaded here (``palaestra.tasks.get_suite``),
listed through ``Client.tasks`` or named to :func:`register_suite_ids`.

This module sits above the registry, the tasks and the HTTP client, which know nothing of it:
it listens to the registry (:func:`palaestra.registry.listen`) for specs and task ids.
``import palaestra`` calls :func:`register_gymnasium`.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import gymnasium as gym

from palaestra import registry

_log = logging.getLogger(__name__)
#: a task id gymnasium accepts inside ``palaestra/<suite>.<task>-v0``
_TASK_NAME_RE = re.compile(r"^[\w.-]+$")


def register_gymnasium() -> None:
    """``gymnasium.make("palaestra/Remote-v0", ...)`` for the remote client and a gymnasium id
    for every registered env (``palaestra/web-v0``, ...); task ids come per suite (see the
    module's docstring). A plugin that fails to load is logged, never an import error."""
    if "palaestra/Remote-v0" not in gym.registry:
        gym.register("palaestra/Remote-v0", entry_point="palaestra.client:RemoteEnv")
    registry.listen(_spec_registered, _register_task_ids)
    try:
        registry.load_plugins()  # each spec registers its gymnasium id (see _spec_registered)
    except Exception as exc:
        _log.warning("palaestra: env plugins failed to load, no gymnasium ids: %s", exc)


def task_env_id(suite: str, task_id: str) -> str | None:
    """The gymnasium id of a suite task, or None if its name cannot be one (a ``/``)."""
    name = f"{suite}.{task_id}"
    return f"palaestra/{name}-v0" if _TASK_NAME_RE.match(name) else None


def register_suite_ids(suite: str, task_ids: list[str] | None = None) -> list[str]:
    """Register ``palaestra/<suite>.<task>-v0`` for the suite's tasks (loading the suite when
    ``task_ids`` is not given) and return the ids. Each id builds the task's env in process,
    or its session on a gateway when ``gymnasium.make`` gets ``url=``."""
    if task_ids is None:
        from palaestra.tasks import get_suite

        task_ids = [t.id for t in get_suite(suite).tasks]
    return _register_task_ids(suite, task_ids)


def _spec_registered(spec: registry.EnvSpec) -> None:
    _gym_register(spec.id, f"{__name__}:_make_env", {"env_id": spec.id})


def _register_task_ids(suite: str, task_ids: list[str]) -> list[str]:
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
    return registry.make(env_id, **kwargs)


def _make_task_env(task: str, url: str | None = None, **kwargs: Any) -> gym.Env:
    """A suite task's gymnasium entry point (see :func:`_make_env`)."""
    if url is not None:
        from palaestra.client import RemoteEnv

        return RemoteEnv(task=task, base_url=url, **kwargs)
    from palaestra.tasks import get_task

    found = get_task(task)
    return registry.make(found.env, task=found, **kwargs)
