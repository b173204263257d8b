"""The computer family: ``palaestra/computer-v0``, a sandboxed Linux desktop with GUI and code."""

from __future__ import annotations


def register_computer() -> None:
    from palaestra.registry import EnvSpec, register
    from palaestra.tasks import register_suite

    register(
        EnvSpec(
            "palaestra/computer-v0",
            "palaestra.envs.computer.env:ComputerEnv",
            family="computer",
            description="A Linux desktop (Xvfb, a window manager, real apps) in a sandbox with "
            "no network: GUI actions and shell/Python code in one action space.",
        )
    )
    register_suite(
        "computer-basic",
        "palaestra.envs.computer.tasks:load_suite",
        "Desktop tasks: file management, text editing, shell and scripting, archives and "
        "permissions, mixed GUI + code; each with an oracle, execution-validated.",
    )
    register_suite(
        "osworld-os",
        "palaestra.envs.computer.osworld:load_suite",
        "OSWorld's os-domain tasks in their own JSON format: the ones this desktop can run.",
    )
