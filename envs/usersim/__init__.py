"""The user-simulator family: ``palaestra/usersim-v0``, tool-using dialogues with a simulated
user in our own domains (airline, retail, train, hotel). The dialogue machinery is the dialogue
runtime's (:mod:`palaestra.envs.runtimes.dialogue`), shared with the ``tau2`` family."""

from __future__ import annotations

from palaestra.family import Family, SuiteSpec
from palaestra.registry import EnvSpec

FAMILY = Family(
    name="usersim",
    envs=(
        EnvSpec(
            "palaestra/usersim-v0",
            "palaestra.envs.usersim.env:UserSimEnv",
            family="usersim",
            description="Customer-service worlds: the agent is the assistant, talks to an "
            "agenda-driven simulated user and calls domain tools on a real SQLite database.",
        ),
    ),
    suites=(
        SuiteSpec(
            "usersim",
            "palaestra.envs.usersim.suites:suite",
            "Customer-service dialogues (airline, retail, train, hotel), each task validated",
        ),
    ),
    package="palaestra.envs.usersim",
    options="palaestra.envs.usersim.options:UserSimOptions",
    description="Tool-using customer-service dialogues with a simulated user.",
)
