"""The gateway settings whose defaults its command-line help shows too, as plain values: the
help is built at every ``palaestra`` start, which must not import pydantic-settings for it.
:class:`~palaestra.server.settings.Settings` takes its defaults from here."""

from typing import Final

PORT: Final = 8000
WORKERS: Final = 2
BACKEND: Final = "local"
