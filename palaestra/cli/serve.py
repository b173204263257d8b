"""``palaestra serve``: the gateway program (:mod:`palaestra.server.program`, also
``python -m palaestra.server``) as a command of the CLI."""

from __future__ import annotations

from palaestra.cli._app import app
from palaestra.server.program import serve

app.command()(serve)
