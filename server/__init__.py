"""The FastAPI gateway: HTTP API v1, WebSocket, pools, metrics and a dashboard."""

from palaestra.server.app import create_app
from palaestra.server.settings import Settings

__all__ = ["Settings", "create_app"]
