"""The user-simulator family: ``palaestra/usersim-v0``, tau-bench-style tool-using dialogues."""

from __future__ import annotations


def register_usersim() -> None:
    from palaestra.registry import EnvSpec, register
    from palaestra.tasks import register_suite

    register(
        EnvSpec(
            "palaestra/usersim-v0",
            "palaestra.envs.usersim.env:UserSimEnv",
            family="usersim",
            description="Customer-service worlds: the agent is the assistant, talks to an "
            "agenda-driven simulated user and calls domain tools on a real SQLite database.",
        )
    )
    register_suite(
        "usersim",
        "palaestra.envs.usersim.tasks:suite",
        "Customer-service dialogues (airline, retail, train, hotel), each task validated",
    )
