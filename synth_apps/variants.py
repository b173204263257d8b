"""Seeded variants of one app, so a policy learns the task rather than one screen.

Variant 0 is the spec as written. Every other index draws, from its own seed, a theme, a
navigation structure (top bar or side bar; the mobile layout always uses a bottom bar), list
pages as tables or cards, a page size, select boxes or radio buttons for choices, synonyms for
labels (the spec's own ``synonyms`` plus common ones below), and an order for form fields and
columns. The same (spec, index) always gives the same variant.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal, TypeGuard

from palaestra.synth_apps.spec import AppSpec

#: labels every app uses, and what a variant may call them instead
COMMON_SYNONYMS = {
    "Search": ["Find", "Show results", "Look up"],
    "Continue": ["Next", "Proceed"],
    "Confirm": ["Submit", "Complete"],
    "Next page": ["More results", "Forward"],
    "Previous page": ["Earlier results", "Backward"],
    "Home": ["Start", "Overview"],
    "Any": ["All", "Every"],
}
THEMES = [
    {"accent": "#1d4ed8", "bg": "#f8fafc", "fg": "#0f172a", "font": "DejaVu Sans", "radius": 6},
    {"accent": "#047857", "bg": "#ffffff", "fg": "#1f2937", "font": "DejaVu Serif", "radius": 2},
    {"accent": "#b91c1c", "bg": "#fffbeb", "fg": "#292524", "font": "DejaVu Sans", "radius": 12},
    {
        "accent": "#6d28d9",
        "bg": "#f5f3ff",
        "fg": "#1e1b4b",
        "font": "DejaVu Sans Mono",
        "radius": 4,
    },
    {"accent": "#0e7490", "bg": "#ecfeff", "fg": "#083344", "font": "DejaVu Sans", "radius": 0},
]
Layout = Literal["desktop", "mobile"]
LAYOUTS: tuple[Layout, ...] = ("desktop", "mobile")


@dataclass(frozen=True)
class Variant:
    index: int = 0
    layout: Layout = "desktop"
    theme: dict = field(default_factory=lambda: dict(THEMES[0]))
    nav: Literal["top", "side", "bottom"] = "top"
    list_style: Literal["table", "cards"] = "table"
    page_size: int = 10
    choices: Literal["select", "radio"] = "select"
    labels: dict[str, str] = field(default_factory=dict)
    order_seed: int | None = None

    def label(self, text: str) -> str:
        return self.labels.get(text, text)

    def order(self, names: list[str], where: str) -> list[str]:
        """``names`` in this variant's order for one place (a form step, a table)."""
        if self.order_seed is None:
            return list(names)
        out = list(names)
        random.Random(f"{self.order_seed}:{where}").shuffle(out)
        return out

    @property
    def viewport(self) -> tuple[int, int]:
        return (390, 844) if self.layout == "mobile" else (1280, 800)


def is_layout(name: str) -> TypeGuard[Layout]:
    return name in LAYOUTS


def make_variant(spec: AppSpec, index: int, layout: str = "desktop") -> Variant:
    if not is_layout(layout):
        raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
    mobile = layout == "mobile"
    if index == 0:
        return Variant(
            0, layout, nav="bottom" if mobile else "top", list_style="cards" if mobile else "table"
        )
    rng = random.Random(f"{spec.name}:{index}")
    synonyms = {**COMMON_SYNONYMS, **spec.synonyms}
    labels = {k: rng.choice(v) for k, v in synonyms.items() if v and rng.random() < 0.7}
    return Variant(
        index=index,
        layout=layout,
        theme=dict(rng.choice(THEMES)),
        nav="bottom" if mobile else rng.choice(["top", "side"]),
        list_style="cards" if mobile else rng.choice(["table", "cards"]),
        page_size=rng.choice([5, 8, 10, 15]),
        choices=rng.choice(["select", "radio"]),
        labels=labels,
        order_seed=rng.randrange(1 << 30),
    )
