"""``python -m palaestra.cli``: the command line, as the ``palaestra`` script runs it."""

from palaestra.cli import app

app()
