"""``python -m palaestra.server``: the gateway program (:mod:`palaestra.server.program`)."""

from palaestra.server.program import main

main()
