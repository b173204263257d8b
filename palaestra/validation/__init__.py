"""Execution validation as one service above the families.

A family declares how its tasks are validated (a
:class:`~palaestra.verifiers.validation.ValidationPlan`, named by ``Family.validation``);
this package plays them all with one runner (:mod:`.runner`: oracle, do-nothing, mutants,
adversaries, adversary search) and validates suites and shipped records (:mod:`.suites`).
"""

from palaestra.validation.runner import AdversaryAbstained, plan_of, validate, validate_task
from palaestra.validation.suites import (
    record,
    revalidate,
    revalidate_committed,
    validate_suite,
)

__all__ = [
    "AdversaryAbstained",
    "plan_of",
    "record",
    "revalidate",
    "revalidate_committed",
    "validate",
    "validate_suite",
    "validate_task",
]
