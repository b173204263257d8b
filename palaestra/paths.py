"""Where palaestra keeps its files: ``PALAESTRA_HOME`` (default ``~/.palaestra``)."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    return Path(os.environ.get("PALAESTRA_HOME", Path.home() / ".palaestra"))


def cache_dir() -> Path:
    """Results that can be recomputed (validation reports keyed by what they depend on)."""
    return home() / "cache"
