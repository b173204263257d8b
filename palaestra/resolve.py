"""The one ``"module:attr"`` resolver.

Registration stays lazy because entry points, suites, check-kind modules, drivers and policies
are named by strings and imported only when first used; every such string goes through here,
so they all accept the same forms (``"pkg.mod"``, ``"pkg.mod:name"``, ``"pkg.mod:Cls.attr"``)
and fail with the same clear error.
"""

from __future__ import annotations

import importlib
from typing import Any


def resolve(ref: str) -> Any:
    """The object ``ref`` names: a module, or an attribute path inside it after ``:``."""
    module, _, attr = ref.partition(":")
    if not module:
        raise ValueError(f"{ref!r} is not a 'module:attr' reference")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else []:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"{ref!r}: {module} has no attribute {attr!r}") from None
    return obj
