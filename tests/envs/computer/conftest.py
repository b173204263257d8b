"""One desktop for every computer test module: starting Xvfb and a sandbox is most of a test's
cost, and each test resets it onto its own task anyway."""

import pytest

from palaestra.envs.computer.env import ComputerEnv


@pytest.fixture(scope="session")
def env():
    e = ComputerEnv()
    yield e
    e.close()
