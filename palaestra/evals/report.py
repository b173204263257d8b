"""An evaluation's summary (``summary.json``), its report (``report.md``) and its plot
(``success.png``: success rate with 95% intervals by difficulty, else by family), all built
from the episodes alone so a resumed run reports the same way as one that never stopped."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from palaestra.evals import stats
from palaestra.evals.config import EpisodeResult, EvalSummary

TABLES = ("suite", "family", "kind", "difficulty")
PLOT = "success.png"


def summarize(
    results: Sequence[EpisodeResult],
    suite: str,
    agent: str,
    *,
    wall_s: float = 0.0,
    expected: int | None = None,
    cancelled: bool = False,
    run: str | None = None,
    stochastic: bool = True,
    gateway: str | None = None,
) -> EvalSummary:
    """``stochastic``: two attempts of the agent can differ; when False, pass@k and pass^k
    are left out (every attempt replays the first: pass@k = pass^k = pass@1 says nothing)."""
    scored = [r for r in results if r.status == "ok"]
    errors = [r for r in results if r.status == "error"]
    wins = sum(r.success for r in scored)
    at, hat = stats.pass_curves(scored)
    note = None
    if not stochastic and len(at) > 1:
        at, hat = {}, {}
        note = (
            f"not reported: {agent} is deterministic, so every attempt replays the first "
            "(pass@k = pass^k = pass@1)"
        )
    tokens: Counter[str] = Counter()
    for r in results:
        tokens.update(r.tokens)
    wall = wall_s or sum(r.wall_s for r in results)
    return EvalSummary(
        suite=suite,
        agent=agent,
        episodes=len(results),
        scored=len(scored),
        errors=len(errors),
        skipped=sum(r.status == "skipped" for r in results),
        success_rate=wins / len(scored) if scored else 0.0,
        strict_success_rate=stats.strict_rate(scored),
        ci95=stats.wilson(wins, len(scored)),
        mean_score=sum(r.score for r in scored) / len(scored) if scored else 0.0,
        pass_at_k=at,
        pass_hat_k=hat,
        mean_steps=sum(r.steps for r in scored) / len(scored) if scored else 0.0,
        wall_s=round(wall, 3),
        # played episodes only: a skipped one (no oracle) costs nothing
        episodes_per_min=round((len(scored) + len(errors)) / wall * 60, 2) if wall > 0 else 0.0,
        tokens=dict(tokens),
        tables={by: stats.group(scored, by) for by in TABLES},
        error_kinds=dict(Counter(r.error_kind or "unknown" for r in errors)),
        error_examples=examples(errors),
        pass_note=note,
        run=run,
        gateway=gateway,
        complete=expected is None or (len(results) >= expected and not errors),
        cancelled=cancelled,
    )


def examples(errors: Sequence[EpisodeResult], most: int = 3) -> list[dict[str, Any]]:
    """The first ``most`` distinct errors (by kind and message), with how often each came."""
    seen: dict[tuple[str | None, str | None], dict[str, Any]] = {}
    for r in sorted(errors, key=lambda r: r.key):
        key = (r.error_kind, r.error)
        if key in seen:
            seen[key]["count"] += 1
        elif len(seen) < most:
            seen[key] = {
                "task": r.task, "seed": r.seed, "attempt": r.attempt, "kind": r.error_kind,
                "error": r.error, "traceback": r.traceback, "count": 1,
                "viewer": viewer_path(r),
            }  # fmt: skip
    return list(seen.values())


def viewer_path(r: EpisodeResult) -> str | None:
    """The dashboard's viewer of the episode's recording (a path on the gateway)."""
    if not (r.run and r.session_id and r.trajectory):
        return None
    return f"/dashboard/runs/{r.run}/sessions/{r.session_id}"


def write(out: Path, summary: EvalSummary, results: Sequence[EpisodeResult]) -> None:
    out = Path(out)
    summary.out = str(out)
    (out / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n")
    plotted = plot(out / PLOT, summary)
    (out / "report.md").write_text(markdown(summary, results, PLOT if plotted else None))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _ci(ci: Sequence[float]) -> str:
    return f"[{_pct(ci[0])}, {_pct(ci[1])}]"


def headline(s: EvalSummary) -> list[tuple[str, str]]:
    """The summary's key figures as (label, value) rows: one list for the CLI and the report."""
    rows = [
        ("episodes", f"{s.episodes} ({s.scored} scored, {s.errors} errors, {s.skipped} skipped)"),
        (
            "success rate",
            f"{_pct(s.success_rate)}  95% CI {_ci(s.ci95)}" if s.scored else "- (none scored)",
        ),
        *(
            [("strict success", f"{_pct(s.strict_success_rate)} (fully done: score 1)")]
            if s.strict_success_rate != s.success_rate
            else []
        ),
        ("mean score", f"{s.mean_score:.3f}"),
        ("mean steps", f"{s.mean_steps:.1f}"),
        ("wall time", f"{s.wall_s:.1f} s ({s.episodes_per_min:.1f} episodes/min)"),
    ]
    if s.pass_at_k:
        rows.append(("pass@k", "  ".join(f"k={k}: {v:.3f}" for k, v in s.pass_at_k.items())))
        rows.append(("pass^k", "  ".join(f"k={k}: {v:.3f}" for k, v in s.pass_hat_k.items())))
    elif s.pass_note:
        rows.append(("pass@k", s.pass_note))
    if s.tokens:
        rows.append(("tokens", ", ".join(f"{k} {v}" for k, v in s.tokens.items())))
    if s.errors:
        kinds = ", ".join(f"{k}: {v}" for k, v in s.error_kinds.items())
        rows.append(("errors (not failures)", f"{s.errors} ({kinds})"))
    if s.cancelled:
        rows.append(("note", "cancelled: run it again to finish"))
    if s.run:
        rows.append(("run", f"{s.run} (palaestra runs; export, replay, regrade take it)"))
    return rows


