"""The ``palaestra`` command line.

Commands import what they run inside their own function: ``palaestra --help`` and a short
command must not pay for importing the gateway, Ray or a browser driver.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import asdict, is_dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperCommand

app = typer.Typer(
    help="palaestra: agent environments behind one Gymnasium API and an HTTP gateway.",
    no_args_is_help=True,
    add_completion=False,
)
bench_app = typer.Typer(help="Benchmarks that print speed ratios against a baseline.")
app.add_typer(bench_app, name="bench")
usersim_app = typer.Typer(help="The user-simulator family: its simulated user, measured.")
app.add_typer(usersim_app, name="usersim")
console = Console()
err_console = Console(stderr=True)


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="Address to bind (loopback unless API keys are set)")
    ] = None,
    port: Annotated[int | None, typer.Option(help="TCP port \\[default: 8000]")] = None,
    workers: Annotated[
        int | None, typer.Option(help="Worker processes hosting env sessions \\[default: 2]")
    ] = None,
    backend: Annotated[
        str | None, typer.Option(help="Worker backend: local, docker or ray \\[default: local]")
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(help="Ray backend: the cluster's address (host:port); none starts one here"),
    ] = None,
    api_key: Annotated[
        list[str] | None,
        typer.Option(
            help="API key allowed to use the gateway (repeatable; visible to every local user "
            "in /proc: prefer --api-key-file or PALAESTRA_API_KEYS)"
        ),
    ] = None,
    api_key_file: Annotated[
        Path | None, typer.Option(help="File of API keys, one a line (PALAESTRA_API_KEYS_FILE)")
    ] = None,
    runs_dir: Annotated[Path | None, typer.Option(help="Where trajectories are recorded")] = None,
    no_record: Annotated[bool, typer.Option("--no-record", help="Do not record sessions")] = False,
    config: Annotated[
        Path | None, typer.Option(help="Settings file (YAML or JSON); options given here win")
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
) -> None:
    """Start the gateway and its workers (settings: file < PALAESTRA_* variables < options)."""
    from palaestra.server.runner import serve as run
    from palaestra.server.settings import Settings

    if backend not in (None, "local", "docker", "ray"):
        raise typer.BadParameter(
            f"unknown backend {backend!r}: 'local', 'docker' or 'ray'", param_hint="--backend"
        )
    values: dict[str, object] = {}
    if config is not None:
        import yaml

        values.update(yaml.safe_load(config.read_text()) or {})
    given = {
        "host": host,
        "port": port,
        "workers": workers,
        "runs_dir": runs_dir,
        "backend": backend,
        "ray_address": ray_address,
    }
    values.update({k: v for k, v in given.items() if v is not None})
    if api_key:
        err_console.print(
            "[yellow]warning:[/] --api-key puts the key on the command line, which every local "
            "user can read (/proc/<pid>/cmdline, ps); use --api-key-file or PALAESTRA_API_KEYS"
        )
        values["api_keys"] = api_key
    if api_key_file is not None:
        values["api_keys_file"] = api_key_file
    if no_record:
        values["record"] = False
    settings = Settings.from_env(**values)
    console.print(
        f"[bold]palaestra[/] gateway on http://{settings.host}:{settings.port} "
        f"({settings.workers} {settings.backend} workers, "
        f"auth {'on' if settings.api_keys else 'off'})"
    )
    run(settings, log_level=log_level)


@app.command()
def envs(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """List registered environments."""
    from palaestra import registry

    specs = registry.specs()
    if as_json:
        print(json.dumps([s.to_json() for s in specs.values()], indent=1))
        return
    table = Table("id", "family", "description")
    for s in specs.values():
        table.add_row(s.id, s.family + (" (fixture)" if s.fixture else ""), s.description)
    console.print(table)


@app.command()
def families(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """List the installed env families: envs, suites, policies, check kinds, availability."""
    from palaestra.family import families as installed

    rows: list[dict[str, Any]] = []
    for fam in installed().values():
        reason = fam.unavailable()
        rows.append(
            {
                "family": fam.name,
                "envs": [e.id for e in fam.envs],
                "suites": [s.name for s in fam.suites],
                "policies": fam.policy_names() if reason is None else [],
                "checks": list(fam.checks),
                "available": reason is None,
                "reason": reason,
            }
        )
    if as_json:
        print(json.dumps(rows, indent=1))
        return
    table = Table("family", "envs", "suites", "policies", "status")
    for r in rows:
        status = "[green]available[/]" if r["available"] else f"[red]unavailable:[/] {r['reason']}"
        table.add_row(
            r["family"],
            ", ".join(r["envs"]),
            ", ".join(r["suites"]),
            ", ".join(r["policies"]),
            status,
        )
    console.print(table)


@app.command()
def tasks(
    suite: Annotated[str | None, typer.Argument(help="Suite name; all suites if omitted")] = None,
) -> None:
    """List suites, or the tasks of one suite (as an agent sees them)."""
    from palaestra import tasks as task_mod

    if suite is None:
        table = Table("suite", "tasks", "description")
        for name in task_mod.suite_names():
            s = task_mod.get_suite(name)
            table.add_row(name, str(len(s.tasks)), s.description)
    else:
        table = Table("task", "env", "max steps", "instruction")
        for t in task_mod.get_suite(suite).tasks:
            table.add_row(f"{suite}/{t.id}", t.env, str(t.max_steps), t.instruction)
    console.print(table)


@app.command()
def check(
    env_id: Annotated[
        str | None, typer.Argument(help="Env id; every registered env if omitted")
    ] = None,
) -> None:
    """Run Gymnasium's env checker and a gateway round-trip on an env."""
    from palaestra import registry
    from palaestra.conformance import check_env_local, check_env_remote

    ids = [env_id] if env_id else list(registry.specs())
    failed = 0
    for eid in ids:
        for name, fn in (
            ("gymnasium checker", check_env_local),
            ("gateway round-trip", check_env_remote),
        ):
            try:
                fn(eid)
                console.print(f"[green]ok[/]   {eid}: {name}")
            except Exception as exc:
                failed += 1
                console.print(f"[red]FAIL[/] {eid}: {name}: {type(exc).__name__}: {exc}")
    if failed:
        raise typer.Exit(1)


