"""The user-simulator family: ``palaestra/usersim-v0`` (our own domains) and ``palaestra/tau2-v0``
(tau2-bench retail and telecom), tool-using dialogues with a simulated user."""

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
        EnvSpec(
            "palaestra/tau2-v0",
            "palaestra.envs.usersim.tau2.env:Tau2Env",
            family="usersim",
            description="tau2-bench's retail and telecom worlds with tau2's tools and scoring; "
            "a deterministic symbolic user (in telecom, acting on its own phone).",
        ),
    ),
    suites=(
        SuiteSpec(
            "usersim",
            "palaestra.envs.usersim.suites:suite",
            "Customer-service dialogues (airline, retail, train, hotel), each task validated",
        ),
        SuiteSpec(
            "tau2-retail",
            "palaestra.envs.usersim.tau2.suites:retail",
            "tau2-bench retail (train/test splits in metadata), symbolic user, validated",
        ),
        SuiteSpec(
            "tau2-telecom",
            "palaestra.envs.usersim.tau2.suites:telecom",
            "tau2-bench telecom, the user acting on their phone; splits in metadata; validated",
        ),
    ),
    policies="palaestra.envs.usersim.policies",
    checks=("palaestra.verifiers.usersim",),
    bench="palaestra.bench.usersim:main",
    validation="palaestra.envs.usersim.suites:validate_suite",
    options="palaestra.envs.usersim.options:UserSimOptions",
    description="Tool-using customer-service dialogues with a simulated user.",
)
