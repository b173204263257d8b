"""Execution validation as one service above the families.

A family declares how its tasks are validated (a
:class:`~palaestra.verifiers.validation.ValidationPlan`, named by ``Family.validation``);
this package plays them all with one runner (:mod:`.runner`: oracle, do-nothing, mutants,
adversaries, adversary search), validates suites and shipped records (:mod:`.suites`) and
says when a record no longer stands for today's code (:mod:`.records`).
"""

from palaestra.validation.records import code_digest, code_sources, stale
from palaestra.validation.runner import AdversaryAbstained, plan_of, validate, validate_task
from palaestra.validation.suites import (
    record,
    revalidate,
    revalidate_committed,
    validate_suite,
)

__all__ = [
    "AdversaryAbstained",
    "code_digest",
    "code_sources",
    "plan_of",
    "record",
    "revalidate",
    "revalidate_committed",
    "stale",
    "validate",
    "validate_suite",
    "validate_task",
]
