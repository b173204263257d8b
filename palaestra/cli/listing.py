"""What is installed: ``palaestra envs``, ``families``, ``tasks``, and ``check`` of an env."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from palaestra.cli._app import AsJson, app, console


@app.command()
def envs(
    as_json: AsJson = False,
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
    as_json: AsJson = False,
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
