"""The figures of an evaluation, computed from its episodes alone (so a resumed or re-read run
gives the same numbers): Wilson intervals, tau-bench's pass@k and pass^k, breakdown tables, and
the paired comparison of two runs.

- **pass^k** (tau-bench, Yao et al. 2024): the chance that *all* k i.i.d. trials of a task
  succeed, estimated per task with n trials and c successes as C(c, k) / C(n, k), averaged over
  tasks. It falls with k for an unreliable agent.
- **pass@k** (Chen et al. 2021): the chance that *at least one* of k trials succeeds,
  1 - C(n - c, k) / C(n, k), averaged over tasks.

A "task" for both is one (task, seed) pair; its trials are the attempts.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from palaestra.errors import InvalidRequest
from palaestra.evals.config import EpisodeResult

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ((0, 0) for no trials)."""
    if n == 0:
        return (0.0, 0.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def pass_hat_k(n: int, c: int, k: int) -> float:
    return math.comb(c, k) / math.comb(n, k) if n >= k else float("nan")


def pass_at_k(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k) if n >= k else float("nan")


def trials(results: Iterable[EpisodeResult]) -> dict[tuple[str, int], tuple[int, int]]:
    """(task, seed) -> (trials, successes) over scored episodes."""
    counts: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        if r.status == "ok":
            counts[(r.task, r.seed)][0] += 1
            counts[(r.task, r.seed)][1] += int(r.success)
    return {key: (n, c) for key, (n, c) in counts.items()}


def pass_curves(results: Sequence[EpisodeResult]) -> tuple[dict[str, float], dict[str, float]]:
    """pass@k and pass^k for k = 1 .. the fewest trials any task has."""
    per_task = trials(results)
    if not per_task:
        return {}, {}
    kmax = min(n for n, _ in per_task.values())
    at, hat = {}, {}
    for k in range(1, kmax + 1):
        at[str(k)] = sum(pass_at_k(n, c, k) for n, c in per_task.values()) / len(per_task)
        hat[str(k)] = sum(pass_hat_k(n, c, k) for n, c in per_task.values()) / len(per_task)
    return at, hat


def strict_rate(results: Sequence[EpisodeResult]) -> float:
    """The share of episodes fully done: success with a score of 1. MiniWoB's own success
    counts any raw reward above 0 (partial credit), as its published numbers do; this one
    does not."""
    done = sum(r.success and r.score >= 1.0 - 1e-9 for r in results)
    return done / len(results) if results else 0.0


def group(results: Sequence[EpisodeResult], by: str) -> dict[str, dict[str, Any]]:
    """Success rate (with its interval), mean score and counts per value of ``by``."""
    groups: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        if r.status == "ok":
            groups[str(getattr(r, by) or "-")].append(r)
    table = {}
    for value, rows in sorted(groups.items()):
        wins = sum(r.success for r in rows)
        table[value] = {
            "n": len(rows),
            "success_rate": wins / len(rows),
            "ci95": wilson(wins, len(rows)),
            "mean_score": sum(r.score for r in rows) / len(rows),
            "strict_success_rate": strict_rate(rows),
        }
    return table


# ----- comparing two runs --------------------------------------------------------------------


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: b pairs where only A succeeded, c where only B did."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def sign_flip_test(diffs: Sequence[float], rounds: int = 20_000, seed: int = 0) -> float:
    """Two-sided paired permutation (sign-flip) test of the mean difference; exact for up to
    16 pairs, Monte Carlo beyond."""
    import random

    nonzero = [d for d in diffs if d != 0]
    if not nonzero:
        return 1.0
    observed = abs(sum(nonzero))
    n = len(nonzero)
    if n <= 16:
        hits = 0
        for mask in range(2**n):
            total = sum(-d if mask >> i & 1 else d for i, d in enumerate(nonzero))
            hits += abs(total) >= observed - 1e-12
        return hits / 2**n
    rng = random.Random(seed)
    hits = sum(
        abs(sum(d if rng.random() < 0.5 else -d for d in nonzero)) >= observed - 1e-12
        for _ in range(rounds)
    )
    return (hits + 1) / (rounds + 1)


def _unpaired_why(a: Sequence[EpisodeResult], b: Sequence[EpisodeResult]) -> str:
    """Why two runs share no scored episode, in the first terms that tell them apart."""
    sa, sb = ([r for r in rs if r.status == "ok"] for rs in (a, b))
    if not sa or not sb:
        which = " and ".join(n for n, rs in (("A", sa), ("B", sb)) if not rs)
        return f"run {which} scored no episode (all errors or skipped, or empty)"
    suites_a, suites_b = {r.suite for r in sa}, {r.suite for r in sb}
    if not suites_a & suites_b:
        return f"they evaluate different suites: A {sorted(suites_a)}, B {sorted(suites_b)}"
    tasks_a, tasks_b = {r.task for r in sa}, {r.task for r in sb}
    if not tasks_a & tasks_b:
        return f"they share no task (A: {sorted(tasks_a)[:5]}, B: {sorted(tasks_b)[:5]})"
    seeds_a, seeds_b = {r.seed for r in sa}, {r.seed for r in sb}
    if not seeds_a & seeds_b:
        return f"they share no seed (A: {sorted(seeds_a)[:10]}, B: {sorted(seeds_b)[:10]})"
    return "their (task, seed, attempt) episodes do not overlap: run both with the same --seeds"


def compare(a: Sequence[EpisodeResult], b: Sequence[EpisodeResult]) -> dict[str, Any]:
    """Paired differences of two runs over the (task, seed, attempt) episodes both scored.

    Success is compared with the exact McNemar test on the discordant pairs, the score with a
    paired sign-flip permutation test; per task, the differences of success rate and score.
    Two runs without a paired episode are refused (InvalidRequest saying why): "0 pairs,
    p = 1" would read as "no difference"."""
    left = {r.key: r for r in a if r.status == "ok"}
    right = {r.key: r for r in b if r.status == "ok"}
    keys = sorted(set(left) & set(right))
    if not keys:
        raise InvalidRequest(
            f"nothing to compare: no episode (task, seed, attempt) was scored in both runs; "
            f"{_unpaired_why(a, b)}",
            field="results",
        )
    only_a = sum(left[k].success and not right[k].success for k in keys)
    only_b = sum(right[k].success and not left[k].success for k in keys)
    score_diffs = [right[k].score - left[k].score for k in keys]
    per_task: dict[str, dict[str, Any]] = {}
    for k in keys:
        row = per_task.setdefault(
            k[0], {"n": 0, "a": 0.0, "b": 0.0, "score_a": 0.0, "score_b": 0.0}
        )
        row["n"] += 1
        row["a"] += left[k].success
        row["b"] += right[k].success
        row["score_a"] += left[k].score
        row["score_b"] += right[k].score
    for row in per_task.values():
        for f in ("a", "b", "score_a", "score_b"):
            row[f] /= row["n"]
        row["diff"] = row["b"] - row["a"]
    n = len(keys)
    return {
        "pairs": n,
        "unpaired": len(set(left) ^ set(right)),
        "success_a": sum(left[k].success for k in keys) / n if n else 0.0,
        "success_b": sum(right[k].success for k in keys) / n if n else 0.0,
        "only_a": only_a,
        "only_b": only_b,
        "mcnemar_p": mcnemar_exact(only_a, only_b),
        "mean_score_diff": sum(score_diffs) / n if n else 0.0,
        "score_permutation_p": sign_flip_test(score_diffs),
        "per_task": per_task,
    }
