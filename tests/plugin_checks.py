"""The test family's check kind: imported only when a verifier first names it (Family.checks)."""

from __future__ import annotations

from typing import Any

from palaestra.verifiers.base import CheckResult, StateProbe, check_kind


@check_kind("test_oks")
def _oks(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    """At least ``at_least`` ok() actions were counted."""
    oks = int(probe.read()["oks"])
    want = int(spec["at_least"])
    return CheckResult("test_oks", oks >= want, min(1.0, oks / want), f"{oks}/{want} oks")