@app.command()
def validate(
    suite: Annotated[str, typer.Argument(help="Suite to validate (a registered or found one)")],
    adversaries: Annotated[
        bool, typer.Option(help="Play the family's adversaries too (each must fail)")
    ] = True,
    drop: Annotated[
        bool, typer.Option(help="Delete the task files that fail (suites on the suite path)")
    ] = True,
    report: Annotated[
        Path | None,
        typer.Option(help="Where to write the report \\[default: the suite's report.json]"),
    ] = None,
    record: Annotated[
        bool,
        typer.Option(
            "--record",
            help="Re-validate every candidate of a shipped suite and write its recorded run "
            "(what a stale-record test asks for)",
        ),
    ] = False,
    against_record: Annotated[
        bool,
        typer.Option(
            "--against-record",
            help="Re-validate every candidate of a shipped suite and fail where a verdict "
            "differs from its recorded run, or the record is stale (CI)",
        ),
    ] = False,
) -> None:
    """Execution-validate a suite with its family's ``validate_suite`` (oracle, do-nothing,
    mutants, adversaries): print a table, drop the tasks that fail, write the report."""
    from palaestra import tasks as task_mod
    from palaestra.family import family as family_of
    from palaestra.resolve import resolve

    chosen = task_mod.get_suite(suite).tasks
    if record or against_record:
        _recorded_run(suite, chosen, write=record)
        return
    by_family: dict[str, list[Any]] = {}
    for t in chosen:
        by_family.setdefault(t.family, []).append(t)
    results: dict[str, dict[str, Any]] = {}
    for name, group in by_family.items():
        fam = family_of(name)
        if not fam.validation:
            err_console.print(f"[red]family {name!r} has no validation (Family.validation)[/]")
            raise typer.Exit(2)
        try:
            results.update(resolve(fam.validation)(group, adversaries=adversaries)["tasks"])
        except ValueError as exc:  # tasks this family's validation does not cover
            err_console.print(f"[red]{name}: {exc}[/]")
            raise typer.Exit(2) from None
    shown = sorted({a for r in results.values() for a in r.get("adversaries", {})})
    table = Table("task", "oracle", "noop", "mutants", *shown, "verdict", title=suite)
    for tid, r in sorted(results.items()):
        advs = r.get("adversaries", {})
        mutants = r.get("mutants", {})
        table.add_row(
            tid,
            " ".join(f"{x:g}" for x in r.get("oracle_scores", [])),
            "" if r.get("noop_score") is None else f"{r['noop_score']:g}",
            f"{sum(1 for v in mutants.values() if v < 1)}/{len(mutants)} fail",
            *[_adversary_cell(advs.get(a)) for a in shown],
            "[green]ok[/]" if r["validated"] else f"[red]{(r.get('reason') or '')[:60]}[/]",
        )
    console.print(table)
    failed = sorted(tid for tid, r in results.items() if not r["validated"])
    folder = task_mod.suite_folder(suite)
    if drop and folder is not None:
        for tid in failed:
            (folder / "tasks" / f"{tid}.json").unlink(missing_ok=True)
    out = report or (
        folder / "report.json" if folder is not None else Path(f"{suite}.validation.json")
    )
    previous = json.loads(out.read_text()) if out.exists() else {}
    previous["validation"] = {
        "total": len(results),
        "validated": len(results) - len(failed),
        "dropped": failed if drop and folder is not None else [],
        "failed": failed,
        "tasks": results,
    }
    out.write_text(json.dumps(previous, indent=1, default=str))
    console.print(
        f"{len(results) - len(failed)}/{len(results)} validated; "
        f"{len(failed)} failed{' and dropped' if drop and folder is not None and failed else ''}; "
        f"report: {out}"
    )


