"""What an API client may set on a ``palaestra/computer-v0`` session (see ``palaestra.options``).

The screen size is the range the desktop supports (320..3840 x 240..2160). The sandbox's
resource limits (memory, processes, file size, ...) are not a client option: they come from the
operator's configuration (``PALAESTRA_COMPUTER_LIMITS``) and the gateway adds them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from palaestra.options import EnvOptions, OperatorConfig


class ComputerOptions(EnvOptions):
    width: int | None = Field(default=None, ge=320, le=3840, description="Screen width")
    height: int | None = Field(default=None, ge=240, le=2160, description="Screen height")
    settle_ms: float | None = Field(
        default=None, ge=0, le=2000, description="Wait after a GUI action before observing"
    )

    def env_kwargs(self, operator: OperatorConfig) -> dict[str, Any]:
        kwargs = super().env_kwargs(operator)
        if operator.computer_limits:
            kwargs["limits"] = dict(operator.computer_limits)
        return kwargs
