"""One instance per process, made on first use: the worker's browser, the synthesized apps' host.

Both are expensive (a Chromium, an HTTP server thread) and shared by every session of a worker,
and both may first be asked for by several session threads at once: the lock makes sure exactly
one is made.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def process_wide(make: Callable[[], T]) -> Callable[[], T]:
    """Decorate a factory so that calling it returns the one instance ``make()`` built."""
    lock = threading.Lock()
    made: list[T] = []

    @functools.wraps(make)
    def instance() -> T:
        with lock:
            if not made:
                made.append(make())
            return made[0]

    return instance
