"""``palaestra usersim``: the simulated user's fidelity reports (usersim's and tau2's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from palaestra.cli._app import LlmKey, LlmModel, console, err_console

usersim_app = typer.Typer(help="The user-simulator family: its simulated user, measured.")

# the options both fidelity commands take (an unknown domain is refused with the list of them)
Domains = Annotated[
    list[str] | None, typer.Option("--domain", "-d", help="Domain (repeatable) \\[default: all]")
]
JsonReport = Annotated[Path | None, typer.Option(help="Also write the report as JSON here")]


@usersim_app.command("fidelity")
def usersim_fidelity(
    domain: Domains = None,
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
    llm_key: LlmKey = None,
    llm_model: LlmModel = "gpt-4o-mini",
    out: JsonReport = None,
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
    domain: Domains = None,
    tasks_per_domain: Annotated[
        int | None,
        typer.Option("--tasks", min=1, help="Tasks per domain, spread over it \\[default: all]"),
    ] = None,
    out: JsonReport = None,
    failures: Annotated[bool, typer.Option(help="Also list the tasks behind each miss")] = False,
) -> None:
    """Score the symbolic tau2 user over every task: the gold assistant (three seeds and
    reworded), a wrong proposal, an early goodbye, unknowable questions, unread replies and,
    in telecom, whether what it reports about its phone comes from its own tool results
    (domains: retail, telecom)."""
    from rich.progress import Progress

    from palaestra.envs.tau2 import fidelity as tau2_fidelity
    from palaestra.envs.tau2 import suites as tau2_suites

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