def markdown(s: EvalSummary, results: Sequence[EpisodeResult], plot_file: str | None) -> str:
    lines = [f"# Evaluation: {s.agent} on {s.suite}", "", "| | |", "| --- | --- |"]
    lines += [f"| {label} | {value} |" for label, value in headline(s)]
    for by, table in s.tables.items():
        if len(table) < 1 or (by in ("suite", "kind") and list(table) == ["-"]):
            continue
        head = f"| {by} | n | success | 95% CI | strict success | mean score |"
        lines += ["", f"## By {by}", "", head, "| --- | ---: | ---: | --- | ---: | ---: |"]
        for value, row in table.items():
            lines.append(
                f"| {value} | {row['n']} | {_pct(row['success_rate'])} | {_ci(row['ci95'])} "
                f"| {_pct(row.get('strict_success_rate', row['success_rate']))} "
                f"| {row['mean_score']:.3f} |"
            )
    if plot_file:
        lines += ["", f"![success rate]({plot_file})"]
    errors = [r for r in results if r.status == "error"]
    if errors:
        lines += ["", "## Errors (not agent failures)", ""]
        for ex in s.error_examples:
            more = f" (and {ex['count'] - 1} more like it)" if ex["count"] > 1 else ""
            lines += [f"### {ex['kind']}: {ex['task']} seed {ex['seed']} #{ex['attempt']}{more}"]
            lines += ["", "```", ex["traceback"] or ex["error"] or "", "```", ""]
        lines += [
            f"- {r.task} seed {r.seed} #{r.attempt}: {r.error_kind}: {r.error}" for r in errors[:50]
        ]
    base = (s.gateway or "").rstrip("/")
    lines += [
        "",
        "## Episodes",
        "",
        "| task | seed | attempt | outcome | score | steps | trajectory |",
    ]
    lines.append("| --- | ---: | ---: | --- | ---: | ---: | --- |")
    for r in sorted(results, key=lambda r: r.key):
        ok = {"ok": "yes" if r.success else "no"}.get(r.status, r.status)
        if r.status == "error":
            ok = f"error ({r.error_kind})"
        view = viewer_path(r)
        link = f"[view]({base}{view})" if view else ""
        lines.append(
            f"| {r.task} | {r.seed} | {r.attempt} | {ok} | {r.score:.2f} | {r.steps} | {link} |"
        )
    return "\n".join(lines) + "\n"


def plot(path: Path, s: EvalSummary) -> bool:
    """Success by difficulty (by family when no task names one); False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    by = "difficulty" if set(s.tables.get("difficulty", {})) - {"-"} else "family"
    table: dict[str, Any] = s.tables.get(by, {})
    if not table:
        return False
    names = list(table)
    rates = [table[n]["success_rate"] for n in names]
    # rounded bounds may sit a hair inside the rate; matplotlib refuses negative error bars
    low = [max(0.0, r - table[n]["ci95"][0]) for n, r in zip(names, rates, strict=True)]
    high = [max(0.0, table[n]["ci95"][1] - r) for n, r in zip(names, rates, strict=True)]
    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(names) + 2), 3.2), dpi=100)
    ax.bar(names, rates, yerr=[low, high], capsize=4, color="#4c72b0")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("success rate (95% CI)")
    ax.set_title(f"{s.agent} on {s.suite}: success by {by}")
    for i, n in enumerate(names):
        ax.text(i, 0.02, f"n={table[n]['n']}", ha="center", color="white", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def compare_markdown(result: dict[str, Any], a: str, b: str) -> str:
    lines = [
        f"# {b} vs {a}",
        "",
        f"- paired episodes: {result['pairs']} ({result['unpaired']} without a pair left out)",
        f"- success: {_pct(result['success_a'])} -> {_pct(result['success_b'])} "
        f"(only A: {result['only_a']}, only B: {result['only_b']}, exact McNemar "
        f"p = {result['mcnemar_p']:.4g})",
        f"- mean score difference (B - A): {result['mean_score_diff']:+.3f} "
        f"(paired permutation p = {result['score_permutation_p']:.4g})",
        "",
        "| task | n | A | B | B - A |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for task, row in sorted(result["per_task"].items(), key=lambda kv: kv[1]["diff"]):
        lines.append(
            f"| {task} | {row['n']} | {_pct(row['a'])} | {_pct(row['b'])} | {row['diff']:+.2f} |"
        )
    return "\n".join(lines) + "\n"


def dump(path: Path, data: Any) -> None:
    Path(path).write_text(json.dumps(data, indent=2, default=str) + "\n")
