"""``palaestra synth``: synthesize apps and execution-validated tasks into a suite folder, with
progress as a bar or as JSON lines.

It calls the synthesis service's Python API (:func:`palaestra.synthesis.pipeline.synthesize`)
in this process, its :class:`~palaestra.synthesis.events.Progress` events drawn as they come."""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from palaestra.cli._app import LlmKey, LlmModel, app, console, err_console
from palaestra.synthesis.events import Progress as SynthProgress


class Layout(StrEnum):
    desktop = "desktop"
    mobile = "mobile"


# the command's options, declared apart so that its signature reads as the list it is
Variants = Annotated[
    int, typer.Option(min=1, max=50, help="App variants per domain (layout, theme, seed data)")
]
TaskCount = Annotated[
    int,
    typer.Option(
        "--tasks", min=1, max=5000, help="Tasks to generate; ones that fail validation drop"
    ),
]
SuiteOut = Annotated[
    Path, typer.Option(help="Suite folder to write: suite.json, tasks/*.json, report.json")
]
Domains = Annotated[
    list[str] | None,
    typer.Option(
        "--domain",
        "-d",
        help="App domain to synthesize (repeatable): a built-in name, 'all' for every "
        "built-in domain, or an AppSpec file (.yaml/.json)",
    ),
]
Seed = Annotated[int, typer.Option(help="Seed: the same seed gives the same suite")]
FamilyName = Annotated[
    str,
    typer.Option(help="web: palaestra/web-v0 tasks; mobile: phone tasks on palaestra/mobile-v0"),
]
Layouts = Annotated[
    list[Layout] | None,
    typer.Option(help="Page layout to render apps for (repeatable) \\[default: desktop]"),
]
Parallel = Annotated[int, typer.Option(min=1, max=64, help="Tasks validated at once (browsers)")]
SuiteName = Annotated[
    str | None, typer.Option(help="Suite name \\[default: chosen by the pipeline]")
]
JsonProgress = Annotated[
    bool,
    typer.Option(
        "--json-progress",
        help="Print progress as JSON lines on stdout, the report as the last line (for programs)",
    ),
]
AuthorUrl = Annotated[
    str | None, typer.Option(help="Optional LLM author: an OpenAI-compatible base URL (…/v1)")
]
Ideas = Annotated[
    list[str] | None,
    typer.Option(help="Have the LLM author propose an app spec for this idea (repeatable)"),
]
Reword = Annotated[
    bool, typer.Option(help="Have the LLM author reword instructions (values kept verbatim)")
]


@app.command()
def synth(
    variants: Variants,
    n_tasks: TaskCount,
    out: SuiteOut,
    domain: Domains = None,
    seed: Seed = 0,
    family: FamilyName = "web",
    layout: Layouts = None,
    parallel: Parallel = 2,
    name: SuiteName = None,
    json_progress: JsonProgress = False,
    llm_url: AuthorUrl = None,
    llm_key: LlmKey = None,
    llm_model: LlmModel = "gpt-4o-mini",
    llm_idea: Ideas = None,
    reword: Reword = False,
) -> None:
    """Synthesize apps and execution-validated tasks into a suite folder.

    Only validated tasks are written: the oracle passes, doing nothing fails, reruns agree.

    To use the suite, put the folder's parent on PALAESTRA_SUITE_PATH (os.pathsep-separated).
    """
    domains = _synth_domains(domain or [], json_progress)
    try:
        from palaestra.synthesis import pipeline
    except ImportError as exc:
        _synth_fail(f"the synthesis pipeline is not available: {exc}", 1, json_progress)
    if family not in ("web", "mobile"):
        _synth_fail(f"--family must be web or mobile, not {family!r}", 2, json_progress)
    kwargs: dict[str, Any] = {
        "family": family,
        "variants": variants,
        "tasks": n_tasks,
        "out": out,
        "seed": seed,
        "layouts": tuple(item.value for item in layout or [Layout.desktop]),
        "parallel": parallel,
        "name": name,
    }
    if (llm_idea or reword) and not llm_url:
        _synth_fail("--llm-idea and --reword need --llm-url", 2, json_progress)
    if llm_url:
        from palaestra.synth_apps.llm import LLMAuthor

        author = LLMAuthor(llm_url, llm_key, llm_model)
        domains += _proposed_specs(author, llm_idea or [], out, json_progress)
        kwargs["author"] = author if reword else None
    if not domains:
        _synth_fail(
            "name a domain (--domain) or an idea for the LLM author (--llm-idea)", 2, json_progress
        )
    result = _synthesize(pipeline, domains, kwargs, json_progress).to_json()
    if json_progress:
        _emit({"event": "report", **result})
    else:
        _synth_summary(result)


