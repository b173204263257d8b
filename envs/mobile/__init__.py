"""The mobile family: ``palaestra/mobile-v0``, an embedded phone or a device through Appium."""

from __future__ import annotations


def register_mobile() -> None:
    from palaestra.registry import EnvSpec, register

    register(
        EnvSpec(
            "palaestra/mobile-v0",
            "palaestra.envs.mobile.env:MobileEnv",
            family="mobile",
            description="A touch phone with AndroidWorld's actions: embedded (Chromium with touch "
            "emulation running synthesized apps) or a device/emulator through Appium.",
        )
    )
