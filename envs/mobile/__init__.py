"""The mobile family: ``palaestra/mobile-v0``, an embedded phone or a device through Appium."""

from __future__ import annotations

from palaestra.family import Family, SuiteSpec
from palaestra.registry import EnvSpec

FAMILY = Family(
    name="mobile",
    envs=(
        EnvSpec(
            "palaestra/mobile-v0",
            "palaestra.envs.mobile.env:MobileEnv",
            family="mobile",
            description="A touch phone with AndroidWorld's actions: embedded (Chromium with touch "
            "emulation running synthesized apps) or a device/emulator through Appium.",
        ),
    ),
    suites=(
        SuiteSpec(
            "phone",
            "palaestra.envs.mobile.suites:suite",
            "Synthesized phone tasks on the five built-in app domains (bank, calendar, email, "
            "shop, train), two app variants each; every task execution-validated on the "
            "embedded phone.",
        ),
        SuiteSpec(
            "androidworld-replica",
            "palaestra.envs.mobile.suites:replica_suite",
            "AndroidWorld's task templates on synthesized replicas of its apps, several seeds "
            "each plus ask-the-user variants; every task execution-validated on the embedded "
            "phone.",
        ),
        SuiteSpec(
            "androidworld-replica-web",
            "palaestra.envs.mobile.suites:replica_web_suite",
            "AndroidWorld's task templates on the desktop layout of the replicas that make "
            "sense on the web; every task execution-validated in the browser.",
        ),
    ),
    package="palaestra.envs.mobile",
    checks=("palaestra.verifiers.app_state",),
    requires=("playwright",),
    extra="web",
    options="palaestra.envs.mobile.options:MobileOptions",
    description="A phone: synthesized apps under touch emulation, or a device through Appium.",
)
