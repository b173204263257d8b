"""The mobile family: ``palaestra/mobile-v0``, an embedded phone or a device through Appium."""

from __future__ import annotations

from palaestra.family import Family
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
    policies="palaestra.envs.mobile.policies",
    checks=("palaestra.verifiers.app_state",),
    requires=("playwright",),
    extra="web",
    bench="palaestra.bench.mobile:main",
    options="palaestra.envs.mobile.options:MobileOptions",
    description="A phone: synthesized apps under touch emulation, or a device through Appium.",
)
