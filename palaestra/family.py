"""The ``Family`` descriptor: everything the platform needs to know about one env family.

A family is discovered, never imported by name: its package exposes one ``FAMILY`` object and
names it in the ``palaestra.envs`` entry-point group (``web = "palaestra.envs.web:FAMILY"``).
The registry, the CLI, ``/v1/suites`` and execution validation all read the same
descriptor, so adding a family touches its folder, its verifier module and one
entry-point line. Everything is named by ``"module:attr"`` strings, so describing a family
imports no browser, CAD kernel or X server, and a family whose optional extra is missing is
listed as unavailable (with the reason) instead of failing wherever it is first touched.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from palaestra.errors import InvalidRequest
from palaestra.policies import Policy, PolicyFactory
from palaestra.registry import EnvSpec, load_plugins, register
from palaestra.resolve import resolve
from palaestra.tasks import SuiteSource, Task, register_suite

#: Policies every family offers (``oracle`` is generic: it plays ``task.oracle``).
REQUIRED_POLICIES = ("oracle", "random", "noop")


@dataclass(frozen=True)
class SuiteSpec:
    name: str
    source: SuiteSource
    description: str = ""


@dataclass(frozen=True)
class Family:
    name: str
    envs: tuple[EnvSpec, ...]
    suites: tuple[SuiteSpec, ...] = ()
    #: module whose ``POLICIES`` maps names to policy factories (``envs/<family>/policies.py``);
    #: its optional ``ADVERSARIES`` maps the names of cheap reward-hacking strategies to
    #: factories the same way: execution validation runs every one, and a task ships only if
    #: each of them fails it (see :func:`palaestra.validation.runner.validate`)
    policies: str = ""
    #: modules that define the family's check kinds (``verifiers/<family>.py``)
    checks: tuple[str, ...] = ()
    #: importable modules the family needs, and the pip extra that brings them
    requires: tuple[str, ...] = ()
    extra: str = ""
    #: ``"module:PLAN"``: how the family's tasks are validated, a
    #: ``palaestra.verifiers.validation.ValidationPlan`` (its env, end states, mutants,
    #: strategy space) that the one runner of ``palaestra.validation`` plays
    #: (``palaestra validate SUITE``)
    validation: str = ""
    #: ``"module:Model"``: the options a client may set, a ``palaestra.options.EnvOptions``
    #: subclass with bounds (empty: only the common ones); see ``palaestra.options``
    options: str = ""
    description: str = ""
    #: the family's package (``"palaestra.envs.cad"``): when set, :attr:`policies`,
    #: :attr:`validation` and :attr:`checks` left empty follow the house convention,
    #: ``<package>.policies``, ``<package>.validation:PLAN`` and
    #: ``palaestra.verifiers.<name>``, so a descriptor states only what differs
    package: str = ""
    _policy_table: dict[str, PolicyFactory] | None = field(default=None, compare=False)
    _adversary_table: dict[str, PolicyFactory] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.package:
            return
        conventional = {
            "policies": f"{self.package}.policies",
            "validation": f"{self.package}.validation:PLAN",
            "checks": (f"palaestra.verifiers.{self.name}",),
        }
        for attr, value in conventional.items():
            if not getattr(self, attr):
                object.__setattr__(self, attr, value)  # frozen: filled once, at construction

    def install(self) -> None:
        """Register the family's envs and suites (run once by the entry-point loader)."""
        for spec in self.envs:
            register(spec)
        for suite in self.suites:
            register_suite(suite.name, suite.source, suite.description)
        _FAMILIES[self.name] = self

    def unavailable(self) -> str | None:
        """Why the family cannot run in this environment, or None when it can."""
        missing = [m for m in self.requires if importlib.util.find_spec(m) is None]
        if not missing:
            return None
        extra = f" (pip install 'palaestra[{self.extra}]')" if self.extra else ""
        return f"needs {', '.join(missing)}{extra}"

    def policy_names(self) -> list[str]:
        return sorted({*REQUIRED_POLICIES, *self._table(), *self._adversaries()})

    def adversary_names(self) -> list[str]:
        """The family's adversaries (``ADVERSARIES`` of :attr:`policies`), in declared order."""
        return list(self._adversaries())

    def policy(self, name: str, **options: Any) -> Policy:
        """A fresh policy (or adversary) by name; ``oracle`` plays whatever the task's oracle
        names."""
        table = self._table()
        if name == "oracle" and "oracle" not in table:
            return OraclePolicy(self, options)
        return self._factory({**self._adversaries(), **table}, name)(**options)

    def _factory(self, table: Mapping[str, PolicyFactory], name: str) -> PolicyFactory:
        factory = table.get(name)
        if factory is None:
            raise InvalidRequest(
                f"family {self.name!r} has no policy {name!r}; it has {self.policy_names()}",
                field="policy",
            )
        return factory

    def _table(self) -> Mapping[str, PolicyFactory]:
        """The ``POLICIES`` of :attr:`policies`, resolved once, on first use."""
        if self._policy_table is None:
            table = getattr(resolve(self.policies), "POLICIES", None) if self.policies else {}
            if not isinstance(table, Mapping):
                raise TypeError(f"{self.policies}.POLICIES must map names to policy factories")
            object.__setattr__(self, "_policy_table", dict(table))  # a cache on a frozen class
        assert self._policy_table is not None
        return self._policy_table

    def _adversaries(self) -> Mapping[str, PolicyFactory]:
        if self._adversary_table is None:
            table = getattr(resolve(self.policies), "ADVERSARIES", {}) if self.policies else {}
            if not isinstance(table, Mapping):
                raise TypeError(f"{self.policies}.ADVERSARIES must map names to policy factories")
            object.__setattr__(self, "_adversary_table", dict(table))
        assert self._adversary_table is not None
        return self._adversary_table


