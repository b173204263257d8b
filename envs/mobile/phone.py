"""The backend interface of ``palaestra/mobile-v0``: what a phone must do, whatever it is.

:class:`~palaestra.envs.mobile.env.MobileEnv` owns the action semantics (an index becomes the
centre of that element, a direction becomes a swipe, a tap outside the screen is refused) and
calls a :class:`Phone` for raw gestures and reads. Two phones exist: the embedded one
(Chromium with touch emulation running the synthesized apps' mobile layouts) and an Appium
client for real devices and emulators. Coordinates are screen pixels of the screenshot.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np


class PhoneError(RuntimeError):
    """The phone (or the server driving it) failed; the message names the server and command."""


#: AndroidWorld's ``BoundingBox`` field order
_BOX = ("x_min", "x_max", "y_min", "y_max")


@dataclass
class UIElement:
    """One element in AndroidWorld's form (``android_world.env.representation_utils``).

    :meth:`to_json` gives every field of AndroidWorld's ``UIElement`` (``bbox`` normalised to
    the screen, ``bbox_pixels`` in pixels, both as ``BoundingBox`` fields) plus palaestra's
    ``index``, the number actions refer to, so ``UIElement(**e)`` rebuilds one there."""

    index: int
    text: str = ""
    content_description: str = ""
    class_name: str = ""
    resource_id: str = ""
    package_name: str = ""
    x_min: int = 0
    y_min: int = 0
    x_max: int = 0
    y_max: int = 0
    is_clickable: bool = False
    is_editable: bool = False
    is_scrollable: bool = False
    is_checked: bool = False
    is_focused: bool = False
    is_enabled: bool = True
    hint_text: str = ""
    tooltip: str = ""
    is_checkable: bool = False
    is_focusable: bool = False
    is_long_clickable: bool = False
    is_selected: bool = False
    is_visible: bool = True  # a backend lists what is on screen

    @property
    def center(self) -> tuple[float, float]:
        return ((self.x_min + self.x_max) / 2, (self.y_min + self.y_max) / 2)

    def to_json(self, screen: tuple[int, int] | None = None) -> dict[str, Any]:
        """AndroidWorld's fields; ``screen`` (width, height) adds the normalised ``bbox``."""
        out = asdict(self)
        pixels = {k: out.pop(k) for k in _BOX}
        out["bbox_pixels"] = pixels
        out["bbox"] = None
        if screen is not None:
            w, h = screen
            out["bbox"] = {k: pixels[k] / (w if k[0] == "x" else h) for k in _BOX}
        out["resource_name"] = self.resource_id  # AndroidWorld's view_id_resource_name
        out["is_checkable"] = self.is_checkable or self.is_checked
        out["is_focusable"] = self.is_focusable or self.is_editable
        return out


class Phone(Protocol):
    #: the screen in pixels, (width, height), portrait
    size: tuple[int, int]

    def start(self, setup: dict[str, Any], seed: int) -> None:
        """Bring the phone to the task's first screen (its apps restored to their seeded state)."""
        ...

    def screenshot(self) -> np.ndarray: ...

    def elements(self) -> list[UIElement]: ...

    def foreground(self) -> str:
        """The name of the app in front (``"launcher"`` on the home screen)."""
        ...

    def tap(self, x: float, y: float) -> None: ...

    def double_tap(self, x: float, y: float) -> None: ...

    def long_press(self, x: float, y: float, ms: float = 800) -> None: ...

    def swipe(self, x1: float, y1: float, x2: float, y2: float, ms: float = 300) -> None: ...

    def type_text(self, text: str) -> None:
        """Type into the focused field."""
        ...

    def enter(self) -> None: ...

    def back(self) -> None: ...

    def home(self) -> None: ...

    def open_app(self, name: str) -> None:
        """Open an installed app by its name; PhoneError if there is no such app."""
        ...

    def apps(self) -> list[str]: ...

    def state(self) -> dict[str, Any]:
        """Privileged state for verifiers (e.g. ``app_db``)."""
        ...

    def close(self) -> None: ...
