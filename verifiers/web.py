"""The web family's check kinds (its other checks, on app state, are in ``app_state``).

``miniwob_reward`` reads MiniWoB's own verdict, which the web env's MiniWoB driver puts in the
probe's state as ``miniwob`` (``done``, ``reward``, ``raw_reward``, ``reason``): success is a raw
reward above 0, as in published MiniWoB numbers, and an episode MiniWoB has not ended scores 0.
The score is the raw reward, so partial credit (an untouched or centre-clicked widget on the
geometry tasks) is a success here but not a *strict* one: eval summaries report strict success
(success with score 1, the task fully done) beside it (``palaestra.evals.stats.strict_rate``).
"""

from __future__ import annotations

from typing import Any

from palaestra.verifiers.base import CheckResult, StateProbe, check_kind


@check_kind("miniwob_reward")
def _miniwob_reward(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    wob = probe.read()["miniwob"]
    raw = float(wob["raw_reward"]) if wob["done"] else 0.0
    return CheckResult(
        "miniwob_reward",
        raw > 0,
        max(0.0, min(1.0, raw)),
        f"done={wob['done']} raw_reward={raw} reason={wob['reason']}",
    )
