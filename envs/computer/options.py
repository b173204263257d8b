"""What an API client may set on a ``palaestra/computer-v0`` session (see ``palaestra.options``).

The screen size is the range the desktop supports (320..3840 x 240..2160); ``screen="osworld"``
is OSWorld's 1920x1080 (its VMs' screen), for agents that click OSWorld's coordinates.
``observe`` picks the observation parts; ``a11y_tree`` (off by default) is the desktop's
accessibility tree in OSWorld's XML form. Neither widens what an episode may do: the tree is
read by the env from the sandbox's own accessibility bus. The sandbox's
resource limits (memory, processes, file size, ...) are not a client option: they come from the
operator's configuration (``PALAESTRA_COMPUTER_LIMITS``) and the gateway adds them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from palaestra.options import EnvOptions, OperatorConfig

#: the parts ``ComputerEnv`` can observe (``env.PARTS``; options must not import the env)
Part = Literal["screenshot", "windows", "last_output", "cwd", "goal", "a11y_tree"]
OSWORLD_SCREEN = (1920, 1080)


class ComputerOptions(EnvOptions):
    width: int | None = Field(default=None, ge=320, le=3840, description="Screen width")
    height: int | None = Field(default=None, ge=240, le=2160, description="Screen height")
    settle_ms: float | None = Field(
        default=None, ge=0, le=2000, description="Wait after a GUI action before observing"
    )

    screen: Literal["osworld"] | None = Field(
        default=None, description="A named screen size: 'osworld' is 1920x1080"
    )
    observe: list[Part] | None = Field(
        default=None, min_length=1, max_length=6, description="Observation parts to compute"
    )

    @model_validator(mode="after")
    def _one_size(self) -> ComputerOptions:
        if self.screen and (self.width or self.height):
            raise ValueError("give screen or width/height, not both")
        return self

    def env_kwargs(self, operator: OperatorConfig) -> dict[str, Any]:
        kwargs = super().env_kwargs(operator)
        if kwargs.pop("screen", None) == "osworld":
            kwargs["width"], kwargs["height"] = OSWORLD_SCREEN
        if operator.computer_limits:
            kwargs["limits"] = dict(operator.computer_limits)
        return kwargs
