"""App synthesis speed: validated tasks per minute, the share dropped, and app reset time.

Reset is what an episode pays to get a synthesized app back to its seeded state: palaestra copies
the session's database from the seeded template (``AppSession.restore``). The baseline, run in
the same process, is what a reset costs without that design: start a fresh app (a new server on
loopback, the database seeded again from the spec, a session opened). Both are timed alone and
again up to their first page served over HTTP on loopback (the home page, which every episode
starts on).

Throughput runs the real pipeline (generation, then execution validation on Chromium: three
oracle runs, a do-nothing run and the mutants per task) over the built-in domains.

Run: ``palaestra bench synth`` or ``python -m palaestra.bench.synth``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import httpx
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from palaestra.bench import harness
from palaestra.bench.harness import console
from palaestra.synth_apps import data
from palaestra.synth_apps.app import APP_COOKIE, AppHost, host, new_key
from palaestra.synth_apps.spec import domain_names, load_spec
from palaestra.synth_apps.variants import make_variant
from palaestra.synthesis.pipeline import synthesize


def measure_reset(domain: str = "train", rounds: int = 30) -> dict[str, list[float]]:
    """Seconds per reset: palaestra's database restore vs starting the app afresh (a new server,
    the database seeded again, a session opened); each then serves its first page."""
    spec = load_spec(domain)
    variant = make_variant(spec, 0)
    key = new_key()  # the apps answer only requests that carry their session's key
    client = httpx.Client(cookies={APP_COOKIE: key})
    session = host().open(spec, variant, 0, key=key)
    out = harness.Timings("restore", "fresh", "restore+page", "fresh+page")
    folder = Path(tempfile.mkdtemp(prefix="palaestra-bench-"))
    for i in range(rounds):
        with out.timed("restore+page"):
            with out.timed("restore"):
                session.restore()
            client.get(host().url(session)).raise_for_status()

        with out.timed("fresh+page"):
            with out.timed("fresh"):
                app = AppHost()
                path = folder / f"fresh-{i}.sqlite"
                data.build(spec, path, i + 1)
                other = app.open(spec, variant, 0, key=key)
                other.template = path
                other.restore()
            client.get(app.url(other)).raise_for_status()
        app.shutdown()
    host().close(session.token)
    return out


def main(
    domains: list[str] | None = None, variants: int = 2, tasks: int = 60, parallel: int = 2
) -> dict[str, Any]:
    domains = domains or domain_names()
    resets = measure_reset()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        job = bar.add_task("synthesize + validate", total=None)

        def show(p: Any) -> None:
            bar.update(
                job,
                completed=p.done,
                total=p.total,
                description=f"{p.phase}: {p.validated} validated, {p.dropped} dropped",
            )

        with tempfile.TemporaryDirectory(prefix="palaestra-bench-suite-") as out:
            report = synthesize(
                domains,
                variants=variants,
                tasks=tasks,
                out=Path(out),
                parallel=parallel,
                on_progress=show,
            )
    ms = {k: harness.ms(v) for k, v in resets.items()}
    checked = report.validated + sum(report.dropped.values())
    dropped_share = sum(report.dropped.values()) / checked if checked else 0.0

    rows = [
        (
            what,
            f"{ms[f'restore{key}']:.2f} ms",
            f"fresh app start {ms[f'fresh{key}']:.1f} ms: "
            f"{harness.ratio(ms[f'fresh{key}'], ms[f'restore{key}'], 0)} faster",
        )
        for what, key in (("app reset, p50", ""), ("app reset + first page, p50", "+page"))
    ]
    rows += [
        ("validated tasks per minute", f"{report.tasks_per_minute:.1f}", "target 60"),
        ("time per validated task", f"{report.seconds_per_task:.2f} s", ""),
        ("tasks validated / generated", f"{report.validated} / {report.generated}", ""),
        (
            "share dropped",
            f"{dropped_share:.1%}",
            ", ".join(f"{k}: {v}" for k, v in report.dropped.items()) or "none",
        ),
    ]
    harness.print_table(
        f"App synthesis ({', '.join(domains)}; {variants} variant(s) each)",
        ("measure", "value", "against"),
        rows,
    )
    return {"reset_ms": ms, "report": report.to_json(), "dropped_share": dropped_share}


if __name__ == "__main__":
    main()
