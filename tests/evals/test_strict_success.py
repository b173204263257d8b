"""Strict success beside a benchmark's own (issue 27): MiniWoB counts any raw reward above 0 as
a success, so an untouched partial-credit widget wins; the summary says how many were fully
done."""

from palaestra.evals.config import EpisodeResult
from palaestra.evals.report import headline, markdown, summarize


def episode(task: str, success: bool, score: float) -> EpisodeResult:
    return EpisodeResult(
        suite="miniwob", task=task, seed=0, attempt=0, agent="a", success=success, score=score
    )


def test_partial_credit_is_a_benchmark_success_but_not_a_strict_one():
    results = [episode("full", True, 1.0), episode("partial", True, 0.3), episode("x", False, 0)]
    s = summarize(results, "miniwob", "a")
    assert s.success_rate == 2 / 3 and s.strict_success_rate == 1 / 3
    assert ("strict success", "33.3% (fully done: score 1)") in headline(s)
    assert "| strict success |" in markdown(s, results, None)


def test_strict_success_is_not_shown_where_it_says_nothing_new():
    s = summarize([episode("full", True, 1.0), episode("x", False, 0.0)], "miniwob", "a")
    assert s.strict_success_rate == s.success_rate == 0.5
    assert all(label != "strict success" for label, _ in headline(s))