def _recorded_run(suite: str, shipped: list[Any], *, write: bool) -> None:
    """A shipped suite's recorded validation, written anew or checked against a new run.
    A committed suite (its tasks carry their reports, as ``phone`` does) is checked by
    re-validating what it ships; it is re-made by its own module."""
    from palaestra.family import family as family_of
    from palaestra.resolve import resolve
    from palaestra.verifiers.validation import RECORDS, revalidate_committed

    rec = RECORDS.get(suite)
    if rec is None and not write and shipped and all(t.validation for t in shipped):
        with console.status(f"validating every task of {suite} ..."):
            problems = revalidate_committed(shipped)
        if problems:  # a second look: a moved verdict fails twice, a browser hiccup does not
            again = {p.split(":", 1)[0] for p in problems}
            console.print(f"{suite}: validating {sorted(again)} once more")
            problems = revalidate_committed([t for t in shipped if t.id in again])
        for problem in problems:
            console.print(f"[red]{suite}: {problem}[/]")
        console.print(f"{suite}: {len(shipped) - len(problems)}/{len(shipped)} still validate")
        if problems:
            raise typer.Exit(1)
        return
    if rec is None:
        err_console.print(
            f"[red]suite {suite!r} has no recorded validation; recorded: {sorted(RECORDS)}[/]"
        )
        raise typer.Exit(2)
    with console.status(f"validating every candidate of {suite} ..."):
        run = rec.revalidate()
    if write:
        rec.write(run)
        console.print(
            f"{suite}: {run['validated']}/{run['total']} validated in {run['seconds']} s; "
            f"recorded in {rec.path.name}"
        )
        return
    moved = rec.disagreements(run)
    if moved:  # a second look: a moved verdict moves twice, a browser or desktop hiccup does not
        again = {m.split(":", 1)[0] for m in moved}
        console.print(f"{suite}: validating {sorted(again)} once more")
        family = resolve(family_of(rec.family).validation)
        tasks = [t for t in rec.tasks() if t.id in again]
        run["tasks"].update(family(tasks)["tasks"])
        moved = rec.disagreements(run)
    problems = [*rec.stale(), *moved]
    for problem in problems:
        console.print(f"[red]{suite}: {problem}[/]")
    console.print(
        f"{suite}: {run['validated']}/{run['total']} validated in {run['seconds']} s; "
        + ("the record stands" if not problems else f"re-record: {rec.command}")
    )
    if problems:
        raise typer.Exit(1)


def _adversary_cell(result: dict[str, Any] | None) -> str:
    if result is None:
        return ""
    if "actions" in result:
        return f"[red]WON {result.get('reward', 0):.2f}[/]"
    if "score" not in result:  # it could not play, or it only did the task (see its error)
        abstained = str(result.get("error", "")).startswith("AdversaryAbstained")
        return "abstained" if abstained else "[yellow]error[/]"
    return f"{result.get('reward', 0):.2f}"


compare_app = typer.Typer(add_completion=False)


@compare_app.command()
def compare(
    a: Annotated[Path, typer.Argument(help="The baseline run's results folder (eval --out)")],
    b: Annotated[Path, typer.Argument(help="The other run's results folder")],
    out: Annotated[Path | None, typer.Option(help="Also write the comparison as Markdown")] = None,
) -> None:
    """Paired comparison of two evaluations over the episodes (task, seed, attempt) both
    scored: success with the exact McNemar test, score with a paired permutation test, and
    per task. Runs without a paired episode are refused, saying why (exit 2)."""
    from palaestra.errors import PalaestraError
    from palaestra.evals import terminal

    try:
        terminal.compare_runs(a, b, console, out)
    except PalaestraError as exc:
        err_console.print(f"[red]error:[/] {exc.detail}")
        raise typer.Exit(2) from None