class OraclePolicy:
    """Plays a task's reference solution: the family's policy that ``task.oracle`` names,
    fed the oracle's data. Privileged (it reads the oracle), so it runs beside the env."""

    def __init__(self, family: Family, options: Mapping[str, Any]) -> None:
        self.family = family
        self.options = dict(options)
        self.inner: Policy | None = None

    def reset(self, task: Task | None) -> None:
        if task is None or task.oracle is None:
            raise InvalidRequest("this task has no oracle", field="policy")
        # the table's, never the generic "oracle" again (an oracle that names "oracle" would
        # have this policy play itself)
        self.inner = self.family._factory(self.family._table(), task.oracle.policy)(**self.options)
        self.inner.reset(task)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        assert self.inner is not None, "reset() first"
        return self.inner.act(observation, info)


_FAMILIES: dict[str, Family] = {}


def families() -> dict[str, Family]:
    """Every installed family, by name (entry points are read on first use)."""
    load_plugins()
    return dict(sorted(_FAMILIES.items()))


def family(name: str) -> Family:
    found = families().get(name)
    if found is None:
        raise InvalidRequest(
            f"unknown family {name!r}; installed: {sorted(_FAMILIES)}", field="family"
        )
    return found


def load_check_modules(found: Callable[[], bool] = lambda: False) -> list[str]:
    """Import families' check-kind modules until ``found()`` (how an unknown check kind is
    looked up), families that need no optional extra first: a worker's first web check must
    not pay for importing a B-rep kernel it will never use.

    One family's broken module must not stop the others' kinds from being found, so failures
    are returned (for the error that names a kind still missing), not raised."""
    failures = []
    for fam in sorted(families().values(), key=lambda f: (bool(f.requires), f.name)):
        if fam.unavailable() is None:
            for module in fam.checks:
                try:
                    resolve(module)
                except Exception as exc:
                    failures.append(f"{fam.name}: {module}: {type(exc).__name__}: {exc}")
                if found():
                    return failures
    return failures
