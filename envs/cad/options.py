"""What an API client may set on a ``palaestra/cad-v0`` session (see ``palaestra.options``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from palaestra.options import EnvOptions

Part = Literal[
    "views", "target_views", "spec", "history", "properties", "topology", "feedback", "inspect"
]


class CadOptions(EnvOptions):
    observe: list[Part] | None = Field(
        default=None, min_length=1, max_length=8, description="Observation parts to compute"
    )
