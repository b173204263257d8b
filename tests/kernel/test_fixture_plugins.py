"""The benchmark fixtures reach who asks for them, never the kernel by default.

``use_fixtures`` names them in PALAESTRA_PLUGINS once (workers inherit the variable) and
registers them here; Docker workers are handed only the plugins the image holds (palaestra's
own modules), never a test module that would stop the container's worker from starting.
"""

from __future__ import annotations

import os

import pytest

from palaestra import registry, tasks
from palaestra.bench.fixtures import ENV_ID, PLUGIN, SUITE, use_fixtures
from palaestra.workers.docker import image_plugins


def test_use_fixtures_names_them_once_and_registers_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(registry.PLUGINS_ENV_VAR, "tests.plugins:FAMILY")
    use_fixtures()
    use_fixtures()
    refs = os.environ[registry.PLUGINS_ENV_VAR].split(",")
    assert refs == ["tests.plugins:FAMILY", PLUGIN]
    assert registry.spec(ENV_ID).fixture
    assert [t.id for t in tasks.get_suite(SUITE).tasks][:1] == ["count-to-3"]


def test_docker_workers_get_palaestras_own_plugins_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(registry.PLUGINS_ENV_VAR, f"tests.plugins:FAMILY, {PLUGIN},mine:x")
    assert image_plugins() == {registry.PLUGINS_ENV_VAR: PLUGIN}
    monkeypatch.setenv(registry.PLUGINS_ENV_VAR, "tests.plugins:FAMILY")
    assert image_plugins() == {}
