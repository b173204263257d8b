"""The web family: ``palaestra/web-v0`` on real Chromium, and the MiniWoB++ suite."""

from __future__ import annotations

from palaestra.family import Family, SuiteSpec
from palaestra.registry import EnvSpec

FAMILY = Family(
    name="web",
    envs=(
        EnvSpec(
            "palaestra/web-v0",
            "palaestra.envs.web.env:WebEnv",
            family="web",
            description="Chromium through Playwright with BrowserGym's actions and a bid-tagged "
            "accessibility tree.",
        ),
    ),
    suites=(
        SuiteSpec(
            "miniwob",
            "palaestra.envs.web.suites:miniwob_tasks",
            "MiniWoB++ (the miniwob package's own pages and rewards)",
        ),
    ),
    package="palaestra.envs.web",
    checks=("palaestra.verifiers.web", "palaestra.verifiers.app_state"),
    requires=("playwright", "miniwob"),
    extra="web",
    options="palaestra.envs.web.options:WebOptions",
    description="Real Chromium: MiniWoB++ and synthesized web apps.",
)
