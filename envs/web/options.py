"""What an API client may set on a ``palaestra/web-v0`` session (see ``palaestra.options``).

The viewport is bounded (320..1920 x 240..1200, a phone to a full-HD desktop): a browser page's
memory and a screenshot's cost grow with its area, and a 6000x6000 page costs 400 MB and a ten
second reset. Timeouts and the accessibility tree's size are bounded for the same reason.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from palaestra.options import EnvOptions

#: every observation part: the lean default first (envs/web/env.py PARTS), then BrowserGym's keys
#: with its CDP objects first; the env reads its part lists from here
Part = Literal[
    "screenshot",
    "axtree",
    "url",
    "title",
    "goal",
    "chat",
    "tabs",
    "axtree_object",
    "dom_object",
    "extra_element_properties",
    "chat_messages",
    "goal_object",
    "open_pages_urls",
    "open_pages_titles",
    "active_page_index",
    "focused_element_bid",
    "last_action",
    "elapsed_time",
]


class WebOptions(EnvOptions):
    viewport: (
        tuple[Annotated[int, Field(ge=320, le=1920)], Annotated[int, Field(ge=240, le=1200)]] | None
    ) = Field(default=None, description="[width, height] in CSS pixels (320..1920 x 240..1200)")
    observe: list[Part] | None = Field(
        default=None,
        min_length=1,
        max_length=18,
        description="Observation parts to compute (default: the first seven)",
    )
    action_timeout_s: float | None = Field(default=None, ge=0.1, le=30)
    navigation_timeout_s: float | None = Field(default=None, ge=1, le=60)
    axtree_max_chars: int | None = Field(default=None, ge=1000, le=200_000)
