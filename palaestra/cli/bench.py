"""``palaestra bench``: benchmarks that print speed ratios against a baseline."""

from __future__ import annotations

from typing import Annotated

import typer

from palaestra.cli._app import console

bench_app = typer.Typer(help="Benchmarks that print speed ratios against a baseline.")


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
