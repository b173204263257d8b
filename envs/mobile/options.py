"""What an API client may set on a ``palaestra/mobile-v0`` session (see ``palaestra.options``).

A client picks the embedded phone (and its profile) or the operator's device: ``backend:
"appium"`` uses the Appium server and capabilities of the operator's configuration
(``PALAESTRA_APPIUM_URL``, ``PALAESTRA_APPIUM_CAPABILITIES``), which must be on the outbound
allow-list (``PALAESTRA_OUTBOUND_ALLOW``). A client never names a server (``appium_url``) or
capabilities: both would let it make the worker call anything it likes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from palaestra.options import EnvOptions, OperatorConfig

Part = Literal["screenshot", "ui_elements", "foreground_app", "goal", "chat"]


class MobileOptions(EnvOptions):
    backend: Literal["embedded", "appium"] = "embedded"
    profile: Literal["phone", "pixel-7", "small"] | None = Field(
        default=None, description="Embedded phone's device profile"
    )
    observe: list[Part] | None = Field(
        default=None, min_length=1, max_length=5, description="Observation parts to compute"
    )

    def env_kwargs(self, operator: OperatorConfig) -> dict[str, Any]:
        kwargs = super().env_kwargs(operator)
        if self.backend == "appium":
            kwargs["backend"] = "appium"
            kwargs["appium_url"] = operator.check_endpoint(operator.appium_url, "Appium server")
            kwargs["capabilities"] = dict(operator.appium_capabilities)
        return kwargs
