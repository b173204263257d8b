"""``python -m palaestra.cli``: the command line (how the gateway starts a child gateway)."""

from palaestra.cli import app

app()