def _proposed_specs(author: Any, ideas: list[str], out: Path, json_progress: bool) -> list[str]:
    """The app specs the LLM author proposes for the ideas, written as OUT/apps/NAME.yaml (the
    domains that synthesize them)."""
    import yaml

    from palaestra.synth_apps.llm import LLMError
    from palaestra.synth_apps.spec import SpecError

    paths = []
    for idea in ideas:
        try:
            proposed = author.propose_spec(idea)
        except (SpecError, LLMError) as exc:
            _synth_fail(str(exc), 2, json_progress)
        path = out / "apps" / f"{proposed.name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(proposed.model_dump(mode="json", exclude_none=True)))
        paths.append(str(path.resolve()))
    return paths


def _synthesize(
    pipeline: Any, domains: list[str], kwargs: dict[str, Any], json_progress: bool
) -> Any:
    """Run the pipeline with its progress drawn (or as JSON lines): a bad app spec exits 2; any
    other failure is a bug, its traceback shown (and, for programs, an error event, exit 1)."""
    from palaestra.synth_apps.spec import SpecError

    try:
        if json_progress:
            return _synth_json(pipeline, domains, kwargs)
        return _synth_rich(pipeline, domains, kwargs)
    except SpecError as exc:
        _synth_fail(str(exc), 2, json_progress)
    except Exception as exc:
        if not json_progress:
            raise  # a bug: the traceback is what a developer needs
        import traceback

        traceback.print_exc()
        _synth_fail(f"{type(exc).__name__}: {exc}", 1, json_progress)


def _synth_domains(given: list[str], json_progress: bool) -> list[str]:
    """Expand 'all' and refuse unknown domains before any work starts."""
    try:
        from palaestra.synth_apps.spec import domain_names
    except ImportError as exc:
        _synth_fail(f"app synthesis is not available: {exc}", 1, json_progress)
    known = domain_names()
    domains: list[str] = []
    for item in given:
        if Path(item).suffix in (".yaml", ".yml", ".json") and Path(item).is_file():
            domains.append(str(Path(item).resolve()))  # workers load the spec by this path
            continue
        for d in known if item == "all" else [item]:
            if d not in known:
                _synth_fail(
                    f"unknown domain {d!r}; known: {', '.join(known)} (or 'all')", 2, json_progress
                )
            if d not in domains:
                domains.append(d)
    return domains


_emit_lock = threading.Lock()


def _emit(record: dict[str, Any]) -> None:
    # the pipeline may report from several threads; one line must never cut into another
    with _emit_lock:
        sys.stdout.write(json.dumps(record, default=str) + "\n")
        sys.stdout.flush()


def _synth_fail(message: str, code: int, json_progress: bool) -> Any:
    if json_progress:
        _emit({"event": "error", "error": message})
    err_console.print(f"[red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def _synth_json(pipeline: Any, domains: list[str], kwargs: dict[str, Any]) -> Any:
    def on_progress(p: SynthProgress) -> None:
        _emit({"event": "progress", **asdict(p)})

    return pipeline.synthesize(domains, on_progress=on_progress, **kwargs)


def _synth_rich(pipeline: Any, domains: list[str], kwargs: dict[str, Any]) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("validated {task.fields[validated]}  dropped {task.fields[dropped]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as bar:
        tid = bar.add_task("starting", total=None, validated=0, dropped=0)

        def on_progress(p: SynthProgress) -> None:
            bar.update(
                tid,
                description=p.phase,
                completed=p.done,
                total=p.total or None,
                validated=p.validated,
                dropped=p.dropped,
            )

        return pipeline.synthesize(domains, on_progress=on_progress, **kwargs)


def _synth_summary(report: dict[str, Any]) -> None:
    title = f"suite {report.get('suite')} in {report.get('out')}"
    table = Table(title=title, show_header=False)
    table.add_row("generated", str(report.get("generated", 0)))
    table.add_row("validated", str(report.get("validated", 0)))
    dropped = report.get("dropped") or {}
    table.add_row("dropped", str(sum(dropped.values())))
    for reason, count in sorted(dropped.items(), key=lambda kv: -kv[1]):
        table.add_row(f"  {reason}", str(count))
    table.add_row("tasks per minute", f"{report.get('tasks_per_minute', 0):.1f}")
    table.add_row("time per task", f"{report.get('seconds_per_task', 0):.2f} s")
    table.add_row("total time", f"{report.get('seconds', 0):.1f} s")
    console.print(table)