class EvalCommand(TyperCommand):
    """``palaestra eval``, where ``eval compare A B`` (and ``eval compare --help``) is the
    ``compare`` command: a suite is never named "compare"."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] == "compare":
            cmd = typer.main.get_command(compare_app)
            with cmd.make_context(f"{ctx.command_path} compare", args[1:]) as sub:
                cmd.invoke(sub)
            ctx.exit(0)
        return list(super().parse_args(ctx, args))


@app.command(name="eval", cls=EvalCommand)
def eval_(
    targets: Annotated[
        list[str],
        typer.Argument(
            help="SUITE, or SUITE/TASK ... of one suite; or `compare A B` (two --out folders, "
            "see `palaestra eval compare --help`)"
        ),
    ],
    agent: Annotated[
        str,
        typer.Option(
            help="oracle | random | noop | a family policy | openai:MODEL | module:Class | "
            "http://HOST:PORT/PATH"
        ),
    ] = "oracle",
    parallel: Annotated[int, typer.Option(help="Episodes in flight")] = 4,
    attempts: Annotated[int, typer.Option(help="Episodes per (task, seed): pass@k, pass^k")] = 1,
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds")] = "0",
    url: Annotated[
        str | None, typer.Option(help="Gateway URL; a local gateway is started if omitted")
    ] = None,
    api_key: Annotated[
        str | None, typer.Option(envvar="PALAESTRA_API_KEY", help="The gateway's API key")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Results folder (default: runs/evals/SUITE-AGENT)")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="openai agents: the OpenAI-compatible endpoint")
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Agent option key=value (repeatable)"),
    ] = None,
    max_steps: Annotated[int | None, typer.Option(help="Lower each task's step budget")] = None,
    limit: Annotated[int | None, typer.Option(help="The first N tasks only")] = None,
    split: Annotated[
        str | None, typer.Option(help="Only this split's tasks (metadata split: train, test)")
    ] = None,
    infra_retries: Annotated[int, typer.Option(help="Retries of infrastructure errors")] = 2,
    record: Annotated[bool, typer.Option(help="Record each episode's trajectory")] = True,
    run: Annotated[
        str | None,
        typer.Option(help="The recorded run's name (docs/data.md) \\[default: eval-SUITE-AGENT-…]"),
    ] = None,
    workers: Annotated[int, typer.Option(help="Worker processes of the local gateway")] = 2,
    allow_errors: Annotated[
        bool,
        typer.Option(help="Exit 0 even when episodes errored (they are still reported)"),
    ] = False,
) -> None:
    """Evaluate an agent on a suite; `palaestra eval compare A B` compares two runs.

    Results are appended per episode to OUT/results.jsonl (rerun to resume; Ctrl-C keeps what
    finished), with OUT/summary.json, OUT/report.md and a plot. Episodes that errored (the
    agent raised, the model endpoint failed, the platform failed) are counted apart from
    failures, shown with their tracebacks, and make the exit status 1 (see --allow-errors);
    Ctrl-C stops after the episodes in flight and exits 130.
    """
    from pydantic import ValidationError

    from palaestra.errors import PalaestraError
    from palaestra.evals import EvalConfig, terminal
    from palaestra.evals.runner import Runner

    try:
        suite, task_ids = terminal.targets(targets)
        options = terminal.parse_options(option or [])
        if base_url:
            options["base_url"] = base_url
        config = EvalConfig(
            suite=suite,
            tasks=task_ids,
            agent=agent,
            agent_options=options,
            parallel=parallel,
            attempts=attempts,
            seeds=[int(s) for s in seeds.split(",") if s.strip()],
            max_steps=max_steps,
            limit=limit,
            split=split,
            infra_retries=infra_retries,
            record=record,
            run=run,
            url=url,
            api_key=api_key,
            out=out,
        )
        shown = Runner(config)
        where = f" (recorded as run {shown.run_name()})" if record else ""
        err_console.print(f"{agent} on {suite}: results in {shown._out()}{where}")
        with _stop_on_ctrl_c() as cancel:
            if url is None:
                from palaestra.client import DEFAULT_URL
                from palaestra.server.runner import gateway_thread
                from palaestra.server.settings import Settings

                err_console.print(f"starting a local gateway with {workers} workers ...")
                with gateway_thread(Settings(workers=workers)) as local:
                    # it records where `palaestra serve` reads: the report links to that one
                    serve = DEFAULT_URL
                    config = config.model_copy(update={"url": local, "viewer_url": serve})
                    summary = terminal.run_with_progress(config, err_console, cancel)
            else:
                summary = terminal.run_with_progress(config, err_console, cancel)
    except (PalaestraError, ValidationError, ValueError) as exc:
        detail = getattr(exc, "detail", None) or str(exc)
        err_console.print(f"[red]error:[/] {detail}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:  # a second Ctrl-C, or one before the first episode
        err_console.print("interrupted")
        raise typer.Exit(130) from None
    terminal.print_summary(summary, console)
    if summary.cancelled:
        raise typer.Exit(130)  # interrupted: what finished is kept, a rerun continues
    if summary.errors and not allow_errors:
        raise typer.Exit(1)


@contextlib.contextmanager
def _stop_on_ctrl_c() -> Iterator[threading.Event]:
    """The first Ctrl-C sets the event (the runner lets the episodes in flight end, then
    summarizes) and says so in one line; a second one interrupts at once."""
    cancel = threading.Event()

    def on_int(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        err_console.print("stopping: episodes in flight are ended (Ctrl-C again to quit now)")

    if threading.current_thread() is not threading.main_thread():
        yield cancel
        return
    previous = signal.signal(signal.SIGINT, on_int)
    try:
        yield cancel
    finally:
        signal.signal(signal.SIGINT, previous)


class Layout(StrEnum):
    desktop = "desktop"
    mobile = "mobile"


@app.command()
def synth(
    variants: Annotated[
        int,
        typer.Option(min=1, max=50, help="App variants per domain (layout, theme, seed data)"),
    ],
    n_tasks: Annotated[
        int,
        typer.Option(
            "--tasks", min=1, max=5000, help="Tasks to generate; ones that fail validation drop"
        ),
    ],
    out: Annotated[
        Path, typer.Option(help="Suite folder to write: suite.json, tasks/*.json, report.json")
    ],
    domain: Annotated[
        list[str] | None,
        typer.Option(
            "--domain",
            "-d",
            help="App domain to synthesize (repeatable): a built-in name, 'all' for every "
            "built-in domain, or an AppSpec file (.yaml/.json)",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed: the same seed gives the same suite")] = 0,
    family: Annotated[
        str,
        typer.Option(
            help="web: palaestra/web-v0 tasks; mobile: phone tasks on palaestra/mobile-v0"
        ),
    ] = "web",
    layout: Annotated[
        list[Layout] | None,
        typer.Option(help="Page layout to render apps for (repeatable) \\[default: desktop]"),
    ] = None,
    parallel: Annotated[
        int, typer.Option(min=1, max=64, help="Tasks validated at once (browsers)")
    ] = 2,
    name: Annotated[
        str | None, typer.Option(help="Suite name \\[default: chosen by the pipeline]")
    ] = None,
    json_progress: Annotated[
        bool,
        typer.Option(
            "--json-progress",
            help="Print progress as JSON lines on stdout, the report as the last line "
            "(for programs, e.g. the gateway's synthesis jobs)",
        ),
    ] = False,
    llm_url: Annotated[
        str | None,
        typer.Option(help="Optional LLM author: an OpenAI-compatible base URL (…/v1)"),
    ] = None,
    llm_key: Annotated[
        str | None, typer.Option(envvar="PALAESTRA_LLM_KEY", help="API key for --llm-url")
    ] = None,
    llm_model: Annotated[str, typer.Option(help="Model name for --llm-url")] = "gpt-4o-mini",
    llm_idea: Annotated[
        list[str] | None,
        typer.Option(help="Have the LLM author propose an app spec for this idea (repeatable)"),
    ] = None,
    reword: Annotated[
        bool, typer.Option(help="Have the LLM author reword instructions (values kept verbatim)")
    ] = False,
) -> None:
    """Synthesize apps and execution-validated tasks into a suite folder.

    Only validated tasks are written: the oracle passes, doing nothing fails, reruns agree.

    To use the suite, put the folder's parent on PALAESTRA_SUITE_PATH (os.pathsep-separated).
    """
    domains = _synth_domains(domain or [], json_progress)
    layouts = tuple(item.value for item in layout or [Layout.desktop])
    try:
        from palaestra.synth_apps import pipeline
        from palaestra.synth_apps.spec import SpecError
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
        "layouts": layouts,
        "parallel": parallel,
        "name": name,
    }
    if (llm_idea or reword) and not llm_url:
        _synth_fail("--llm-idea and --reword need --llm-url", 2, json_progress)
    author = None
    if llm_url:
        from palaestra.synth_apps.llm import LLMAuthor, LLMError

        author = LLMAuthor(llm_url, llm_key, llm_model)
        for idea in llm_idea or []:
            try:
                proposed = author.propose_spec(idea)
            except (SpecError, LLMError) as exc:
                _synth_fail(str(exc), 2, json_progress)
            path = out / "apps" / f"{proposed.name}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            import yaml

            path.write_text(yaml.safe_dump(proposed.model_dump(mode="json", exclude_none=True)))
            domains.append(str(path.resolve()))
        kwargs["author"] = author if reword else None
    if not domains:
        _synth_fail(
            "name a domain (--domain) or an idea for the LLM author (--llm-idea)", 2, json_progress
        )
    try:
        if json_progress:
            report = _synth_json(pipeline, domains, kwargs)
        else:
            report = _synth_rich(pipeline, domains, kwargs)
    except SpecError as exc:
        _synth_fail(str(exc), 2, json_progress)
    except Exception as exc:
        if not json_progress:
            raise  # a bug: the traceback is what a developer needs
        import traceback

        traceback.print_exc()
        _synth_fail(f"{type(exc).__name__}: {exc}", 1, json_progress)
    result = report.to_json()
    if json_progress:
        _emit({"event": "report", **result})
    else:
        _synth_summary(result)


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


def _progress_dict(progress: Any) -> dict[str, Any]:
    if is_dataclass(progress) and not isinstance(progress, type):
        return asdict(progress)
    return dict(vars(progress))


def _synth_json(pipeline: Any, domains: list[str], kwargs: dict[str, Any]) -> Any:
    def on_progress(p: Any) -> None:
        _emit({"event": "progress", **_progress_dict(p)})

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

        def on_progress(p: Any) -> None:
            d = _progress_dict(p)
            bar.update(
                tid,
                description=str(d.get("phase", "")),
                completed=d.get("done", 0),
                total=d.get("total") or None,
                validated=d.get("validated", 0),
                dropped=d.get("dropped", 0),
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


@usersim_app.command("fidelity")
def usersim_fidelity(
    domain: Annotated[
        list[str] | None,
        typer.Option("--domain", "-d", help="Domain (repeatable) \\[default: all]"),
    ] = None,
    tasks_per_domain: Annotated[
        int, typer.Option("--tasks", min=1, help="Tasks per domain from the usersim suite")
    ] = 40,
    seeds: Annotated[int, typer.Option(min=1, help="Seeds (personas) per task and assistant")] = 2,
    persona: Annotated[
        str | None, typer.Option(help="Fix the persona \\[default: by seed]")
    ] = None,
    llm_url: Annotated[
        str | None,
        typer.Option(help="Measure the LLM mode: an OpenAI-compatible base URL (…/v1)"),
    ] = None,
    llm_key: Annotated[
        str | None, typer.Option(envvar="PALAESTRA_LLM_KEY", help="API key for --llm-url")
    ] = None,
    llm_model: Annotated[str, typer.Option(help="Model name for --llm-url")] = "gpt-4o-mini",
    out: Annotated[Path | None, typer.Option(help="Also write the report as JSON here")] = None,
    plot: Annotated[Path | None, typer.Option(help="Also draw the report as a PNG here")] = None,
    styles: Annotated[
        bool, typer.Option(help="Also play reworded assistants: success per wording style")
    ] = False,
) -> None:
    """Score the simulated user over scripted assistants: adherence, consistency, invented
    details, premature endings, and each assistant's task success; with ``--styles``, the
    competent and wrong decisions reworded in each style and phrasing bank."""
    from rich.progress import Progress

    from palaestra.envs.usersim import fidelity
    from palaestra.envs.usersim.policies import KINDS
    from palaestra.envs.usersim.world import domain_names
    from palaestra.tasks import get_suite

    names = domain or domain_names()
    unknown = sorted(set(names) - set(domain_names()))
    if unknown:
        raise typer.BadParameter(f"unknown domain(s) {unknown}; domains: {domain_names()}")
    chosen = []
    for name in names:
        in_domain = [t for t in get_suite("usersim").tasks if t.setup["domain"] == name]
        chosen += in_domain[:tasks_per_domain]
    kwargs = {"persona": persona, "llm_url": llm_url, "llm_key": llm_key, "llm_model": llm_model}
    with Progress(console=err_console, transient=True) as bar:
        job = bar.add_task("conversations", total=len(chosen) * len(KINDS) * seeds)
        report = fidelity.measure(chosen, seeds, kwargs, lambda: bar.advance(job))
    table = Table(
        "behaviour", "score", title=f"Simulated-user fidelity ({report.episodes} conversations)"
    )
    table.add_row("[bold]composite behaviour score", f"[bold]{report.composite:.3f}")
    table.add_row("goal adherence (yes/no to proposals)", f"{report.adherence:.3f}")
    table.add_row("constraint consistency", f"{report.consistency:.3f}")
    table.add_row("invented-detail rate (lower is better)", f"{report.invented_rate:.3f}")
    table.add_row("premature-termination rate (lower is better)", f"{report.premature_rate:.3f}")
    for kind, rate in report.success.items():
        table.add_row(f"task success with the {kind} assistant", f"{rate:.3f}")
    console.print(table)
    data = report.to_json()
    if styles:
        reworded = fidelity.measure_styles(chosen, env_kwargs=kwargs)
        table = Table(
            *reworded.header(),
            title=f"Success per wording style ({reworded.episodes} conversations)",
        )
        for row in reworded.table():
            table.add_row(*row)
        console.print(table)
        data["styles"] = reworded.to_json()
    if out is not None:
        out.write_text(json.dumps(data, indent=1))
    if plot is not None:
        fidelity.plot(report, plot)


@usersim_app.command("tau2-fidelity")
def usersim_tau2_fidelity(
    domain: Annotated[
        list[str] | None,
        typer.Option("--domain", "-d", help="retail or telecom (repeatable) \\[default: both]"),
    ] = None,
    tasks_per_domain: Annotated[
        int | None,
        typer.Option("--tasks", min=1, help="Tasks per domain, spread over it \\[default: all]"),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Also write the report as JSON here")] = None,
    failures: Annotated[bool, typer.Option(help="Also list the tasks behind each miss")] = False,
) -> None:
    """Score the symbolic tau2 user over every task: the gold assistant (three seeds and
    reworded), a wrong proposal, an early goodbye, unknowable questions, unread replies and,
    in telecom, whether what it reports about its phone comes from its own tool results."""
    from rich.progress import Progress

    from palaestra.envs.usersim.tau2 import fidelity as tau2_fidelity
    from palaestra.envs.usersim.tau2 import suites as tau2_suites

    names = domain or list(tau2_fidelity.DOMAINS)
    unknown = sorted(set(names) - set(tau2_fidelity.DOMAINS))
    if unknown:
        raise typer.BadParameter(f"unknown domain(s) {unknown}; domains: {tau2_fidelity.DOMAINS}")
    total = sum(min(tasks_per_domain or 10**9, len(tau2_suites.tasks(name))) for name in names)
    with Progress(console=err_console, transient=True) as bar:
        job = bar.add_task("tasks", total=total)
        report = tau2_fidelity.measure(names, tasks_per_domain, on_task=lambda: bar.advance(job))
    table = Table(*report.header(), title=f"tau2 symbolic-user fidelity ({report.seconds:.1f} s)")
    for row in report.rows():
        table.add_row(*row)
    console.print(table)
    if failures:
        for name, d in report.domains.items():
            for kind, ids in d.failures.items():
                console.print(f"[bold]{name} {kind}[/] ({len(ids)}): {', '.join(ids)}")
    if out is not None:
        out.write_text(json.dumps(report.to_json(), indent=1))


class ExportFormat(StrEnum):
    hf = "hf"
    parquet = "parquet"
    chat_jsonl = "chat-jsonl"


RunsDir = Annotated[
    Path | None, typer.Option(help="Where runs are recorded \\[default: $PALAESTRA_HOME/runs]")
]
RUN_HELP = "A run's name (`palaestra runs`) or the results folder of the eval that recorded it"


@app.command()
def runs(
    agent: Annotated[str | None, typer.Option(help="Runs of this agent only")] = None,
    suite: Annotated[str | None, typer.Option(help="Runs of this suite only")] = None,
    limit: Annotated[int, typer.Option(min=1, help="The newest N runs")] = 50,
    runs_dir: RunsDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """List recorded runs, newest first: name, agent, suite, sessions, episodes, success."""
    from palaestra.data import commands

    where = runs_dir or commands.default_runs_dir()
    _data_command(
        lambda: commands.run_runs(
            where, console, agent=agent, suite=suite, limit=limit, as_json=as_json
        )
    )


def _data_command(work: Any) -> None:
    """Run a data command: unknown runs and episodes are errors naming them (exit 2)."""
    from palaestra.errors import PalaestraError

    try:
        code = work()
    except (PalaestraError, ValueError) as exc:
        err_console.print(f"[red]error:[/] {getattr(exc, 'detail', None) or exc}")
        raise typer.Exit(2) from None
    if code:
        raise typer.Exit(code)


@app.command()
def regrade(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    runs_dir: RunsDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """Re-score a run's episodes with today's verifiers (from their end-state snapshots) and
    list every verdict that changed."""
    from palaestra.data import commands

    where = runs_dir or commands.default_runs_dir()
    _data_command(lambda: commands.run_regrade(run, where, console, as_json))


@app.command()
def replay(
    target: Annotated[
        str,
        typer.Argument(
            help="RUN or an eval's results folder (every episode), RUN/SESSION or "
            "RUN/SESSION/EPISODE"
        ),
    ],
    runs_dir: RunsDir = None,
    url: Annotated[
        str | None, typer.Option(help="Gateway URL; a local gateway is started if omitted")
    ] = None,
    api_key: Annotated[
        str | None, typer.Option(envvar="PALAESTRA_API_KEY", help="The gateway's API key")
    ] = None,
    repeat: Annotated[int, typer.Option(min=1, max=100, help="Replays (a determinism report)")] = 1,
) -> None:
    """Re-execute a recorded episode's actions from its seed on a fresh session; report the
    first step where the observation or the end state diverges (exit 1 if any does)."""
    from palaestra.data import commands

    where = runs_dir or commands.default_runs_dir()

    @contextlib.contextmanager
    def gateway() -> Iterator[str]:
        if url is not None:
            yield url
            return
        from palaestra.server.runner import gateway_thread
        from palaestra.server.settings import Settings

        with gateway_thread(Settings(workers=1, record=False)) as local:
            yield local

    _data_command(lambda: commands.run_replay(target, where, console, gateway, api_key, repeat))


@app.command()
def export(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    fmt: Annotated[ExportFormat, typer.Option("--format", help="Output format")],
    out: Annotated[Path, typer.Option(help="Output folder")],
    success_only: Annotated[bool, typer.Option(help="Successful episodes only")] = False,
    min_score: Annotated[float | None, typer.Option(help="Episodes scoring at least this")] = None,
    family: Annotated[str | None, typer.Option(help="Episodes of this family only")] = None,
    runs_dir: RunsDir = None,
) -> None:
    """Export a run as a Hugging Face dataset, Parquet or chat JSONL, with a dataset card."""
    from palaestra.data import commands
    from palaestra.data.export import Filters

    where = runs_dir or commands.default_runs_dir()
    filters = Filters(success_only, min_score, family)
    _data_command(lambda: commands.run_export(run, fmt.value, out, where, console, filters))


@bench_app.command("all")
def bench_all() -> None:
    """Every benchmark: the gateway's transports, each available family's own benchmark (found
    through its Family descriptor), synthesis and the backends, with default sizes."""
    from palaestra.bench.http import main as http
    from palaestra.bench.scale import main as scale
    from palaestra.bench.synth import main as synth
    from palaestra.family import families as installed
    from palaestra.resolve import resolve

    http()
    for fam in installed().values():
        reason = fam.unavailable()
        if not fam.bench:
            continue
        if reason is not None:
            console.print(f"[yellow]skipped[/] {fam.name} benchmark: {reason}")
            continue
        console.rule(f"{fam.name} benchmark")
        resolve(fam.bench)()
    synth()
    scale()
    for name in ("eval", "validation", "data", "dashboard", "fidelity", "tau2"):
        console.rule(f"{name} benchmark")
        resolve(f"palaestra.bench.{name}:main")()


@bench_app.command("http")
def bench_http(
    steps: Annotated[int, typer.Option(help="Timed steps per transport")] = 5000,
    rounds: Annotated[int, typer.Option(help="Interleaved rounds")] = 5,
    openenv: Annotated[bool, typer.Option(help="Include the OpenEnv baseline")] = True,
) -> None:
    """Step latency: in-process vs REST vs WebSocket vs an OpenEnv server."""
    from palaestra.bench.http import main

    main(steps=steps, rounds=rounds, openenv=openenv)


@bench_app.command("eval")
def bench_eval(
    workers: Annotated[int, typer.Option(help="Worker processes of the gateway")] = 2,
    rounds: Annotated[int, typer.Option(help="Rounds per measurement (best kept)")] = 3,
    model_s: Annotated[float, typer.Option(help="Seconds per call of the model stub")] = 1.0,
) -> None:
    """The eval runner: MiniWoB oracle episodes/min at N = 1..8, overhead against a bare
    RemoteEnv loop, episodes in flight at N = 32 with a slow model."""
    from palaestra.bench.eval import main

    main(workers=workers, rounds=rounds, model_s=model_s)


@bench_app.command("web")
def bench_web(
    resets: Annotated[int, typer.Option(help="Timed resets per task")] = 3,
    steps: Annotated[int, typer.Option(help="Timed no-op steps per reset")] = 3,
) -> None:
    """MiniWoB reset/step: palaestra through the gateway vs BrowserGym in-process."""
    from palaestra.bench.web import main

    main(resets=resets, steps=steps)


@bench_app.command("synth")
def bench_synth(
    domain: Annotated[
        list[str] | None, typer.Option(help="Domains to synthesize (repeatable) \\[default: all]")
    ] = None,
    variants: Annotated[int, typer.Option(help="Variants per domain")] = 2,
    tasks: Annotated[int, typer.Option(help="Validated tasks wanted")] = 60,
    parallel: Annotated[int, typer.Option(help="Validation threads")] = 2,
) -> None:
    """Synthesis: validated tasks per minute, share dropped, app reset vs a fresh app start."""
    from palaestra.bench.synth import main

    main(domains=domain, variants=variants, tasks=tasks, parallel=parallel)


@bench_app.command("validation")
def bench_validation(
    family: Annotated[
        list[str] | None, typer.Option(help="Families to measure (repeatable) \\[default: web]")
    ] = None,
    tasks: Annotated[int, typer.Option(help="Validated tasks wanted per run")] = 40,
) -> None:
    """Execution validation with adversaries vs without: s/task, ratio, tasks per minute."""
    from palaestra.bench.validation import main

    main(families=family, tasks=tasks)


@bench_app.command("mobile")
def bench_mobile(
    resets: Annotated[int, typer.Option(help="Timed resets (each followed by 4 steps)")] = 10,
) -> None:
    """Phone reset/step: embedded in-process and through the gateway, beside Appium."""
    from palaestra.bench.mobile import main

    main(resets=resets)


@bench_app.command("cad")
def bench_cad(
    resets: Annotated[int, typer.Option(help="Timed resets (one per part family)")] = 8,
) -> None:
    """CAD: step p50 per action kind, IoU, render and reset time; semantic actions vs scripts."""
    from palaestra.bench.cad import main

    main(resets=resets)


@bench_app.command("computer")
def bench_computer(
    resets: Annotated[int, typer.Option(help="Timed resets (each followed by a few steps)")] = 10,
) -> None:
    """Desktop sandbox: reset, GUI and code steps, memory; fresh sandbox vs the reset path."""
    from palaestra.bench.computer import main

    main(resets=resets)


@bench_app.command("scale")
def bench_scale(
    starts: Annotated[int, typer.Option(help="Timed session starts per backend")] = 20,
    steps: Annotated[int, typer.Option(help="Timed steps per backend")] = 500,
    backends: Annotated[
        bool, typer.Option(help="Compare the local and Ray backends (two workers each)")
    ] = True,
    routing: Annotated[
        bool, typer.Option(help="Time steps while one gateway holds 100 to max-sessions sessions")
    ] = True,
    max_sessions: Annotated[
        int, typer.Option(help="Live sessions the routing measurement grows to")
    ] = 20_000,
) -> None:
    """Backends side by side (local processes vs Ray actors on a two-node cluster), then the
    gateway's step latency as the live sessions it holds grow to 20,000."""
    from palaestra.bench.scale import main

    main(starts=starts, steps=steps, backends=backends, routing=routing, max_sessions=max_sessions)


