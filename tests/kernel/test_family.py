"""The Family descriptor: a family is found, played and scored through it alone.

The tests' own family (tests/plugins.py:FAMILY, check kind in tests/plugin_checks.py) is added
by one line of PALAESTRA_PLUGINS, as a package adds one entry-point line: this is the recipe of
docs/adding-a-family.md, checked.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from palaestra import registry
from palaestra.cli import app
from palaestra.errors import InvalidRequest
from palaestra.family import Family, families, family
from palaestra.policies import run_episode
from palaestra.resolve import resolve
from palaestra.tasks import Task, get_suite, get_task
from palaestra.verifiers.base import check_kinds


def test_every_family_has_the_same_shape() -> None:
    found = families()
    assert {"web", "mobile", "cad", "computer", "usersim", "test"} <= set(found)
    for fam in found.values():
        if fam.unavailable() is not None:
            continue
        assert {"oracle", "random", "noop"} <= set(fam.policy_names()), fam.name
        for spec in fam.envs:
            assert registry.spec(spec.id).family == fam.name
        for suite in fam.suites:
            assert get_suite(suite.name).name == suite.name


def test_the_plugin_family_plays_and_scores_through_its_descriptor() -> None:
    fam = family("test")
    task = get_task("faulty/count-3")
    assert task.oracle is not None and task.oracle.policy == "replay"
    env = registry.make(task.env)
    try:
        oracle = run_episode(env, fam.policy("oracle"), task)
        noop = run_episode(env, fam.policy("noop"), task)
        rand = run_episode(env, fam.policy("random", seed=3), task)
    finally:
        env.close()
    assert oracle.terminated and oracle.info["verifier"]["success"] is True
    assert noop.info["verifier"]["success"] is False
    assert rand.steps >= 1
    # the check kind was loaded lazily, through Family.checks, not by an import in the tests
    assert "tests.plugin_checks" in sys.modules and "test_oks" in check_kinds()


def test_an_unknown_policy_names_the_ones_that_exist() -> None:
    with pytest.raises(InvalidRequest, match=r"has no policy 'cheat'.*noop"):
        family("test").policy("cheat")
    with pytest.raises(InvalidRequest, match="unknown family 'nope'"):
        family("nope")


def test_the_oracle_of_a_task_without_one_is_a_clear_error() -> None:
    task = Task(id="x", family="test", env="palaestra-test/Faulty-v0", instruction="x")
    with pytest.raises(InvalidRequest, match="no oracle"):
        family("test").policy("oracle").reset(task)


def test_an_oracle_naming_a_policy_the_family_lacks_is_a_clear_error() -> None:
    fam = family("test")
    for name in ("cheat", "oracle"):  # "oracle" would have the oracle play itself
        task = Task(
            id="x",
            family="test",
            env="palaestra-test/Faulty-v0",
            instruction="x",
            oracle={"policy": name},
        )
        with pytest.raises(InvalidRequest, match=f"no policy {name!r}"):
            fam.policy("oracle").reset(task)


def test_a_policies_module_without_policies_is_a_clear_error() -> None:
    fam = Family(name="bare", envs=(), policies="palaestra.policies")
    with pytest.raises(TypeError, match=r"palaestra\.policies.*POLICIES"):
        fam.policy_names()


def test_a_package_fills_what_a_descriptor_leaves_empty_by_the_convention() -> None:
    fam = Family(name="cad", envs=(), package="palaestra.envs.cad")
    assert (fam.policies, fam.validation, fam.checks) == (
        "palaestra.envs.cad.policies",
        "palaestra.envs.cad.validation:PLAN",
        ("palaestra.verifiers.cad",),
    )
    named = Family(name="m", envs=(), package="p.m", checks=("palaestra.verifiers.app_state",))
    assert named.checks == ("palaestra.verifiers.app_state",)
    assert Family(name="bare", envs=()).policies == ""


def test_a_missing_extra_makes_a_family_unavailable_with_the_reason() -> None:
    fam = Family(name="ghost", envs=(), requires=("no_such_module_xyz",), extra="ghost")
    assert fam.unavailable() == "needs no_such_module_xyz (pip install 'palaestra[ghost]')"


def test_the_cli_lists_families_with_their_status() -> None:
    result = CliRunner().invoke(app, ["families", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["family"]: r for r in json.loads(result.output)}
    assert rows["test"]["suites"] == ["faulty"] and rows["test"]["available"] is True
    assert "replay" in rows["test"]["policies"]


def test_the_resolver_names_what_is_missing() -> None:
    assert resolve("palaestra.tasks:Task") is Task
    with pytest.raises(ValueError, match="has no attribute 'Nope'"):
        resolve("palaestra.tasks:Nope")
    with pytest.raises(ModuleNotFoundError):
        resolve("palaestra.no_such_module")


def test_threads_looking_up_specs_at_once_all_find_every_family() -> None:
    """The synthesis pipeline's validation threads ask for an env at the same moment in a fresh
    process: the thread that installs the families must not let the others see half of them."""
    code = """
import threading
from palaestra import registry
barrier, found = threading.Barrier(8), []
def look():
    barrier.wait()
    found.append(registry.spec("palaestra/web-v0").id)
threads = [threading.Thread(target=look) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(len(found))
"""
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
        assert out.stdout.strip() == "8", out.stderr[-2000:]
