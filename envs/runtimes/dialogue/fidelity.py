"""What the dialogue families' fidelity reports share (usersim's and tau2's simulated users,
each measured by playing assistants whose right outcome is known)."""

from __future__ import annotations


def ratio(a: int, b: int, empty: float = 1.0) -> float:
    """``a / b`` to four places, or ``empty`` when nothing was counted (``b`` is 0)."""
    return round(a / b, 4) if b else empty
