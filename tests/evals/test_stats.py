"""The evaluation's figures against values computed by hand or published."""

from __future__ import annotations

import math

import pytest

from palaestra.evals import stats
from palaestra.evals.config import EpisodeResult


def ep(task: str, seed: int, attempt: int, success: bool, status: str = "ok") -> EpisodeResult:
    return EpisodeResult(
        suite="s", task=task, seed=seed, attempt=attempt, agent="a", success=success,
        score=float(success), status=status, family="web", difficulty="easy" if seed else "hard",
    )  # fmt: skip


def test_wilson_interval():
    lo, hi = stats.wilson(8, 10)  # the textbook example: 0.4902, 0.9433
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    assert stats.wilson(0, 10)[0] == 0.0 and stats.wilson(10, 10)[1] == 1.0
    assert stats.wilson(0, 0) == (0.0, 0.0)


def test_pass_k_as_tau_bench_defines_it():
    # one task, 4 trials, 2 successes: pass^1 = 0.5, pass^2 = C(2,2)/C(4,2) = 1/6
    rows = [ep("t", 0, a, a < 2) for a in range(4)]
    at, hat = stats.pass_curves(rows)
    assert hat["1"] == 0.5 and hat["2"] == pytest.approx(1 / 6) and hat["4"] == 0.0
    assert at["1"] == 0.5 and at["2"] == pytest.approx(1 - 1 / 6) and at["4"] == 1.0
    # errors are not trials
    assert stats.pass_curves([*rows, ep("t", 0, 4, False, "error")]) == (at, hat)


def test_group_tables_skip_errors():
    rows = [ep("a", 0, 0, True), ep("b", 1, 0, False), ep("c", 1, 0, True, "error")]
    table = stats.group(rows, "difficulty")
    assert table["hard"]["n"] == 1 and table["hard"]["success_rate"] == 1.0
    assert table["easy"]["n"] == 1 and table["easy"]["success_rate"] == 0.0


def test_mcnemar_and_sign_flip():
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.mcnemar_exact(0, 5) == pytest.approx(2 / 32)  # 2 * 0.5**5
    assert stats.mcnemar_exact(3, 3) == 1.0
    assert stats.sign_flip_test([1.0] * 6) == pytest.approx(2 / 64)
    assert stats.sign_flip_test([0.0, 0.0]) == 1.0
    p = stats.sign_flip_test([1.0] * 20)  # Monte Carlo beyond 16 pairs
    assert p < 0.001


def test_compare_pairs_only_shared_episodes():
    a = [ep("x", 0, 0, False), ep("y", 0, 0, True), ep("z", 0, 0, False)]
    b = [ep("x", 0, 0, True), ep("y", 0, 0, True), ep("w", 0, 0, True)]
    out = stats.compare(a, b)
    assert out["pairs"] == 2 and out["unpaired"] == 2
    assert (out["only_a"], out["only_b"]) == (0, 1) and out["mcnemar_p"] == 1.0
    assert out["per_task"]["x"]["diff"] == 1.0 and math.isclose(out["mean_score_diff"], 0.5)


def test_compare_refuses_runs_without_a_paired_episode_and_says_why():
    from palaestra.errors import InvalidRequest

    a = [ep("x", 0, 0, True)]
    other_suite = [EpisodeResult(suite="t", task="y", seed=0, attempt=0, agent="a")]
    with pytest.raises(InvalidRequest, match=r"no episode .* both runs; .*different suites"):
        stats.compare(a, other_suite)
    with pytest.raises(InvalidRequest, match=r"share no seed \(A: \[0\], B: \[1\]\)"):
        stats.compare(a, [ep("x", 1, 0, True)])
    with pytest.raises(InvalidRequest, match=r"run B scored no episode"):
        stats.compare(a, [ep("x", 0, 0, False, "error")])
