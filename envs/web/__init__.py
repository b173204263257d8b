"""The web family: ``palaestra/web-v0`` on real Chromium, and the MiniWoB++ suite."""

from __future__ import annotations


def register_web() -> None:
    from palaestra.registry import EnvSpec, register
    from palaestra.tasks import register_suite

    register(
        EnvSpec(
            "palaestra/web-v0",
            "palaestra.envs.web.env:WebEnv",
            family="web",
            description="Chromium through Playwright with BrowserGym's actions and a bid-tagged "
            "accessibility tree.",
        )
    )
    register_suite(
        "miniwob",
        "palaestra.envs.web.miniwob:miniwob_tasks",
        "MiniWoB++ (the miniwob package's own pages and rewards)",
    )
