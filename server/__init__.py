"""The FastAPI gateway: HTTP API v1, WebSocket, pools, metrics and a dashboard.

``create_app`` and ``Settings`` load on first use: the gateway program's options
(:mod:`palaestra.server.program`, which ``palaestra --help`` reads) cost no FastAPI import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from palaestra.server.app import create_app
    from palaestra.server.settings import Settings

__all__ = ["Settings", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from palaestra.server.app import create_app

        return create_app
    if name == "Settings":
        from palaestra.server.settings import Settings

        return Settings
    raise AttributeError(f"module 'palaestra.server' has no attribute {name!r}")
