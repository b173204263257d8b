"""One desktop for every computer test module: starting Xvfb and a sandbox is most of a test's
cost, and each test resets it onto its own task anyway."""

import pytest

from palaestra.envs.computer.env import ComputerEnv


@pytest.fixture(scope="session")
def desktop():
    e = ComputerEnv()
    yield e
    e.close()


@pytest.fixture
def env(desktop):
    """The shared desktop with no task of an earlier test: ``reset()`` without a task option
    starts the default desktop (a terminal), as on a fresh env."""
    desktop.task = None
    return desktop