@bench_app.command("data")
def bench_data(
    steps: Annotated[int, typer.Option(help="Timed WebSocket steps per round")] = 1500,
    episodes: Annotated[int, typer.Option(help="Episodes in the exported run")] = 200,
) -> None:
    """Recording overhead on a WebSocket step, and export rate per format."""
    from palaestra.bench.data import main

    main(steps=steps, episodes=episodes)


@bench_app.command("dashboard")
def bench_dashboard() -> None:
    """The live dashboard with 200 stepping sessions: render time and the gateway CPU it costs."""
    from palaestra.bench.dashboard import main

    main()


@bench_app.command("fidelity")
def bench_fidelity(
    steps: Annotated[int, typer.Option(help="Timed steps per transport and round")] = 2000,
) -> None:
    """Structured observation fields against JSON text, over REST and WebSocket."""
    from palaestra.bench.fidelity import main

    main(steps=steps)


@bench_app.command("usersim")
def bench_usersim(
    episodes: Annotated[int, typer.Option(help="Timed episodes per domain")] = 20,
) -> None:
    """User simulator: reset and step in-process vs through the gateway, sessions per worker."""
    from palaestra.bench.usersim import main

    main(episodes=episodes)


@bench_app.command("tau2")
def bench_tau2(
    llm_ms: Annotated[
        float, typer.Option(help="What one model call of an LLM user costs, in ms")
    ] = 1000.0,
    sample: Annotated[int, typer.Option(help="Episodes per suite through the gateway")] = 10,
) -> None:
    """tau2-bench: reset/step in-process vs gateway; a full gold pass vs an LLM user's calls."""
    from palaestra.bench.tau2 import main

    main(llm_ms=llm_ms, sample=sample)


if __name__ == "__main__":
    app()
