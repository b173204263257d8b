"""Verifiers: read the real end state through a privileged probe and score it."""

from palaestra.verifiers.base import (
    CheckResult,
    DeclarativeVerifier,
    StateProbe,
    Verifier,
    VerifierResult,
    check_kind,
    check_kinds,
)

__all__ = [
    "CheckResult",
    "DeclarativeVerifier",
    "StateProbe",
    "Verifier",
    "VerifierResult",
    "check_kind",
    "check_kinds",
]
