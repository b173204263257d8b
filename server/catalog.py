"""What the gateway lists: envs and suites, loaded off the event loop.

Listing runs code: an env's class is imported to describe its actions, and a suite's loader may
build hundreds of tasks or import a CAD kernel (seconds, the first time). So listings run in a
worker thread, never in the event loop, and an env or a suite whose optional extra is missing
is listed as unavailable with the reason (:func:`unavailable`, one wording for both) instead of
failing the whole listing; using such a suite is refused with the same reason (503).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from palaestra import family, registry, tasks
from palaestra.errors import PalaestraError, SuiteUnavailable, TaskNotFound


def unavailable(exc: BaseException) -> str:
    """Why an env or a suite cannot be used here, as the listings show it. A missing module
    that an installed family declares names the extra that brings it."""
    reason = f"{type(exc).__name__}: {exc}"
    missing = exc.name if isinstance(exc, ImportError) else None
    if missing:
        top = missing.partition(".")[0]
        for fam in family.families().values():
            if top in fam.requires and fam.extra:
                return f"{reason} (pip install 'palaestra[{fam.extra}]')"
    return reason


def env_entry(spec: registry.EnvSpec, detail: bool = False) -> dict[str, Any]:
    """One env as ``/v1/envs`` lists it (imports its class: call it in a thread)."""
    entry: dict[str, Any] = {
        "id": spec.id,
        "family": spec.family,
        "description": spec.description,
        "fixture": spec.fixture,
    }
    try:
        action_set = getattr(spec.load(), "action_set", None)
    except Exception as exc:  # a family whose extra is not installed still lists
        entry["unavailable"] = unavailable(exc)
        return entry
    if action_set is not None:
        entry["actions"] = [p.signature() for p in action_set.primitives.values()]
        if detail:
            entry["action_description"] = action_set.describe()
            entry["action_schema"] = action_set.json_schema()
            entry["tools"] = action_set.tools()
    return entry


def env_entries() -> list[dict[str, Any]]:
    return [env_entry(spec) for spec in registry.specs().values()]


class SuiteCatalog:
    """The suites one gateway serves, loaded in worker threads (the ``sync`` methods).

    :mod:`palaestra.tasks` keeps what loaded (a registered suite once, a suite on the suite
    path until its folder changes); the catalog remembers the suites whose loader could not
    import its extra, so they are not imported again on every listing, until
    ``PALAESTRA_SUITE_PATH`` changes or the name leaves the registry. Loads run one at a time:
    two first listings must not build the same thousand tasks twice in parallel.
    """

    def __init__(self) -> None:
        self._failed: dict[str, str] = {}
        self._path: str | None = None
        self._lock = threading.Lock()

    def load(self, name: str) -> tasks.Suite:
        """The suite; :class:`SuiteUnavailable` if it cannot load, TaskNotFound if unknown."""
        with self._lock:
            path = os.environ.get(tasks.SUITE_PATH_VAR, "")
            if path != self._path:
                self._path, self._failed = path, {}
            reason = self._failed.get(name)
            if reason is None:
                try:
                    return tasks.get_suite(name)
                except PalaestraError:
                    raise
                except ImportError as exc:  # a missing extra stays missing: remembered
                    reason = self._failed[name] = unavailable(exc)
                except Exception as exc:  # a broken suite is refused with why, not a 500
                    reason = unavailable(exc)
        raise SuiteUnavailable(
            f"suite {name!r} cannot be loaded in this gateway: {reason}",
            suite=name,
            reason=reason,
        )

    def views(self, name: str, split: str | None = None) -> list[dict[str, Any]]:
        """The suite's tasks as an agent may see them (``Task.agent_view``: no oracle, no
        verifier, no private metadata), only those of ``split`` if given: the split is private
        metadata (it says nothing an agent may see), so it is a filter applied here."""
        found = self.load(name)
        return [t.agent_view() for t in found.tasks if split in (None, t.metadata.get("split"))]

    def get_task(self, ref: str) -> tasks.Task:
        """:func:`palaestra.tasks.get_task`, refusing a suite that cannot load (503)."""
        suite, sep, task_id = ref.partition("/")
        if not sep:
            return tasks.get_task(ref)  # the error naming the 'suite/task_id' form
        return self.load(suite).get(task_id)

    def listing(self) -> list[dict[str, Any]]:
        """Every suite as ``/v1/suites`` lists it; one that cannot load says why."""
        names = tasks.suite_names()
        with self._lock:
            self._failed = {n: r for n, r in self._failed.items() if n in names}
        out = []
        for name in names:
            try:
                suite = self.load(name)
            except SuiteUnavailable as exc:
                out.append(
                    {
                        "name": name,
                        "description": _registered_description(name),
                        "unavailable": exc.fields["reason"],
                    }
                )
            except TaskNotFound:  # removed from the suite path since the scan
                continue
            else:
                out.append(
                    {"name": name, "description": suite.description, "tasks": len(suite.tasks)}
                )
        return out


def _registered_description(name: str) -> str:
    """A suite's description without loading it: what its family declares."""
    for fam in family.families().values():
        for spec in fam.suites:
            if spec.name == name:
                return spec.description
    return ""
