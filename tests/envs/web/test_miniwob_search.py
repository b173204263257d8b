"""MiniWoB's adversary search: its committed report covers the suite, and on the geometry tasks
it finds what the red team found (a centre click then submit earns partial credit: a success by
the benchmark's rule, never a strict one)."""

import pytest

from palaestra import registry
from palaestra.envs.web.strategies import REPORT, search_task
from palaestra.envs.web.suites import task_names

# the benchmark's partial-credit tasks where a point placed blindly earns raw reward > 0
GEOMETRY = ("circle-center", "find-midpoint")


def test_report_covers_every_task_with_both_verdicts():
    import json

    data = json.loads(REPORT.read_text())
    assert set(data["tasks"]) == set(task_names()), "re-run python -m palaestra.envs.web.strategies"
    for name, found in data["tasks"].items():
        raw = found.get("raw_reward")
        assert found["success"] == (raw is not None and raw > 0), name
        assert found["strict_success"] == (raw is not None and raw >= 1), name
    assert data["benchmark_wins"] == sorted(n for n, t in data["tasks"].items() if t["success"])
    assert set(data["strict_wins"]) <= set(data["benchmark_wins"])


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_search_finds_partial_credit_on_geometry_tasks():
    env = registry.make("palaestra/web-v0", task="miniwob/click-test", observe=("axtree", "goal"))
    try:
        for name in GEOMETRY:
            found = search_task(env, name)
            assert found["errors"] == [], found["errors"]
            assert found["success"] and 0 < found["raw_reward"] < 1, (name, found)
            assert not found["strict_success"], (name, found)
    finally:
        env.close()
